// The sparse COO constructor's index validation: arbitrary indices (any
// int64, negative and huge included), sizes (negative, zero, overflowing)
// and shapes of the parts give a sparse tensor whose every index is within
// its size, or a typed error; never a crash. Accepted tensors coalesce into
// sorted, unique, in-range entries, and small ones convert to dense and
// back.

#include <cstring>

#include "ditto/ops/sparse.h"
#include "fuzz/fuzz_util.h"

namespace {

// Reads the input as a stream of little-endian fields, zeros past its end.
struct Reader {
  const uint8_t* data;
  size_t size;
  size_t at = 0;
  uint8_t byte() {
    return at < size ? data[at++] : 0;
  }
  int64_t i64() {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) {
      v |= uint64_t(byte()) << (8 * k);
    }
    return int64_t(v);
  }
  // Mostly small values, sometimes anything.
  int64_t index() {
    const uint8_t tag = byte();
    return tag < 200 ? int64_t(tag % 12) - 1 : i64();
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ditto;
  Reader r{data, size};
  const int64_t sparse_dim = r.byte() % 4;
  const int64_t nnz = r.byte() % 17;
  const int64_t dense_dim = r.byte() % 2;
  const bool given_size = r.byte() % 4 != 0;
  const int64_t index_rows = sparse_dim + (r.byte() % 8 == 0 ? 1 : 0);
  Shape sizes;
  for (int64_t d = 0; d < sparse_dim + dense_dim; ++d) {
    sizes.push_back(r.index());
  }
  Tensor idx = zeros({index_rows, nnz}, kInt64);
  for (int64_t k = 0; k < idx.numel(); ++k) {
    idx.data_ptr<int64_t>()[k] = r.index();
  }
  Shape vs{nnz + (r.byte() % 8 == 0 ? 1 : 0)};
  if (dense_dim == 1) {
    vs.push_back(
        sparse_dim + dense_dim > 0 && !sizes.empty() && sizes.back() >= 0 &&
                sizes.back() < 4
            ? sizes.back()
            : 2);
  }
  Tensor vals = full(vs, 1.5, kFloat32);
  Tensor s;
  if (!fuzz::typed_error_or_result([&] {
        s = given_size ? sparse_coo_tensor(idx, vals, sizes)
                       : sparse_coo_tensor(idx, vals);
      })) {
    return 0;
  }
  fuzz::require(s.is_sparse(), "sparse_coo_tensor: not sparse");
  fuzz::require(s._nnz() == nnz, "sparse_coo_tensor: nnz changed");
  const Tensor in = s._indices();
  for (int64_t d = 0; d < in.size(0); ++d) {
    for (int64_t e = 0; e < nnz; ++e) {
      const int64_t i = in.data_ptr<int64_t>()[d * nnz + e];
      fuzz::require(i >= 0 && i < s.size(d), "an index outside the size");
    }
  }
  Tensor c;
  if (fuzz::typed_error_or_result([&] { c = s.coalesce(); })) {
    fuzz::require(c._nnz() <= nnz, "coalesce added entries");
    fuzz::require(c.is_coalesced(), "coalesce: not coalesced");
  }
  if (s.numel() <= (int64_t(1) << 16)) {
    Tensor d;
    if (fuzz::typed_error_or_result([&] { d = s.to_dense(); })) {
      fuzz::require(d.sizes() == s.sizes(), "to_dense: wrong sizes");
      fuzz::typed_error_or_result([&] { (void)d.to_sparse(); });
    }
  }
  return 0;
}
