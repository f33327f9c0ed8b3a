// Advanced indexing: index and index_put_ with a list of index tensors
// (int64 positions or bool masks, broadcast together).

#include "ditto/ops/index.h"

#include <cstring>
#include <vector>

#include "ditto/determinism/context.h"
#include "ditto/ops/detail/index_util.h"
#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/detail/scatter_engine.h"
#include "ditto/ops/elementwise.h"
#include "ditto/ops/factories.h"

namespace ditto {

using detail::Combine;

namespace {

// The coordinates of the true elements of a bool mask, one int64 tensor of
// length nnz per mask dim, in row-major order.
std::vector<Tensor> nonzero_coords(const Tensor& mask) {
  Tensor m = mask.contiguous();
  const bool* p = m.data_ptr<bool>();
  int64_t nnz = 0;
  for (int64_t i = 0; i < m.numel(); ++i) {
    nnz += p[i] ? 1 : 0;
  }
  std::vector<Tensor> out;
  std::vector<int64_t*> ptr;
  for (int64_t k = 0; k < m.dim(); ++k) {
    out.push_back(detail::new_tensor({nnz}, kInt64));
    ptr.push_back(out.back().data_ptr<int64_t>());
  }
  int64_t j = 0;
  for (int64_t i = 0; i < m.numel(); ++i) {
    if (p[i]) {
      int64_t rem = i;
      for (int64_t k = m.dim(); k-- > 0;) {
        ptr[size_t(k)][j] = rem % m.size(k);
        rem /= m.size(k);
      }
      ++j;
    }
  }
  return out;
}

// Advanced indexing resolved for index_put_: which dims are indexed, by
// which (broadcast, wrapped, int64) index tensors, and the shape of
// self[indices].
struct AdvancedIndex {
  std::vector<int64_t> dims;
  std::vector<Tensor> index; // each contiguous, of shape `broadcast`
  Shape broadcast;
  Shape result;
  bool adjacent = true;
  std::vector<bool> scalar_masks; // 0-d bool indices, in order
};

AdvancedIndex resolve_indices(
    const Tensor& self,
    const std::vector<Tensor>& indices,
    const char* name) {
  DITTO_CHECK(
      int64_t(indices.size()) <= self.dim(),
      IndexError,
      name,
      "too many indices for a tensor of dimension ",
      self.dim(),
      " (got ",
      indices.size(),
      ")");
  AdvancedIndex r;
  std::vector<Tensor> raw;
  int64_t d = 0;
  for (const Tensor& t : indices) {
    if (!t.defined()) {
      ++d;
      continue;
    }
    if (t.dtype() == kBool && t.dim() == 0) {
      // self[True] selects everything, self[False] nothing (PyTorch adds a
      // leading dim of size 1 or 0; see resolve_indices' caller).
      r.scalar_masks.push_back(t.item<bool>());
      continue;
    }
    if (t.dtype() == kBool) {
      DITTO_CHECK(
          d + t.dim() <= self.dim(),
          IndexError,
          name,
          "too many indices for a tensor of dimension ",
          self.dim());
      for (int64_t j = 0; j < t.dim(); ++j) {
        DITTO_CHECK(
            t.size(j) == self.size(d + j),
            IndexError,
            name,
            "the shape of the mask ",
            shape_str(t.sizes()),
            " at index ",
            j,
            " does not match the shape of the indexed tensor ",
            shape_str(self.sizes()),
            " at index ",
            d + j);
      }
      for (Tensor& c : nonzero_coords(t)) {
        r.dims.push_back(d++);
        raw.push_back(c);
      }
      continue;
    }
    DITTO_CHECK(
        t.dtype() == kInt64 || t.dtype() == kInt32,
        TypeError,
        name,
        "tensors used as indices must be int64, int32 or bool, got ",
        t.dtype());
    r.dims.push_back(d++);
    raw.push_back(t);
  }
  for (size_t k = 0; k < raw.size(); ++k) {
    r.broadcast = k == 0 ? raw[k].sizes()
                         : broadcast_shapes(r.broadcast, raw[k].sizes(), name);
  }
  for (size_t k = 0; k < raw.size(); ++k) {
    r.index.push_back(detail::checked_index(
        raw[k].expand(r.broadcast),
        r.dims[k],
        self.size(r.dims[k]),
        name,
        true));
  }
  for (size_t k = 1; k < r.dims.size(); ++k) {
    r.adjacent = r.adjacent && r.dims[k] == r.dims[k - 1] + 1;
  }
  std::vector<bool> indexed(size_t(self.dim()), false);
  for (int64_t dd : r.dims) {
    indexed[size_t(dd)] = true;
  }
  bool placed = false;
  if (!r.adjacent) {
    r.result = r.broadcast;
    placed = true;
  }
  for (int64_t k = 0; k < self.dim(); ++k) {
    if (!indexed[size_t(k)]) {
      r.result.push_back(self.size(k));
    } else if (!placed) {
      r.result.insert(r.result.end(), r.broadcast.begin(), r.broadcast.end());
      placed = true;
    }
  }
  return r;
}

// Where the rows of t[indices] are: t with the indexed dims first, row p
// of the broadcast index starts at base[p] and its elements (the other
// dims) sit at rest[r] from there (element offsets in t's storage layout).
struct IndexRows {
  std::vector<int64_t> base;
  std::vector<int64_t> rest;
  Shape rest_extent;
  int64_t n = 0;
};

IndexRows index_rows(
    const Tensor& t,
    const AdvancedIndex& ai,
    const char* name) {
  IndexRows r;
  IntList perm = ai.dims;
  for (int64_t k = 0; k < t.dim(); ++k) {
    if (std::find(ai.dims.begin(), ai.dims.end(), k) == ai.dims.end()) {
      perm.push_back(k);
      r.rest_extent.push_back(t.size(k));
    }
  }
  r.rest = detail::rest_offsets(t.permute(perm), r.rest_extent, ai.dims.size());
  r.n = checked_numel(ai.broadcast, name);
  r.base.assign(static_cast<size_t>(r.n), 0);
  for (size_t k = 0; k < ai.dims.size(); ++k) {
    const int64_t* ip = ai.index[k].data_ptr<int64_t>();
    const int64_t stride = t.strides()[size_t(ai.dims[k])];
    for (int64_t p = 0; p < r.n; ++p) {
      r.base[size_t(p)] += ip[p] * stride;
    }
  }
  return r;
}

// An index list as a backward keeps it.
struct SavedIndices {
  std::vector<autograd::SavedTensor> saved;
  std::vector<Tensor> unpack() const {
    std::vector<Tensor> out;
    for (const auto& t : saved) {
      out.push_back(t.unpack());
    }
    return out;
  }
};

SavedIndices save_indices(
    detail::OpScope& op,
    const std::vector<Tensor>& indices) {
  SavedIndices s;
  for (const Tensor& t : indices) {
    s.saved.push_back(op.save(t));
  }
  return s;
}

} // namespace

Tensor& Tensor::index_put_(
    const std::vector<Tensor>& indices,
    const Tensor& values,
    bool accumulate) {
  Tensor& self = *this;
  const char* name = "index_put_";
  if (detail::is_storage(self) && values.defined() &&
      values.dtype() == self.dtype()) {
    // Note [Storage dtypes]: on an upcast copy, rounded back once.
    Tensor w = detail::upcast(self);
    w.index_put_(indices, detail::upcast(values), accumulate);
    return self.copy_(w);
  }
  detail::OpScope op(name, {self, values}, detail::OpScope::kInplace);
  DITTO_CHECK(
      self.defined() && values.defined(), ValueError, name, "undefined tensor");
  detail::check_same_dtype(self, values, "values", name, accumulate);
  AdvancedIndex ai = resolve_indices(self, indices, name);
  const bool selects_nothing =
      std::find(ai.scalar_masks.begin(), ai.scalar_masks.end(), false) !=
      ai.scalar_masks.end();
  DITTO_CHECK(
      expands_to(values.sizes(), ai.result),
      ValueError,
      name,
      "shape mismatch: values of shape ",
      shape_str(values.sizes()),
      " cannot be broadcast to the indexing result of shape ",
      shape_str(ai.result));
  detail::check_no_internal_overlap(self, name);
  // values receive the gradient at the positions they were written to
  // (every one, duplicates included, as PyTorch; the engine sums it back to
  // values' shape); overwritten positions pass none to self's old values.
  auto backward = [accumulate, saved = save_indices(op, indices)](
                      const autograd::GradList& g) {
    std::vector<Tensor> idx = saved.unpack();
    Tensor gvalues = ::ditto::index(g[0], idx);
    if (accumulate) {
      return autograd::GradList{g[0], gvalues};
    }
    Tensor gself = g[0].clone();
    gself.index_put_(idx, zeros({}, g[0].dtype()), false);
    return autograd::GradList{gself, gvalues};
  };
  if (selects_nothing) {
    return op.done_inplace(self, backward); // a False 0-d mask: no write
  }
  if (ai.dims.empty()) {
    // self[...] = values (or += values).
    detail::copy_into(
        self, accumulate ? ::ditto::add(self, values) : values, name);
    return op.done_inplace(self, backward);
  }
  Tensor W = detail::working_copy(self);
  // W with the indexed dims first: update p writes the rest dims' slice at
  // base[p], with the rest dims' offsets.
  const IndexRows rows = index_rows(W, ai, name);
  const std::vector<int64_t>& base = rows.base;
  const std::vector<int64_t>& rest = rows.rest;
  bool rest_contiguous = true;
  for (size_t k = 0; k < rest.size(); ++k) {
    rest_contiguous = rest_contiguous && rest[k] == int64_t(k);
  }
  const int64_t len = int64_t(rest.size());
  const int64_t n = rows.n;
  // Updates to one position share a key (its index tuple).
  std::vector<int64_t> key(static_cast<size_t>(n), 0);
  int64_t keys = 1;
  for (size_t k = 0; k < ai.dims.size(); ++k) {
    const int64_t* ip = ai.index[k].data_ptr<int64_t>();
    const int64_t size = self.size(ai.dims[k]);
    for (int64_t p = 0; p < n; ++p) {
      key[size_t(p)] = key[size_t(p)] * size + ip[p];
    }
    keys *= size;
  }
  // The values as one contiguous row of len per update: broadcast to the
  // result, then the index dims first (they sit at the first indexed dim
  // when the indexed dims are adjacent).
  Tensor v = detail::unaliased(values, self).expand(ai.result);
  if (ai.adjacent && ai.dims.front() > 0) {
    const int64_t first = ai.dims.front();
    const int64_t nb = int64_t(ai.broadcast.size());
    IntList vp;
    for (int64_t k = 0; k < nb; ++k) {
      vp.push_back(first + k);
    }
    for (int64_t k = 0; k < int64_t(ai.result.size()); ++k) {
      if (k < first || k >= first + nb) {
        vp.push_back(k);
      }
    }
    v = v.permute(vp);
  }
  v = v.contiguous();
  const int64_t* rp = rest_contiguous ? nullptr : rest.data();
  auto run = [&]<Combine C>() {
    dispatch_dtype(self.dtype(), name, [&]<typename T>() {
      if constexpr (C == Combine::kAssign || !std::is_same_v<T, bool>) {
        T* w = W.data_ptr<T>();
        const T* s = v.data_ptr<T>();
        detail::scatter_updates(
            detail::use_deterministic<C, T>(),
            n,
            keys,
            len,
            [&](int64_t p) { return key[size_t(p)]; },
            [&](int64_t p, bool atomic) {
              detail::combine_row<C>(
                  w + base[size_t(p)], s + p * len, len, rp, nullptr, atomic);
            });
      }
    });
  };
  detail::with_accumulate(accumulate, run);
  detail::write_back(self, W, name);
  return op.done_inplace(self, backward);
}

// torch.index_put: index_put_ on a copy of self.
Tensor index_put(
    const Tensor& self,
    const std::vector<Tensor>& indices,
    const Tensor& values,
    bool accumulate) {
  return detail::on_copy(self, "index_put", [&](Tensor& t) {
    t.index_put_(indices, values, accumulate);
  });
}

Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
  const char* name = "index";
  std::vector<Tensor> inputs{self};
  inputs.insert(inputs.end(), indices.begin(), indices.end());
  detail::OpScope op(name, inputs);
  DITTO_CHECK(self.defined(), ValueError, name, "undefined tensor");
  AdvancedIndex ai = resolve_indices(self, indices, name);
  auto backward = [n = indices.size(),
                   in = self.sizes(),
                   saved =
                       save_indices(op, indices)](const autograd::GradList& g) {
    std::vector<Tensor> idx = saved.unpack();
    // Summed in index order by the deterministic variant (or not, by the
    // node's policy), as index_put_ with accumulate.
    Tensor gi = zeros(in, g[0].dtype());
    gi.index_put_(idx, g[0], /*accumulate=*/true);
    autograd::GradList grads(n + 1);
    grads[0] = gi;
    return grads;
  };
  // A 0-d True adds a leading dim of 1, a False one of 0 (as PyTorch).
  auto lead = [&](Tensor t) {
    for (bool m : ai.scalar_masks) {
      t = m ? t.unsqueeze(0) : t.unsqueeze(0).narrow(0, 0, 0);
    }
    return t.contiguous();
  };
  if (ai.dims.empty()) {
    return op.done(lead(self.clone()), backward);
  }
  // Row p of the broadcast index reads the rest dims' slice at base[p].
  const IndexRows rows = index_rows(self, ai, name);
  const std::vector<int64_t>& base = rows.base;
  const std::vector<int64_t>& rest = rows.rest;
  const Shape& rest_extent = rows.rest_extent;
  const int64_t len = int64_t(rest.size());
  const int64_t n = rows.n;
  Shape gathered = ai.broadcast;
  gathered.insert(gathered.end(), rest_extent.begin(), rest_extent.end());
  Tensor out = detail::new_tensor(gathered, self.dtype());
  const size_t es = self.element_size();
  const char* from = static_cast<const char*>(self.raw_data());
  char* to = static_cast<char*>(out.raw_data());
  parallel_for(
      0,
      n,
      std::max<int64_t>(1, 16384 / std::max<int64_t>(len, 1)),
      [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          for (int64_t r = 0; r < len; ++r) {
            std::memcpy(
                to + size_t(p * len + r) * es,
                from + size_t(base[size_t(p)] + rest[size_t(r)]) * es,
                es);
          }
        }
      });
  // Adjacent indexed dims put the broadcast dims where the first of them
  // was; otherwise they lead (ai.result), as gathered already is.
  if (ai.adjacent && ai.dims.front() > 0) {
    const int64_t first = ai.dims.front();
    const int64_t nb = int64_t(ai.broadcast.size());
    IntList order;
    for (int64_t k = 0; k < first; ++k) {
      order.push_back(nb + k);
    }
    for (int64_t k = 0; k < nb; ++k) {
      order.push_back(k);
    }
    for (int64_t k = nb + first; k < int64_t(gathered.size()); ++k) {
      order.push_back(k);
    }
    out = out.permute(order);
  }
  return op.done(lead(out), backward);
}

} // namespace ditto
