#include "ditto/ops/decomp.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ditto/ops/detail/op_util.h"
#include "ditto/ops/factories.h"
#include "ditto/ops/linalg.h"
#include "ditto/ops/random.h"

namespace ditto::linalg {
namespace {

void check_matrix(const Tensor& a, const char* op) {
  DITTO_CHECK(a.defined(), ValueError, op, "undefined tensor");
  DITTO_CHECK(
      a.dim() == 2,
      ValueError,
      op,
      "expected a 2-d matrix, got ",
      shape_str(a.sizes()));
  DITTO_CHECK(
      is_floating(a.dtype()),
      TypeError,
      op,
      "expected float32 or float64, got ",
      a.dtype());
}

// Householder QR in place on a column-major copy.
template <typename T>
std::pair<Tensor, Tensor> qr_impl(const Tensor& a) {
  const int64_t m = a.size(0), n = a.size(1);
  // Column-major work copy: column j at w[j * m].
  Tensor at = a.t().contiguous();
  std::vector<T> w(at.data_ptr<T>(), at.data_ptr<T>() + m * n);
  std::vector<T> tau(static_cast<size_t>(n), T(0));
  std::vector<T> diag(static_cast<size_t>(n), T(0)); // R's diagonal
  for (int64_t j = 0; j < n; ++j) {
    T* col = w.data() + j * m;
    T norm2 = 0;
    for (int64_t i = j; i < m; ++i) {
      norm2 = std::fma(col[i], col[i], norm2);
    }
    const T norm = std::sqrt(norm2);
    if (norm == T(0)) {
      continue; // a zero column: no reflection, R[j][j] = 0
    }
    const T alpha = col[j] > 0 ? -norm : norm;
    // v = x - alpha e1, stored in col[j..], v[j] kept apart.
    const T v0 = col[j] - alpha;
    T vnorm2 = v0 * v0;
    for (int64_t i = j + 1; i < m; ++i) {
      vnorm2 = std::fma(col[i], col[i], vnorm2);
    }
    col[j] = v0;
    tau[size_t(j)] = T(2) / vnorm2;
    // Apply H = I - tau v v^T to the columns on the right.
    for (int64_t k = j + 1; k < n; ++k) {
      T* ck = w.data() + k * m;
      T dot = 0;
      for (int64_t i = j; i < m; ++i) {
        dot = std::fma(col[i], ck[i], dot);
      }
      const T f = tau[size_t(j)] * dot;
      for (int64_t i = j; i < m; ++i) {
        ck[i] = std::fma(-f, col[i], ck[i]);
      }
    }
    diag[size_t(j)] = alpha;
  }
  // R: upper part of the reflected columns, diagonal alphas.
  Tensor r = zeros({n, n}, a.dtype());
  T* rp = r.data_ptr<T>();
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < j; ++i) {
      rp[i * n + j] = w[size_t(j * m + i)];
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    rp[j * n + j] = diag[size_t(j)];
  }
  // Q = H_0 H_1 ... H_{n-1} applied to the first n columns of I, from the
  // last reflection back.
  std::vector<T> q(size_t(m * n), T(0)); // column-major
  for (int64_t j = 0; j < n; ++j) {
    q[size_t(j * m + j)] = T(1);
  }
  for (int64_t j = n - 1; j >= 0; --j) {
    if (tau[size_t(j)] == T(0)) {
      continue;
    }
    const T* v = w.data() + j * m;
    for (int64_t k = 0; k < n; ++k) {
      T* qk = q.data() + k * m;
      T dot = 0;
      for (int64_t i = j; i < m; ++i) {
        dot = std::fma(v[i], qk[i], dot);
      }
      const T f = tau[size_t(j)] * dot;
      for (int64_t i = j; i < m; ++i) {
        qk[i] = std::fma(-f, v[i], qk[i]);
      }
    }
  }
  Tensor qt = zeros({n, m}, a.dtype());
  std::copy(q.begin(), q.end(), qt.data_ptr<T>());
  return {qt.t().contiguous(), r};
}

// One-sided Jacobi on a tall [p, r] matrix (p >= r).
template <typename T>
SVD svd_tall(const Tensor& a) {
  const int64_t p = a.size(0), r = a.size(1);
  Tensor at = a.t().contiguous(); // columns contiguous
  std::vector<T> u(at.data_ptr<T>(), at.data_ptr<T>() + p * r);
  std::vector<T> v(size_t(r * r), T(0)); // column-major
  for (int64_t j = 0; j < r; ++j) {
    v[size_t(j * r + j)] = T(1);
  }
  const T eps = std::numeric_limits<T>::epsilon();
  for (int sweep = 0; sweep < 60; ++sweep) {
    bool rotated = false;
    for (int64_t i = 0; i < r - 1; ++i) {
      for (int64_t j = i + 1; j < r; ++j) {
        T* ci = u.data() + i * p;
        T* cj = u.data() + j * p;
        T alpha = 0, beta = 0, gamma = 0;
        for (int64_t k = 0; k < p; ++k) {
          alpha = std::fma(ci[k], ci[k], alpha);
          beta = std::fma(cj[k], cj[k], beta);
          gamma = std::fma(ci[k], cj[k], gamma);
        }
        if (std::abs(gamma) <= eps * std::sqrt(alpha * beta) || gamma == T(0)) {
          continue;
        }
        rotated = true;
        const T zeta = (beta - alpha) / (T(2) * gamma);
        const T t = (zeta >= 0 ? T(1) : T(-1)) /
            (std::abs(zeta) + std::sqrt(T(1) + zeta * zeta));
        const T c = T(1) / std::sqrt(T(1) + t * t), s = c * t;
        for (int64_t k = 0; k < p; ++k) {
          const T x = ci[k], y = cj[k];
          ci[k] = c * x - s * y;
          cj[k] = s * x + c * y;
        }
        T* vi = v.data() + i * r;
        T* vj = v.data() + j * r;
        for (int64_t k = 0; k < r; ++k) {
          const T x = vi[k], y = vj[k];
          vi[k] = c * x - s * y;
          vj[k] = s * x + c * y;
        }
      }
    }
    if (!rotated) {
      break;
    }
  }
  std::vector<T> sv(static_cast<size_t>(r));
  for (int64_t j = 0; j < r; ++j) {
    T n2 = 0;
    for (int64_t k = 0; k < p; ++k) {
      n2 = std::fma(u[size_t(j * p + k)], u[size_t(j * p + k)], n2);
    }
    sv[size_t(j)] = std::sqrt(n2);
  }
  // Descending singular values (stable: ties keep column order).
  std::vector<int64_t> order(static_cast<size_t>(r));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return sv[size_t(x)] > sv[size_t(y)];
  });
  SVD out{
      zeros({p, r}, a.dtype()),
      zeros({r}, a.dtype()),
      zeros({r, r}, a.dtype())};
  T* U = out.U.data_ptr<T>();
  T* S = out.S.data_ptr<T>();
  T* V = out.V.data_ptr<T>();
  for (int64_t c = 0; c < r; ++c) {
    const int64_t j = order[size_t(c)];
    const T s = sv[size_t(j)];
    S[c] = s;
    for (int64_t k = 0; k < p; ++k) {
      U[k * r + c] = s > T(0) ? u[size_t(j * p + k)] / s : T(0);
    }
    for (int64_t k = 0; k < r; ++k) {
      V[k * r + c] = v[size_t(j * r + k)];
    }
  }
  return out;
}

// get_approximate_basis of torch._lowrank: an [m, q] orthonormal basis of
// A's range from A R, R = randn(n, q), refined by niter power iterations.
Tensor approximate_basis(
    const Tensor& a,
    int64_t q,
    int64_t niter,
    const std::optional<Generator>& gen) {
  Tensor r = randn({a.size(1), q}, a.dtype(), gen);
  Tensor basis = qr(matmul(a, r)).first;
  Tensor at = a.t();
  for (int64_t i = 0; i < niter; ++i) {
    basis = qr(matmul(at, basis)).first;
    basis = qr(matmul(a, basis)).first;
  }
  return basis;
}

} // namespace

std::pair<Tensor, Tensor> qr(const Tensor& a) {
  detail::OpScope op("linalg::qr", {a});
  check_matrix(a, "linalg::qr");
  DITTO_CHECK(
      a.size(0) >= a.size(1),
      ValueError,
      "linalg::qr",
      "expected m >= n (a thin QR), got ",
      shape_str(a.sizes()));
  std::pair<Tensor, Tensor> out;
  dispatch_dtype(a.dtype(), "linalg::qr", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      out = qr_impl<T>(a);
    }
  });
  op.done({out.first, out.second});
  return out;
}

SVD svd(const Tensor& a) {
  detail::OpScope op("linalg::svd", {a});
  check_matrix(a, "linalg::svd");
  SVD out;
  const bool wide = a.size(0) < a.size(1);
  dispatch_dtype(a.dtype(), "linalg::svd", [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      out = svd_tall<T>(wide ? a.t() : a);
    }
  });
  if (wide) {
    std::swap(out.U, out.V); // A^T = U S V^T  =>  A = V S U^T
  }
  op.done({out.U, out.S, out.V});
  return out;
}

SVD svd_lowrank(
    const Tensor& a,
    int64_t q,
    int64_t niter,
    const std::optional<Generator>& gen) {
  const char* name = "linalg::svd_lowrank";
  detail::OpScope op(name, {a});
  check_matrix(a, name);
  const int64_t m = a.size(0), n = a.size(1);
  DITTO_CHECK(
      q > 0 && q <= std::min(m, n),
      ValueError,
      name,
      "q must be in [1, min(m, n)] = [1, ",
      std::min(m, n),
      "], got ",
      q);
  DITTO_CHECK(niter >= 0, ValueError, name, "niter must be >= 0, got ", niter);
  if (m < n || n > q) {
    // PyTorch's first branch: the basis of A^T keeps B small.
    Tensor basis = approximate_basis(a.t(), q, niter, gen); // [n, q]
    SVD s = svd(matmul(a, basis)); // [m, q]
    SVD r{s.U, s.S, matmul(basis, s.V)};
    op.done({r.U, r.S, r.V});
    return r;
  }
  Tensor basis = approximate_basis(a, q, niter, gen); // [m, q]
  SVD s = svd(matmul(basis.t(), a)); // [q, n]
  SVD r{matmul(basis, s.U), s.S, s.V};
  op.done({r.U, r.S, r.V});
  return r;
}

} // namespace ditto::linalg
