// The Vulkan kernels of the nn ops (kernels.h): nll_loss, dropout's
// Philox draws, conv2d, max_pool2d, index_select's and index_add_'s rows.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "ditto/device/vulkan/kernels.h"
#include "ditto/device/vulkan/launch.h"
#include "ditto/device/vulkan/runtime.h"

namespace ditto::vulkan {

namespace {

// nll_f32.comp's params.
// The operands, each starting at its buffer's start.
struct NllOperands {
  Tensor x, target, weight;
  explicit NllOperands(const Nll& a)
      : x(based(a.x)), target(based(a.target)), weight(based(a.weight)) {}
};

std::array<int32_t, 11> nll_params(const Nll& a, int mode) {
  require_kernel(
      a.x.dtype() == kFloat32 &&
          (!a.weight.defined() || a.weight.dtype() == kFloat32),
      "nll_loss",
      a.x.dtype(),
      a.x.device());
  check_extent(a.x, "nll_loss");
  check_extent(a.target, "nll_loss");
  const uint64_t ignore = uint64_t(a.ignore_index);
  return {
      int32_t(a.target.numel()),
      int32_t(a.c),
      int32_t(a.s),
      int32_t(uint32_t(ignore)),
      int32_t(uint32_t(ignore >> 32)),
      a.weight.defined() ? 1 : 0,
      mode,
      0,
      0,
      0,
      0};
}

Buffer* weight_buffer(const NllOperands& a, const Tensor& out) {
  return buffer_of(a.weight.defined() ? a.weight : out);
}

} // namespace

void nll_terms(const Nll& args, const Tensor& out, const char* name) {
  auto params = nll_params(args, 0);
  check_based(out);
  if (out.numel() == 0) {
    return;
  }
  const NllOperands a(args);
  run(device_of(out),
      kNllF32,
      {buffer_of(out),
       buffer_of(a.x),
       buffer_of(a.target),
       weight_buffer(a, out)},
      params.data(),
      sizeof params,
      out.numel());
  (void)name;
}

double nll_sum(const Nll& args, const char* name) {
  auto params = nll_params(args, 1);
  require_feature(
      device_info(device_of(args.x), name).float64,
      name,
      args.x.device(),
      "float64, in which the CPU adds the terms");
  if (args.target.numel() == 0) {
    return 0;
  }
  const NllOperands a(args);
  Tensor sum = device_tensor({1}, kFloat64, a.x.device());
  constexpr int64_t kPart = 16384; // terms per dispatch (nll_f32.comp)
  const int64_t count = args.target.numel();
  for (int64_t i0 = 0; i0 < count; i0 += kPart) {
    params[9] = int32_t(i0);
    params[10] = int32_t(std::min(count, i0 + kPart));
    run(device_of(a.x),
        kNllSumF32,
        {buffer_of(a.x),
         buffer_of(a.x),
         buffer_of(a.target),
         weight_buffer(a, a.x),
         buffer_of(sum)},
        params.data(),
        sizeof params,
        1);
  }
  double out = 0;
  download(buffer_of(sum), 0, &out, sizeof out);
  return out;
}

void nll_backward(
    const Nll& args,
    const Tensor& grad_in,
    const Tensor& go_in,
    double scale,
    const char* name) {
  auto params = nll_params(args, 2);
  params[7] = go_in.defined() ? 1 : 0;
  params[8] = std::bit_cast<int32_t>(float(scale)); // a float32 value
  check_extent(grad_in, name);
  check_based(grad_in);
  if (args.target.numel() == 0) {
    return;
  }
  const NllOperands a(args);
  const Tensor go = based(go_in);
  run(device_of(grad_in),
      kNllF32,
      {buffer_of(grad_in),
       buffer_of(go.defined() ? go : grad_in),
       buffer_of(a.target),
       weight_buffer(a, grad_in)},
      params.data(),
      sizeof params,
      a.target.numel());
}

void philox_bernoulli(
    const Tensor& out,
    uint32_t key0,
    uint32_t key1,
    uint64_t first,
    double p,
    const char* name) {
  require_kernel(out.dtype() == kFloat32, name, out.dtype(), out.device());
  check_extent(out, name);
  DITTO_ASSERT(out.is_contiguous() && first % 4 == 0 && p >= 0 && p <= 1);
  if (out.numel() == 0) {
    return;
  }
  // double(v) 2^-53 < p for the integer v < 2^53 is v < ceil(p 2^53).
  const uint64_t threshold = uint64_t(std::ceil(std::ldexp(p, 53)));
  const int32_t params[9] = {
      int32_t(out.numel()),
      int32_t(out.storage_offset()),
      int32_t(key0),
      int32_t(key1),
      int32_t(uint32_t(first)),
      int32_t(uint32_t(first >> 32)),
      0,
      int32_t(uint32_t(threshold >> 32)),
      int32_t(uint32_t(threshold))};
  run(device_of(out),
      kPhiloxF32,
      {buffer_of(out)},
      params,
      sizeof params,
      out.numel());
}

void conv2d(
    ConvKernel kernel,
    const detail::conv::Geom& g,
    int64_t per_chunk,
    const Tensor& out,
    const Tensor& a_in,
    const Tensor& b_in,
    const char* name) {
  require_kernel(out.dtype() == kFloat32, name, out.dtype(), out.device());
  for (const Tensor* t : {&out, &a_in, &b_in}) {
    check_extent(*t, name);
  }
  check_based(out);
  if (out.numel() == 0) {
    return;
  }
  const Tensor a = based(a_in), b = based(b_in);
  const bool fast = kernel == ConvKernel::WeightFast;
  if (fast) {
    kernel = ConvKernel::WeightChunked; // the shader's mode 3 per chunk
  }
  if (kernel == ConvKernel::WeightChunked && g.n == 0) {
    Tensor(out).zero_(); // no chunk: the CPU's zeros
    return;
  }
  const int64_t values[20] = {
      g.n,
      g.c,
      g.h,
      g.w,
      g.o,
      g.kh,
      g.kw,
      g.sh,
      g.sw,
      g.ph,
      g.pw,
      g.dh,
      g.dw,
      g.groups,
      g.oh,
      g.ow,
      g.cg,
      g.og,
      int64_t(kernel),
      std::max<int64_t>(per_chunk, 1)};
  std::array<int32_t, 25> params{};
  for (size_t i = 0; i < 20; ++i) {
    params[i] = int32_t(values[i]);
  }
  params[20] = int32_t(out.numel());
  const Shader& shader = with_fma(out, kConvF32, kConvF32Fma64, name);
  const int dev = device_of(out);
  if (kernel != ConvKernel::WeightChunked) {
    run(dev,
        shader,
        {buffer_of(out), buffer_of(a), buffer_of(b), buffer_of(out)},
        params.data(),
        sizeof params,
        out.numel());
    return;
  }
  // The weight gradient chunk by chunk, each chunk's chain in parts of at
  // most kPart terms (conv_f32.comp).
  constexpr int64_t kPart = 16384;
  const int64_t per = std::max<int64_t>(per_chunk, 1), ohw = g.oh * g.ow;
  const int64_t chunks = (g.n + per - 1) / per, size = out.numel();
  Tensor chain = device_tensor(out.sizes(), kFloat32, out.device());
  // Fast: each chunk's partial kept (each as its own first chunk), then all
  // added into out at once by atomic additions.
  Tensor parts =
      fast ? device_tensor({chunks, size}, kFloat32, out.device()) : Tensor();
  Tensor part = fast ? device_tensor(out.sizes(), kFloat32, out.device()) : out;
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t n0 = c * per;
    const int64_t terms = std::min(per, g.n - n0) * ohw;
    for (int64_t j0 = 0; j0 < terms || j0 == 0; j0 += kPart) {
      const int64_t j1 = std::min(terms, j0 + kPart);
      params[21] = int32_t(n0);
      params[22] = int32_t(j0);
      params[23] = int32_t(j1);
      params[24] =
          (j0 == 0 ? 1 : 0) | (j1 == terms ? 2 : 0) | (n0 == 0 || fast ? 4 : 0);
      run(dev,
          shader,
          {buffer_of(part), buffer_of(a), buffer_of(b), buffer_of(chain)},
          params.data(),
          sizeof params,
          size);
    }
    if (fast) {
      copy_on_device(parts.narrow(0, c, 1).view(out.sizes()), part, name);
    }
  }
  if (fast) {
    Tensor(out).zero_();
    const std::vector<int64_t> to_row_zero(size_t(chunks), 0);
    add_rows(
        out.view({1, size}),
        parts,
        to_row_zero.data(),
        chunks,
        1,
        size,
        false,
        name);
  }
}

namespace {

std::array<int32_t, 17> pool_params(const PoolGeom& g, int mode, int64_t n) {
  std::array<int32_t, 17> params{};
  for (size_t i = 0; i < g.size(); ++i) {
    params[i] = int32_t(g[i]);
  }
  params[13] = mode;
  params[14] = int32_t(n);
  return params;
}

} // namespace

void max_pool2d(
    const PoolGeom& g,
    const Tensor& out,
    const Tensor& indices,
    const Tensor& x_in,
    const char* name) {
  require_kernel(x_in.dtype() == kFloat32, name, x_in.dtype(), x_in.device());
  for (const Tensor* t : {&out, &indices, &x_in}) {
    check_extent(*t, name);
  }
  check_based(out);
  check_based(indices);
  if (out.numel() == 0) {
    return;
  }
  const Tensor x = based(x_in);
  const auto params = pool_params(g, 0, out.numel());
  run(device_of(out),
      kPoolF32,
      {buffer_of(out), buffer_of(indices), buffer_of(x)},
      params.data(),
      sizeof params,
      out.numel());
}

void max_pool2d_backward(
    const PoolGeom& g,
    const Tensor& grad_in,
    const Tensor& indices_in,
    const Tensor& grad_out_in,
    bool deterministic,
    const char* name) {
  require_kernel(
      grad_in.dtype() == kFloat32, name, grad_in.dtype(), grad_in.device());
  for (const Tensor* t : {&grad_in, &indices_in, &grad_out_in}) {
    check_extent(*t, name);
  }
  check_based(grad_in);
  if (grad_out_in.numel() == 0) {
    return;
  }
  const Tensor indices = based(indices_in), grad_out = based(grad_out_in);
  // Every index is checked on the device first; the first bad one (in
  // index order) is named, as on the CPU, and nothing is written.
  const int dev = device_of(grad_in);
  Tensor bad = device_tensor({1}, kInt32, grad_in.device());
  const uint32_t none = UINT32_MAX;
  upload(buffer_of(bad), 0, &none, sizeof none);
  const auto check = pool_params(g, 2, indices.numel());
  run(dev,
      kPoolF32,
      {buffer_of(bad), buffer_of(indices), buffer_of(grad_out)},
      check.data(),
      sizeof check,
      indices.numel());
  uint32_t first = 0;
  download(buffer_of(bad), 0, &first, sizeof first);
  if (first != UINT32_MAX) {
    int64_t value = 0;
    download(
        buffer_of(indices),
        size_t(first) * sizeof(int64_t),
        &value,
        sizeof value);
    DITTO_CHECK(
        false,
        IndexError,
        name,
        "index ",
        value,
        " is out of bounds for a plane of ",
        g[1] * g[2],
        " elements");
  }
  if (!deterministic) {
    const auto params = pool_params(g, 3, indices.numel());
    run(dev,
        kPoolF32,
        {buffer_of(grad_in), buffer_of(indices), buffer_of(grad_out)},
        params.data(),
        sizeof params,
        indices.numel());
    return;
  }
  // Each plane's serial loop in parts (pool_f32.comp).
  constexpr int64_t kPart = 16384;
  auto params = pool_params(g, 1, g[0]);
  const int64_t ohw = g[3] * g[4];
  for (int64_t k0 = 0; k0 < ohw; k0 += kPart) {
    params[15] = int32_t(k0);
    params[16] = int32_t(std::min(ohw, k0 + kPart));
    run(dev,
        kPoolF32,
        {buffer_of(grad_in), buffer_of(indices), buffer_of(grad_out)},
        params.data(),
        sizeof params,
        g[0]);
  }
}

namespace {

// Host integers as an int32 device tensor.
Tensor upload_ints(const std::vector<int32_t>& v, Device device) {
  Tensor t =
      device_tensor({std::max<int64_t>(int64_t(v.size()), 1)}, kInt32, device);
  if (!v.empty()) {
    upload(buffer_of(t), 0, v.data(), v.size() * sizeof(int32_t));
  }
  return t;
}

std::array<int32_t, 9> rows_params(
    int64_t count,
    int64_t len,
    int mode,
    const Tensor& w,
    const Tensor& src,
    int64_t words) {
  return {
      int32_t(count),
      int32_t(len),
      mode,
      0,
      0,
      0,
      0,
      int32_t(w.storage_offset() * words),
      int32_t(src.storage_offset() * words)};
}

} // namespace

void select_rows(
    const Tensor& out,
    const Tensor& src,
    const int64_t* index,
    int64_t n,
    int64_t len,
    const char* name) {
  const size_t es = out.element_size();
  require_kernel(es == 4 || es == 8, name, out.dtype(), out.device());
  check_extent(out, name);
  check_extent(src, name);
  DITTO_ASSERT(out.is_contiguous() && src.is_contiguous());
  const int64_t words = int64_t(es / 4), lw = len * words;
  if (n == 0 || lw == 0) {
    return;
  }
  const Tensor ints =
      upload_ints(std::vector<int32_t>(index, index + n), out.device());
  const auto params = rows_params(n * lw, lw, 0, out, src, words);
  run(device_of(out),
      kRows,
      {buffer_of(out), buffer_of(src), buffer_of(ints)},
      params.data(),
      sizeof params,
      n * lw);
}

void add_rows(
    const Tensor& w,
    const Tensor& src,
    const int64_t* index,
    int64_t n,
    int64_t rows,
    int64_t len,
    bool deterministic,
    const char* name) {
  require_kernel(w.dtype() == kFloat32, name, w.dtype(), w.device());
  check_extent(w, name);
  check_extent(src, name);
  DITTO_ASSERT(w.is_contiguous() && src.is_contiguous());
  if (n == 0 || len == 0) {
    return;
  }
  const int dev = device_of(w);
  if (!deterministic) {
    const Tensor ints =
        upload_ints(std::vector<int32_t>(index, index + n), w.device());
    const auto params = rows_params(n * len, len, 2, w, src, 1);
    run(dev,
        kRows,
        {buffer_of(w), buffer_of(src), buffer_of(ints)},
        params.data(),
        sizeof params,
        n * len);
    return;
  }
  // The plan: the entries grouped by row, in index order within a row (a
  // stable counting sort), then the touched rows and where each one's
  // entries start.
  std::vector<int32_t> start(size_t(rows) + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    ++start[size_t(index[i]) + 1];
  }
  for (int64_t r = 0; r < rows; ++r) {
    start[size_t(r) + 1] += start[size_t(r)];
  }
  std::vector<int32_t> ints(static_cast<size_t>(n));
  std::vector<int32_t> fill(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < n; ++i) {
    ints[size_t(fill[size_t(index[i])]++)] = int32_t(i);
  }
  std::vector<int32_t> touched, offsets;
  int32_t most = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t k = start[size_t(r) + 1] - start[size_t(r)];
    if (k > 0) {
      touched.push_back(int32_t(r));
      offsets.push_back(start[size_t(r)]);
      most = std::max(most, k);
    }
  }
  offsets.push_back(int32_t(n));
  auto params = rows_params(int64_t(touched.size()) * len, len, 1, w, src, 1);
  params[5] = int32_t(ints.size());
  params[6] = int32_t(ints.size() + touched.size());
  ints.insert(ints.end(), touched.begin(), touched.end());
  ints.insert(ints.end(), offsets.begin(), offsets.end());
  const Tensor plan = upload_ints(ints, w.device());
  // Each row's entries in parts (rows.comp).
  constexpr int32_t kPart = 16384;
  for (int32_t k0 = 0; k0 < most; k0 += kPart) {
    params[3] = k0;
    params[4] = k0 + kPart;
    run(dev,
        kRows,
        {buffer_of(w), buffer_of(src), buffer_of(plan)},
        params.data(),
        sizeof params,
        int64_t(touched.size()) * len);
  }
}

} // namespace ditto::vulkan
