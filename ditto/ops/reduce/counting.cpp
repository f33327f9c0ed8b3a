// bincount, histc and embedding_bag: ops that accumulate into bins or bags.

#include <cmath>
#include <optional>
#include <vector>

#include "ditto/determinism/context.h"
#include "ditto/ops/detail/index_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/index.h"
#include "ditto/ops/reduce.h"

namespace ditto {

using detail::Combine;

Tensor bincount(
    const Tensor& input,
    const std::optional<Tensor>& weights_or_none,
    int64_t minlength) {
  const char* name = "bincount";
  const Tensor weights = weights_or_none.value_or(Tensor());
  detail::OpScope op(name, {input, weights});
  DITTO_CHECK(input.defined(), ValueError, name, "undefined tensor");
  DITTO_CHECK(
      input.dim() == 1 && is_integral(input.dtype()),
      ValueError,
      name,
      "only supports 1-d non-negative integral inputs, got a ",
      input.dim(),
      "-d ",
      input.dtype(),
      " tensor");
  DITTO_CHECK(
      minlength >= 0,
      ValueError,
      name,
      "minlength must be >= 0, got ",
      minlength);
  DITTO_CHECK(
      !weights.defined() ||
          (weights.dim() == 1 && weights.numel() == input.numel()),
      ValueError,
      name,
      "weights must be 1-d and have the same length as input (",
      input.numel(),
      "), got ",
      weights.defined() ? shape_str(weights.sizes()) : std::string());
  Tensor idx = detail::new_tensor(input.sizes(), kInt64);
  detail::copy_into(idx, input, name);
  const int64_t* ip = idx.data_ptr<int64_t>();
  const int64_t n = idx.numel();
  int64_t bins = minlength;
  for (int64_t i = 0; i < n; ++i) {
    DITTO_CHECK(
        ip[i] >= 0,
        ValueError,
        name,
        "only supports non-negative inputs, got ",
        ip[i],
        " at position ",
        i);
    DITTO_CHECK(
        ip[i] < INT64_MAX,
        ValueError,
        name,
        "value ",
        ip[i],
        " at position ",
        i,
        " needs more bins than an int64 can count");
    bins = std::max(bins, ip[i] + 1);
  }
  if (!weights.defined()) {
    Tensor out = zeros({bins}, kInt64);
    int64_t* o = out.data_ptr<int64_t>();
    const int64_t one = 1;
    // Integer counts: exact in any order.
    detail::racing(
        n,
        1,
        [&](int64_t i) { return ip[i]; },
        [&](int64_t i, bool atomic) {
          detail::combine_row<Combine::kAdd>(
              o + ip[i], &one, 1, nullptr, nullptr, atomic);
        });
    return op.done(out);
  }
  // float32 weights count in float32, all others in float64 (as PyTorch).
  const Dtype dt = weights.dtype() == kFloat32 ? kFloat32 : kFloat64;
  Tensor w = detail::new_tensor({n}, dt);
  detail::copy_into(w, weights, name);
  Tensor out = zeros({bins}, dt);
  dispatch_dtype(dt, name, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* o = out.data_ptr<T>();
      const T* wp = w.data_ptr<T>();
      detail::scatter_updates(
          are_deterministic_algorithms_enabled(),
          n,
          bins,
          1,
          [&](int64_t i) { return ip[i]; },
          [&](int64_t i, bool atomic) {
            detail::combine_row<Combine::kAdd>(
                o + ip[i], wp + i, 1, nullptr, nullptr, atomic);
          });
    }
  });
  return op.done(out);
}

Tensor histc(const Tensor& input, int64_t bins, double min, double max) {
  const char* name = "histc";
  detail::OpScope op(name, {input});
  DITTO_CHECK(input.defined(), ValueError, name, "undefined tensor");
  DITTO_CHECK(
      is_floating(input.dtype()),
      TypeError,
      name,
      "expected a floating input, got ",
      input.dtype());
  DITTO_CHECK(bins > 0, ValueError, name, "bins must be > 0, got ", bins);
  DITTO_CHECK(
      !(min > max),
      ValueError,
      name,
      "max must be larger than min, got min ",
      min,
      " and max ",
      max);
  Tensor x = input.contiguous();
  Tensor out = zeros({bins}, input.dtype());
  dispatch_dtype(input.dtype(), name, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* p = x.data_ptr<T>();
      const int64_t n = x.numel();
      double lo = min, hi = max;
      if (lo == hi && n > 0) {
        // The data's range (NaN and infinities make it not finite).
        lo = hi = double(p[0]);
        for (int64_t i = 0; i < n; ++i) {
          if (std::isnan(p[i])) {
            lo = hi = double(p[i]);
            break;
          }
          lo = std::min(lo, double(p[i]));
          hi = std::max(hi, double(p[i]));
        }
      }
      if (lo == hi) {
        lo -= 1;
        hi += 1;
      }
      DITTO_CHECK(
          std::isfinite(lo) && std::isfinite(hi),
          ValueError,
          name,
          "range of [",
          lo,
          ", ",
          hi,
          "] is not finite");
      // PyTorch's bin rule, in the input's dtype: bin = (x - lo) * bins /
      // (hi - lo) truncated, the last bin closed; values outside [lo, hi]
      // and NaN are not counted.
      const T left = T(lo), right = T(hi), tb = T(bins);
      constexpr int64_t kChunk = 16384;
      const int64_t chunks = (n + kChunk - 1) / kChunk;
      // Integer counts per fixed chunk, summed exactly: the same for any
      // thread count and exact beyond 2^24 counts per bin.
      std::vector<int64_t> partial(size_t(chunks * bins), 0);
      parallel_chunks(chunks, [&](int64_t c) {
        int64_t* h = partial.data() + c * bins;
        for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
          const T v = p[i];
          if (!(v >= left && v <= right)) {
            continue;
          }
          const T q = (v - left) * tb / (right - left);
          h[q < tb ? int64_t(q) : bins - 1] += 1;
        }
      });
      T* o = out.data_ptr<T>();
      for (int64_t b = 0; b < bins; ++b) {
        int64_t total = 0;
        for (int64_t c = 0; c < chunks; ++c) {
          total += partial[size_t(c * bins + b)];
        }
        o[b] = T(total);
      }
    }
  });
  return op.done(out);
}

Tensor embedding_bag(
    const Tensor& input,
    const Tensor& weight,
    const std::optional<Tensor>& offsets_or_none,
    std::string_view mode,
    const std::optional<Tensor>& per_sample_weights_or_none,
    bool include_last_offset,
    std::optional<int64_t> padding_idx) {
  const char* name = "embedding_bag";
  // None and an undefined tensor both mean none given.
  const Tensor offsets = offsets_or_none.value_or(Tensor());
  const Tensor per_sample_weights =
      per_sample_weights_or_none.value_or(Tensor());
  detail::OpScope op(name, {input, weight, offsets, per_sample_weights});
  DITTO_CHECK(
      input.defined() && weight.defined(),
      ValueError,
      name,
      "undefined tensor");
  DITTO_CHECK(
      mode == "sum" || mode == "mean" || mode == "max",
      ValueError,
      name,
      "mode must be sum, mean or max, got '",
      mode,
      "'");
  DITTO_CHECK(
      weight.dim() == 2 && is_floating(weight.dtype()),
      ValueError,
      name,
      "weight must be a 2-d floating tensor, got a ",
      weight.dim(),
      "-d ",
      weight.dtype(),
      " tensor");
  detail::check_index_dtype(input, name);
  const int64_t rows = weight.size(0), dims = weight.size(1);
  Tensor offs;
  if (input.dim() == 2) {
    DITTO_CHECK(
        !offsets.defined(),
        ValueError,
        name,
        "with a 2-d input, offsets must be undefined (each row is a bag)");
    DITTO_CHECK(
        !include_last_offset,
        ValueError,
        name,
        "include_last_offset needs a 1-d input with offsets");
    offs =
        arange(0, input.numel(), std::max<int64_t>(input.size(1), 1), kInt64);
    if (input.size(1) == 0) {
      offs = zeros({input.size(0)}, kInt64);
    }
  } else {
    DITTO_CHECK(
        input.dim() == 1 && offsets.defined() && offsets.dim() == 1,
        ValueError,
        name,
        "expected a 1-d input with 1-d offsets or a 2-d input, got a ",
        input.dim(),
        "-d input");
    detail::check_index_dtype(offsets, name);
    offs = detail::new_tensor(offsets.sizes(), kInt64);
    detail::copy_into(offs, offsets, name);
  }
  Tensor idx =
      detail::checked_index(input.reshape({input.numel()}), 0, rows, name);
  const int64_t n = idx.numel();
  const int64_t* op_ = offs.data_ptr<int64_t>();
  const int64_t bags = include_last_offset
      ? std::max<int64_t>(offs.numel() - 1, 0)
      : offs.numel();
  for (int64_t b = 0; b < offs.numel(); ++b) {
    DITTO_CHECK(
        b > 0 || op_[0] == 0,
        ValueError,
        name,
        "offsets[0] must be 0 (the first bag starts at position 0), got ",
        op_[0]);
    DITTO_CHECK(
        b == 0 || op_[b] >= op_[b - 1],
        ValueError,
        name,
        "offsets must be non-decreasing, got ",
        op_[b],
        " after ",
        b > 0 ? op_[b - 1] : 0);
    DITTO_CHECK(
        op_[b] <= n,
        ValueError,
        name,
        "offset ",
        op_[b],
        " is beyond the ",
        n,
        " indices");
  }
  DITTO_CHECK(
      !per_sample_weights.defined() || mode == "sum",
      ValueError,
      name,
      "per_sample_weights is only supported for mode 'sum', got mode '",
      mode,
      "'");
  if (per_sample_weights.defined()) {
    DITTO_CHECK(
        per_sample_weights.sizes() == input.sizes() &&
            per_sample_weights.dtype() == weight.dtype(),
        ValueError,
        name,
        "per_sample_weights must have input's shape ",
        shape_str(input.sizes()),
        " and weight's dtype ",
        weight.dtype(),
        ", got ",
        shape_str(per_sample_weights.sizes()),
        " ",
        per_sample_weights.dtype());
  }
  int64_t pad = -1;
  if (padding_idx) {
    DITTO_CHECK(
        *padding_idx >= -rows && *padding_idx < rows,
        IndexError,
        name,
        "padding_idx ",
        *padding_idx,
        " is out of bounds for ",
        rows,
        " embeddings");
    pad = *padding_idx < 0 ? *padding_idx + rows : *padding_idx;
  }
  // bag[i] for every index position; entries past the last bag's end (with
  // include_last_offset) belong to no bag.
  std::vector<int64_t> bag(size_t(n), -1);
  std::vector<int64_t> count(size_t(bags), 0);
  std::vector<int64_t> first(size_t(bags), -1);
  const int64_t* ip = idx.data_ptr<int64_t>();
  for (int64_t b = 0; b < bags; ++b) {
    const int64_t end = b + 1 < offs.numel() ? op_[b + 1] : n;
    for (int64_t i = op_[b]; i < end; ++i) {
      bag[size_t(i)] = b;
      if (ip[i] != pad) {
        count[size_t(b)] += 1;
        if (first[size_t(b)] < 0) {
          first[size_t(b)] = i;
        }
      }
    }
  }
  Tensor out = zeros({bags, dims}, weight.dtype());
  Tensor wt = weight.contiguous();
  Tensor psw = per_sample_weights.defined()
      ? per_sample_weights.reshape({n}).contiguous()
      : Tensor();
  const bool max_mode = mode == "max";
  dispatch_dtype(weight.dtype(), name, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* o = out.data_ptr<T>();
      const T* w = wt.data_ptr<T>();
      const T* ps = psw.defined() ? psw.data_ptr<T>() : nullptr;
      auto key = [&](int64_t i) {
        return std::max<int64_t>(bag[size_t(i)], 0);
      };
      auto apply = [&](int64_t i, bool atomic) {
        const int64_t b = bag[size_t(i)];
        if (b < 0 || ip[i] == pad) {
          return;
        }
        T* to = o + b * dims;
        const T* row = w + ip[i] * dims;
        if (max_mode) {
          // PyTorch's rule: the bag's first row, then any strictly greater
          // value (NaN after the first row never wins).
          const bool is_first = first[size_t(b)] == i;
          for (int64_t c = 0; c < dims; ++c) {
            if (is_first || row[c] > to[c]) {
              to[c] = row[c];
            }
          }
        } else if (ps) {
          for (int64_t c = 0; c < dims; ++c) {
            const T v = T(row[c] * ps[i]);
            if (atomic) {
              detail::combine_atomic<Combine::kAdd>(to + c, v);
            } else {
              to[c] = T(to[c] + v);
            }
          }
        } else {
          detail::combine_row<Combine::kAdd>(
              to, row, dims, nullptr, nullptr, atomic);
        }
      };
      // Max depends on the order of a bag's rows: it always runs in index
      // order (owner computes), in both modes.
      detail::scatter_updates(
          max_mode || are_deterministic_algorithms_enabled(),
          n,
          bags,
          dims,
          key,
          apply);
      if (mode == "mean") {
        for (int64_t b = 0; b < bags; ++b) {
          if (count[size_t(b)] > 1) {
            const T c = T(count[size_t(b)]);
            for (int64_t d = 0; d < dims; ++d) {
              o[b * dims + d] = o[b * dims + d] / c;
            }
          }
        }
      }
    }
  });
  if (!op.needs_grad()) {
    return op.done(out);
  }
  // For the backward: the entries that count (in a bag, not padding), their
  // bag, their scale (1, the per-sample weight, or 1 / the bag's count),
  // and in max mode the entry each (bag, column) took its value from (the
  // same first-strictly-greater rule as the forward).
  std::vector<int64_t> entries, entry_bag;
  std::vector<double> scale;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t b = bag[size_t(i)];
    if (b >= 0 && ip[i] != pad) {
      entries.push_back(i);
      entry_bag.push_back(b);
      scale.push_back(mode == "mean" ? 1.0 / double(count[size_t(b)]) : 1.0);
    }
  }
  Tensor winner_rows, winner_cols, winner_bags;
  if (max_mode) {
    std::vector<int64_t> rows_v, cols_v, bags_v;
    dispatch_dtype(weight.dtype(), name, [&]<typename T>() {
      if constexpr (std::is_floating_point_v<T>) {
        const T* w = wt.data_ptr<T>();
        std::vector<int64_t> best(size_t(bags * dims), -1);
        for (size_t e = 0; e < entries.size(); ++e) {
          const int64_t i = entries[e], b = entry_bag[e];
          for (int64_t c = 0; c < dims; ++c) {
            int64_t& k = best[size_t(b * dims + c)];
            if (k < 0 || w[ip[i] * dims + c] > w[ip[k] * dims + c]) {
              k = i;
            }
          }
        }
        for (int64_t b = 0; b < bags; ++b) {
          for (int64_t c = 0; c < dims; ++c) {
            const int64_t k = best[size_t(b * dims + c)];
            if (k >= 0) {
              rows_v.push_back(ip[k]);
              cols_v.push_back(c);
              bags_v.push_back(b);
            }
          }
        }
      }
    });
    winner_rows = tensor(rows_v);
    winner_cols = tensor(cols_v);
    winner_bags = tensor(bags_v);
  }
  Tensor entry_rows = index_select(idx, 0, tensor(entries));
  return op.done(
      out,
      [max_mode,
       n,
       input_sizes = input.sizes(),
       weight_sizes = weight.sizes(),
       entries = tensor(entries),
       entry_bag = tensor(entry_bag),
       scale = tensor(scale),
       entry_rows,
       winner_rows,
       winner_cols,
       winner_bags,
       sw = op.save(weight),
       has_psw = per_sample_weights.defined(),
       spsw = op.save(per_sample_weights)](const autograd::GradList& g) {
        // Summed into the weight's rows by index_add_ / index_put_, whose
        // variant the node's policy picks.
        Tensor gw = zeros(weight_sizes, g[0].dtype());
        Tensor gpsw;
        if (max_mode) {
          Tensor picked = g[0].index({winner_bags, winner_cols});
          gw.index_put_({winner_rows, winner_cols}, picked, true);
        } else {
          Tensor rows = g[0].index_select(0, entry_bag);
          Tensor s = scale.to(g[0].dtype()).unsqueeze(1);
          if (has_psw) {
            Tensor psw = spsw.unpack().reshape({-1}).index_select(0, entries);
            s = psw.unsqueeze(1);
            Tensor dots =
                (rows * sw.unpack().index_select(0, entry_rows)).sum({1});
            gpsw = zeros({n}, g[0].dtype());
            gpsw.index_copy_(0, entries, dots);
            gpsw = gpsw.view(input_sizes);
          }
          gw.index_add_(0, entry_rows, rows * s);
        }
        return autograd::GradList{Tensor(), gw, Tensor(), gpsw};
      });
}

} // namespace ditto
