// The CPU's table of kernel slots (Note [Device kernel slots]) and its
// slots of the elementwise family, clamp and nll_loss; the others are beside
// their ops (cpu_kernels.h lists where).

#include "ditto/ops/detail/cpu_kernels.h"

#include "ditto/kernels/cpu/kernel_table.h"
#include "ditto/ops/detail/op_util.h"

namespace ditto::detail {

namespace {

const kernels::DeviceKernels& cpu_table() {
  static const kernels::DeviceKernels table = [] {
    kernels::DeviceKernels k;
#define DITTO_CPU_FILL_SLOT(name) k.name = &cpu::name;
    DITTO_CPU_SLOTS(DITTO_CPU_FILL_SLOT)
#undef DITTO_CPU_FILL_SLOT
    return k;
  }();
  return table;
}

// A loop operand of out's shape: t expanded to it, or a 0-dim tensor (a
// scalar), read with stride 0.
LoopOperand operand(const Tensor& t, const Tensor& out) {
  return {
      static_cast<char*>(t.raw_data()),
      t.dim() == 0 ? Shape(size_t(out.dim()), 0) : t.strides()};
}

} // namespace

const kernels::DeviceKernels& device_slots(const Tensor& t, const char* op) {
  return t.is_cpu() ? cpu_table() : kernels::device_kernels(t, op);
}

namespace cpu {

void binary(
    int op,
    int /*code: a device's*/,
    bool /*compare*/,
    bool /*float64*/,
    const Tensor& out,
    const Tensor& a,
    const Tensor& b,
    const char* /*name*/) {
  auto loop = kernels::kernel_table().binary[op][dtype_index(a.dtype())];
  run_loop(
      out.sizes(),
      {{static_cast<char*>(out.raw_data()), out.strides()},
       operand(a, out),
       operand(b, out)},
      {out.element_size(), a.element_size(), b.element_size()},
      [loop](char* const* p, const int64_t* s, int64_t n) {
        loop(n, p[0], p[1], p[2], s[0], s[1], s[2]);
      });
}

void fused(
    int op,
    double s,
    const Tensor& out,
    const Tensor& x,
    const Tensor& y,
    const Tensor* z,
    const char* /*name*/) {
  auto loop = kernels::kernel_table().fused[op][dtype_index(out.dtype())];
  // AddScaled reads no third operand: y stands in its place.
  const Tensor& third = z != nullptr ? *z : y;
  run_loop(
      out.sizes(),
      {{static_cast<char*>(out.raw_data()), out.strides()},
       operand(x, out),
       operand(y, out),
       operand(third, out)},
      {out.element_size(),
       x.element_size(),
       y.element_size(),
       third.element_size()},
      [loop, s](char* const* p, const int64_t* st, int64_t n) {
        loop(n, p[0], p[1], p[2], p[3], st, s);
      });
}

void unary(
    int op,
    int /*code: a device's*/,
    bool /*float64*/,
    const Tensor& out,
    const Tensor& x,
    const char* /*name*/) {
  auto loop = kernels::kernel_table().unary[op][dtype_index(x.dtype())];
  run_loop(
      out.sizes(),
      {{static_cast<char*>(out.raw_data()), out.strides()}, operand(x, out)},
      {out.element_size(), x.element_size()},
      [loop](char* const* p, const int64_t* s, int64_t n) {
        loop(n, p[0], p[1], s[0], s[1]);
      });
}

void where(
    const Tensor& out,
    const Tensor& cond,
    const Tensor& a,
    const Tensor& b,
    const char* /*name*/) {
  auto loop = kernels::kernel_table().where[dtype_index(out.dtype())];
  run_loop(
      out.sizes(),
      {{static_cast<char*>(out.raw_data()), out.strides()},
       operand(cond, out),
       operand(a, out),
       operand(b, out)},
      {out.element_size(), 1, a.element_size(), b.element_size()},
      [loop](char* const* p, const int64_t* s, int64_t n) {
        loop(n, p[0], p[1], p[2], p[3], s);
      });
}

void clamp(
    const Tensor& out,
    const Tensor& x,
    const Tensor* lo,
    const Tensor* hi,
    const char* name) {
  dispatch_dtype(out.dtype(), name, [&]<typename T>() {
    const T lo_v = lo ? *lo->data_ptr<T>() : T(0);
    const T hi_v = hi ? *hi->data_ptr<T>() : T(0);
    auto loop = kernels::kernel_table().clamp[dtype_index(out.dtype())];
    run_loop(
        out.sizes(),
        {{static_cast<char*>(out.raw_data()), out.strides()},
         {static_cast<char*>(x.raw_data()), x.strides()}},
        {out.element_size(), x.element_size()},
        [&](char* const* p, const int64_t* s, int64_t n) {
          loop(
              n,
              p[0],
              p[1],
              s[0],
              s[1],
              lo ? &lo_v : nullptr,
              hi ? &hi_v : nullptr);
        });
  });
}

// nll_loss's CPU slots: one serial pass over the targets in order, each
// term -(x w) in x's dtype, the sum in double (PyTorch's CPU accumulator).
template <typename T, typename F>
void nll_each(const kernels::NllArgs& a, F term) {
  const T* xp = a.x.data_ptr<T>();
  const T* wp = a.weight.defined() ? a.weight.data_ptr<T>() : nullptr;
  const int64_t* tp = a.target.data_ptr<int64_t>();
  for (int64_t i = 0; i < a.target.numel(); ++i) {
    const int64_t c = tp[i];
    T v = 0;
    if (c != a.ignore_index) {
      const T wc = wp ? wp[c] : T(1);
      v = -(xp[((i / a.s) * a.c + c) * a.s + i % a.s] * wc);
    }
    term(i, v);
  }
}

void nll_terms(const kernels::NllArgs& a, const Tensor& out, const char* name) {
  dispatch_dtype(a.x.dtype(), name, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* pp = out.data_ptr<T>();
      nll_each<T>(a, [pp](int64_t i, T v) { pp[i] = v; });
    }
  });
}

double nll_sum(const kernels::NllArgs& a, const char* name) {
  double acc = 0;
  dispatch_dtype(a.x.dtype(), name, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      nll_each<T>(a, [&acc](int64_t, T v) { acc += double(v); });
    }
  });
  return acc;
}

void nll_backward(
    const kernels::NllArgs& a,
    const Tensor& grad_in,
    const Tensor& go,
    double scale,
    const char* name) {
  dispatch_dtype(grad_in.dtype(), name, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* gp = grad_in.data_ptr<T>();
      const T* op = go.defined() ? go.data_ptr<T>() : nullptr;
      const T* wp = a.weight.defined() ? a.weight.data_ptr<T>() : nullptr;
      const int64_t* tp = a.target.data_ptr<int64_t>();
      for (int64_t i = 0; i < a.target.numel(); ++i) {
        const int64_t c = tp[i];
        if (c == a.ignore_index) {
          continue;
        }
        const T wc = wp ? wp[c] : T(1);
        const T gv = op ? op[i] : T(scale);
        gp[((i / a.s) * a.c + c) * a.s + i % a.s] = -(wc * gv);
      }
    }
  });
}

} // namespace cpu

} // namespace ditto::detail
