#include "ditto/ops/detail/op_util.h"

#include <algorithm>

#include "ditto/ops/detail/cpu_kernels.h"

namespace ditto::detail {

void require_sparse_support(const char* op) {
  const OpRecord* record = find_op_record(op);
  DITTO_CHECK(
      record == nullptr || record->sparse,
      TypeError,
      op,
      "got a sparse tensor (layout torch.sparse_coo), which this op does not "
      "take: convert it with to_dense() first (`ditto ops` lists the ops "
      "that take sparse tensors)");
}

void check_devices(const char* op, const std::vector<const Tensor*>& inputs) {
  Device device;
  for (const Tensor* t : inputs) {
    if (t->defined() && !t->is_cpu()) {
      device = t->device();
      break;
    }
  }
  const OpRecord* record = find_op_record(op); // one lookup, as the ops run
  DITTO_CHECK(
      record != nullptr &&
          std::find(
              record->devices.begin(), record->devices.end(), device.type) !=
              record->devices.end(),
      NotImplementedError,
      op,
      "no kernel on ",
      device,
      " for this op (`ditto ops` lists the ops that have one); copy the "
      "tensors to the CPU with .cpu() to run it there");
  if (record->mixes_devices) {
    return;
  }
  for (const Tensor* t : inputs) {
    if (!t->defined() || t->device() == device ||
        (t->is_cpu() && t->dim() == 0)) {
      continue;
    }
    throw_error<ValueError>(
        op,
        "expected all tensors to be on the same device, but found at least "
        "two devices, ",
        device,
        " and ",
        t->device());
  }
}

void OpScope::finish(
    std::span<const Tensor> outs,
    autograd::BackwardFn backward,
    bool view) {
  // A write is counted when anyone else can see the storage (a view, a
  // tensor saved for backward): a tensor nobody shares cannot be checked
  // against, so fresh tensors start at version 0 after their factory's
  // fill, as in PyTorch. Counting more often is always safe.
  if (kind_ == kInplace && !outs[0].impl()->is_sparse() &&
      outs[0].storage().use_count() > 1) {
    outs[0].storage()->bump_version();
    // What the backward saved of the written tensor is its new value.
    for (const autograd::SavedTensor& st : saved_) {
      if (st.is_of(outs[0])) {
        st.restamp();
      }
    }
  }
  if (needs_grad_) {
    if (!backward) {
      std::string op = name_;
      backward = [op](const autograd::GradList&) -> autograd::GradList {
        detail::throw_error<ValueError>(
            op.c_str(), "the derivative for '", op, "' is not implemented");
      };
    }
    autograd::NodeBuilder::record(
        name_, inputs_, outs, std::move(backward), saved_, kind_ == kInplace);
    if (view && outs[0].defined()) {
      autograd::AutogradMeta& m = autograd::ensure_meta(outs[0]);
      m.is_view = true;
      m.view_version = outs[0].storage()->version();
    }
  }
  if (frame_.outermost() && trace::enabled()) {
    std::vector<Tensor> ins;
    ins.reserve(inputs_.size());
    for (const Tensor* t : inputs_) {
      ins.push_back(*t);
    }
    std::vector<Tensor> results(outs.begin(), outs.end());
    trace::record({name_, trace::current_phase(), ins, results});
  }
}

bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.storage()->data() == b.storage()->data();
}

bool same_view(const Tensor& a, const Tensor& b) {
  return shares_storage(a, b) && a.storage_offset() == b.storage_offset() &&
      a.sizes() == b.sizes() && a.strides() == b.strides() &&
      a.dtype() == b.dtype();
}

void check_no_internal_overlap(const Tensor& t, const char* op) {
  // Taken innermost (smallest stride) first, each dim must step past every
  // element the inner dims reach; otherwise two elements may share memory
  // and the result of writing them would depend on the order (and on the
  // thread count). Strict: a few exotic non-overlapping layouts are refused.
  std::vector<std::pair<int64_t, int64_t>> dims; // stride, size
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (t.sizes()[i] > 1) {
      dims.emplace_back(t.strides()[i], t.sizes()[i]);
    }
  }
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;
  for (auto [stride, size] : dims) {
    DITTO_CHECK(
        stride > reach,
        ValueError,
        op,
        "unsupported operation: more than one element of the written-to "
        "tensor may refer to a single memory location (sizes ",
        shape_str(t.sizes()),
        ", strides ",
        shape_str(t.strides()),
        "); clone() the tensor first");
    reach += (size - 1) * stride;
  }
}

void run_loop(
    const Shape& sizes_in,
    const std::vector<LoopOperand>& operands,
    const std::vector<size_t>& element_sizes,
    const InnerLoop& fn) {
  const size_t k = operands.size();
  DITTO_ASSERT(k >= 1 && k <= 4 && element_sizes.size() == k);
  int64_t numel = 1;
  for (int64_t s : sizes_in) {
    numel *= s;
  }
  if (numel == 0) {
    return;
  }
  // Coalesce: drop size-1 dims and merge neighbours that are contiguous with
  // each other in every operand. Dims are kept innermost first.
  Shape sizes;
  std::vector<Shape> strides(k);
  for (int64_t d = int64_t(sizes_in.size()) - 1; d >= 0; --d) {
    if (sizes_in[d] == 1) {
      continue;
    }
    bool merge = !sizes.empty();
    for (size_t j = 0; merge && j < k; ++j) {
      merge = operands[j].strides[d] == strides[j].back() * sizes.back();
    }
    if (merge) {
      sizes.back() *= sizes_in[d];
    } else {
      sizes.push_back(sizes_in[d]);
      for (size_t j = 0; j < k; ++j) {
        strides[j].push_back(operands[j].strides[d]);
      }
    }
  }
  if (sizes.empty()) {
    sizes.push_back(1);
    for (size_t j = 0; j < k; ++j) {
      strides[j].push_back(0);
    }
  }
  const int64_t ndim = int64_t(sizes.size());
  parallel_for(0, numel, elementwise_grain(numel), [&](int64_t b, int64_t e) {
    // Multi-index of b, innermost first.
    int64_t idx[64];
    DITTO_ASSERT(ndim <= 64);
    int64_t rem = b;
    char* ptrs[4];
    int64_t inner[4];
    for (size_t j = 0; j < k; ++j) {
      ptrs[j] = operands[j].data;
      inner[j] = strides[j][0];
    }
    for (int64_t d = 0; d < ndim; ++d) {
      idx[d] = rem % sizes[d];
      rem /= sizes[d];
      for (size_t j = 0; j < k; ++j) {
        ptrs[j] += idx[d] * strides[j][d] * int64_t(element_sizes[j]);
      }
    }
    int64_t pos = b;
    while (pos < e) {
      int64_t n = std::min(e - pos, sizes[0] - idx[0]);
      fn(ptrs, inner, n);
      pos += n;
      // Advance the multi-index by n (n reaches at most the end of dim 0).
      for (size_t j = 0; j < k; ++j) {
        ptrs[j] += n * strides[j][0] * int64_t(element_sizes[j]);
      }
      idx[0] += n;
      for (int64_t d = 0; d + 1 < ndim && idx[d] == sizes[d]; ++d) {
        idx[d] = 0;
        ++idx[d + 1];
        for (size_t j = 0; j < k; ++j) {
          ptrs[j] += (strides[j][d + 1] - sizes[d] * strides[j][d]) *
              int64_t(element_sizes[j]);
        }
      }
    }
  });
}

void copy_into(const Tensor& dst, const Tensor& src_in, const char* op) {
  Shape bshape = broadcast_shapes(dst.sizes(), src_in.sizes(), op);
  DITTO_CHECK(
      bshape == dst.sizes(),
      ValueError,
      op,
      "source of shape ",
      shape_str(src_in.sizes()),
      " cannot be broadcast to destination of shape ",
      shape_str(dst.sizes()));
  check_no_internal_overlap(dst, op);
  if (same_view(dst, src_in)) {
    return;
  }
  if (dst.device() == src_in.device()) {
    device_slots(dst, op).copy_into(dst, src_in, op);
  } else if (src_in.is_cpu()) {
    // Converted and broadcast on the host in dst's layout, then uploaded.
    Tensor host = new_tensor(dst.sizes(), dst.dtype());
    copy_into(host, src_in, op);
    device_slots(dst, op).upload_into(dst, host, op);
  } else {
    // The device's elements to the host, then on to dst (the CPU, or
    // another device through the upload above).
    copy_into(dst, device_slots(src_in, op).to_host(src_in, op), op);
  }
}

namespace cpu {

// The CPU's copy_into slot: the cast loop over dst's layout. A source
// overlapping the destination in another layout is read from a copy, so
// the result does not depend on the traversal order.
void copy_into(const Tensor& dst, const Tensor& src_in, const char* /*op*/) {
  Tensor src = shares_storage(dst, src_in) ? src_in.clone() : src_in;
  Tensor s = src.expand(dst.sizes());
  auto loop = kernels::kernel_table()
                  .cast[dtype_index(dst.dtype())][dtype_index(src.dtype())];
  DITTO_ASSERT(loop != nullptr);
  run_loop(
      dst.sizes(),
      {{static_cast<char*>(dst.raw_data()), dst.strides()},
       {static_cast<char*>(s.raw_data()), s.strides()}},
      {dst.element_size(), s.element_size()},
      [loop](char* const* p, const int64_t* st, int64_t n) {
        loop(n, p[0], p[1], st[0], st[1]);
      });
}

} // namespace cpu

} // namespace ditto::detail
