// Convolutions: every algorithm against a float64 reference, bit equality
// across thread counts and CPU capabilities, the adjoint identities of the
// gradients and finite differences, algorithm selection and the tuning
// cache.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ditto/ditto.h"
#include "test_util.h"
#include "tests/cpu_caps.h"

using namespace ditto;
namespace conv = ditto::backends::conv;

using ditto::test::same_bits;

namespace {

struct Cfg {
  int64_t n, c, h, w, o, kh, kw, s, p, d, g;
};

// The definition, in float64.
Tensor reference(const Tensor& x, const Tensor& w, const Cfg& f) {
  Tensor xd = x.to(kFloat64).contiguous(), wd = w.to(kFloat64).contiguous();
  const int64_t oh = (f.h + 2 * f.p - f.d * (f.kh - 1) - 1) / f.s + 1;
  const int64_t ow = (f.w + 2 * f.p - f.d * (f.kw - 1) - 1) / f.s + 1;
  const int64_t cg = f.c / f.g, og = f.o / f.g;
  Tensor out = zeros({f.n, f.o, oh, ow}, kFloat64);
  const double* xp = xd.data_ptr<double>();
  const double* wp = wd.data_ptr<double>();
  double* o = out.data_ptr<double>();
  for (int64_t n = 0; n < f.n; ++n)
    for (int64_t oc = 0; oc < f.o; ++oc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double acc = 0;
          const int64_t gi = oc / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ki = 0; ki < f.kh; ++ki)
              for (int64_t kj = 0; kj < f.kw; ++kj) {
                const int64_t iy = y * f.s - f.p + ki * f.d,
                              ix = xo * f.s - f.p + kj * f.d;
                if (iy >= 0 && iy < f.h && ix >= 0 && ix < f.w) {
                  acc += wp[((oc * cg + ci) * f.kh + ki) * f.kw + kj] *
                      xp[((n * f.c + gi * cg + ci) * f.h + iy) * f.w + ix];
                }
              }
          o[((n * f.o + oc) * oh + y) * ow + xo] = acc;
        }
  return out;
}

const std::vector<Cfg> kCfgs = {
    {2, 3, 9, 8, 4, 3, 3, 1, 1, 1, 1}, // 3x3 padding 1: Winograd applies
    {3, 4, 11, 7, 6, 3, 2, 2, 1, 1, 2}, // stride 2, groups 2
    {1, 2, 10, 10, 2, 3, 3, 1, 2, 2, 1}, // dilation 2
    {2, 8, 5, 5, 8, 1, 1, 1, 0, 1, 4}, // 1x1, groups 4
    {1, 1, 6, 9, 3, 3, 3, 1, 0, 1, 1}, // one input channel (direct)
    {3, 1, 8, 8, 16, 3, 3, 1, 1, 1, 1}, // thin weight gradient (9 taps < 16)
    {2, 16, 7, 9, 12, 3, 3, 1, 1, 1, 1}, // 144 taps, stride 1: implicit im2col
    {1, 32, 9, 8, 6, 3, 2, 1, 2, 2, 2}, // implicit, dilation 2, groups 2
    // Implicit with padding wider than the kernel reaches (rows wider than
    // the padded input's, Note [Implicit im2col]) and with none.
    {1, 64, 6, 5, 4, 1, 1, 1, 2, 1, 1},
    {2, 8, 7, 6, 5, 3, 3, 1, 3, 1, 1},
    {1, 16, 6, 7, 3, 3, 3, 1, 0, 1, 1},
    // Direct tiles (Note [Direct convolution tiles]): a last block of 4 or
    // 20 of 16 or 32 channels, tiles across rows, dilation; backward input
    // with 40 channels (a block and a half).
    {2, 16, 7, 9, 40, 3, 3, 1, 1, 1, 2},
    {1, 8, 9, 10, 24, 3, 3, 1, 2, 2, 1},
    {2, 40, 5, 7, 36, 3, 3, 1, 1, 1, 1},
};

class Conv : public ::testing::Test {
 protected:
  void TearDown() override {
    conv::force_algorithm("forward", "");
    conv::force_algorithm("backward_input", "");
    conv::force_algorithm("backward_weight", "");
    conv::benchmark(false);
    conv::deterministic(false);
    conv::replay_only(false);
    conv::clear_tuning_cache();
    use_deterministic_algorithms(false);
    set_num_threads(threads_);
    set_cpu_capability(cap_);
    determinism::set_warning_handler({});
  }
  int threads_ = get_num_threads();
  CpuCapability cap_ = get_cpu_capability();
};

} // namespace

TEST_F(Conv, ForwardAlgorithmsMatchTheReferenceAndTheirOwnBits) {
  Generator gen;
  gen.manual_seed(1);
  for (const Cfg& f : kCfgs) {
    for (Dtype dt : {kFloat32, kFloat64}) {
      Tensor x = randn({f.n, f.c, f.h, f.w}, dt, gen);
      Tensor w = randn({f.o, f.c / f.g, f.kh, f.kw}, dt, gen);
      Tensor bias = randn({f.o}, dt, gen);
      Tensor want =
          add(reference(x, w, f), bias.to(kFloat64).view({f.o, 1, 1}));
      const double tol = dt == kFloat32 ? 1e-4 : 1e-12;
      Tensor im2col;
      for (const char* algo : {"im2col_gemm", "direct", "winograd_f2x2_3x3"}) {
        if (std::string(algo) == "winograd_f2x2_3x3" &&
            !(f.kh == 3 && f.kw == 3 && f.s == 1 && f.d == 1)) {
          continue;
        }
        conv::force_algorithm("forward", algo);
        Tensor first;
        for (CpuCapability cap : test::testable_capabilities()) {
          set_cpu_capability(cap);
          for (int threads : test::test_thread_counts()) {
            set_num_threads(threads);
            Tensor y =
                conv2d(x, w, bias, {f.s, f.s}, {f.p, f.p}, {f.d, f.d}, f.g);
            if (!first.defined()) {
              first = y;
              EXPECT_TRUE(allclose(y.to(kFloat64), want, tol, tol)) << algo;
            } else {
              EXPECT_TRUE(same_bits(y, first)) << algo << " " << threads;
            }
          }
        }
        EXPECT_EQ(conv::last_choice().algorithm, algo);
        if (std::string(algo) == "im2col_gemm") {
          im2col = first;
        } else if (std::string(algo) == "direct") {
          // Note [Direct and im2col agree].
          EXPECT_TRUE(same_bits(first, im2col));
        }
      }
    }
  }
}

// <conv(x, w), go> = <x, backward_input(go, w)> = <w, backward_weight(go, x)>
// in float64, and finite differences of that bilinear form.
TEST_F(Conv, GradientsAreTheAdjoints) {
  Generator gen;
  gen.manual_seed(2);
  for (const Cfg& f : kCfgs) {
    IntList s{f.s, f.s}, p{f.p, f.p}, d{f.d, f.d};
    Tensor x = randn({f.n, f.c, f.h, f.w}, kFloat64, gen);
    Tensor w = randn({f.o, f.c / f.g, f.kh, f.kw}, kFloat64, gen);
    Tensor y = conv2d(x, w, {}, s, p, d, f.g);
    Tensor go = randn(y.sizes(), kFloat64, gen);
    const double lhs = sum(mul(y, go)).item<double>();
    for (const char* algo : {"gemm_col2im", "direct"}) {
      conv::force_algorithm("backward_input", algo);
      Tensor gi = conv2d_backward_input(go, w, x.sizes(), s, p, d, f.g);
      EXPECT_NEAR(
          sum(mul(x, gi)).item<double>(), lhs, 1e-9 * (1 + std::abs(lhs)))
          << algo;
    }
    for (const char* algo : {"gemm_chunked", "fast"}) {
      conv::force_algorithm("backward_weight", algo);
      Tensor gw = conv2d_backward_weight(go, x, w.sizes(), s, p, d, f.g);
      EXPECT_NEAR(
          sum(mul(w, gw)).item<double>(), lhs, 1e-9 * (1 + std::abs(lhs)))
          << algo;
    }
    // Finite differences of L(x) = <conv(x, w), go> at one input element.
    conv::force_algorithm("backward_input", "");
    Tensor gi = conv2d_backward_input(go, w, x.sizes(), s, p, d, f.g);
    const double h = 1e-4;
    Tensor xp = x.clone(), xm = x.clone();
    const int64_t at = x.numel() / 2;
    xp.data_ptr<double>()[at] += h;
    xm.data_ptr<double>()[at] -= h;
    const double fd =
        (sum(mul(conv2d(xp, w, {}, s, p, d, f.g), go)).item<double>() -
         sum(mul(conv2d(xm, w, {}, s, p, d, f.g), go)).item<double>()) /
        (2 * h);
    EXPECT_NEAR(fd, gi.data_ptr<double>()[at], 1e-6);
  }
}

TEST_F(Conv, GradientAlgorithmsGiveTheSameBitsForAnyThreadCount) {
  Generator gen;
  gen.manual_seed(3);
  const Cfg f{37, 4, 12, 12, 8, 3, 3, 1, 1, 1, 1}; // several sample chunks
  Tensor x = randn({f.n, f.c, f.h, f.w}, kFloat32, gen);
  Tensor w = randn({f.o, f.c, 3, 3}, kFloat32, gen);
  Tensor go = randn({f.n, f.o, 12, 12}, kFloat32, gen);
  for (const char* algo : {"gemm_chunked"}) {
    conv::force_algorithm("backward_weight", algo);
    Tensor first;
    for (CpuCapability cap : test::testable_capabilities()) {
      set_cpu_capability(cap);
      for (int threads : test::test_thread_counts()) {
        set_num_threads(threads);
        Tensor gw = conv2d_backward_weight(go, x, w.sizes(), {1, 1}, {1, 1});
        if (!first.defined()) {
          first = gw;
        }
        EXPECT_TRUE(same_bits(gw, first)) << threads;
      }
    }
    conv::force_algorithm("backward_weight", "fast");
    set_num_threads(2);
    EXPECT_TRUE(allclose(
        conv2d_backward_weight(go, x, w.sizes(), {1, 1}, {1, 1}),
        first,
        1e-4,
        1e-3));
  }
  for (const char* algo : {"gemm_col2im", "direct"}) {
    conv::force_algorithm("backward_input", algo);
    Tensor first;
    for (int threads : test::test_thread_counts()) {
      set_num_threads(threads);
      Tensor gi = conv2d_backward_input(go, w, x.sizes(), {1, 1}, {1, 1});
      if (!first.defined()) {
        first = gi;
      }
      EXPECT_TRUE(same_bits(gi, first)) << algo << " " << threads;
    }
  }
  // The fast weight gradient alerts in deterministic mode.
  use_deterministic_algorithms(true);
  EXPECT_THROW(
      conv2d_backward_weight(go, x, w.sizes(), {1, 1}, {1, 1}),
      NondeterministicError);
}

// Expects f() to give want's bits under every CPU capability, with 1 and 3
// threads.
template <typename F>
void expect_bits_everywhere(F f, const Tensor& want, const std::string& what) {
  for (CpuCapability cap : test::testable_capabilities()) {
    set_cpu_capability(cap);
    for (int threads : {1, 3}) {
      set_num_threads(threads);
      EXPECT_TRUE(same_bits(f(), want))
          << what << " " << cpu_capability_name(cap) << " " << threads;
    }
  }
}

// A configuration's name in failure messages.
std::string cfg_name(const Cfg& f, Dtype dt) {
  std::ostringstream o;
  o << f.c << "x" << f.h << "x" << f.w << " s" << f.s << " p" << f.p << " d"
    << f.d << " g" << f.g << " " << dtype_name(dt);
  return o.str();
}

// The definition of backward-input "direct": each input element one fma
// chain over (oc, ki, kj) in order from 0, with a zero for every tap that
// reaches no output. Its implicit-GEMM path (stride 1, padding within the
// kernel) and its loops must both give exactly these bits.
template <typename T>
Tensor direct_input_chain(const Tensor& go, const Tensor& w, const Cfg& f) {
  const int64_t oh = go.size(2), ow = go.size(3), cg = f.c / f.g,
                og = f.o / f.g;
  Tensor gi = zeros({f.n, f.c, f.h, f.w}, go.dtype());
  const T* gp = go.data_ptr<T>();
  const T* wp = w.data_ptr<T>();
  T* o = gi.data_ptr<T>();
  for (int64_t n = 0; n < f.n; ++n)
    for (int64_t c = 0; c < f.c; ++c)
      for (int64_t iy = 0; iy < f.h; ++iy)
        for (int64_t ix = 0; ix < f.w; ++ix) {
          const int64_t gi_ = c / cg, ci = c % cg;
          T acc = 0;
          for (int64_t oc = gi_ * og; oc < (gi_ + 1) * og; ++oc)
            for (int64_t ki = 0; ki < f.kh; ++ki)
              for (int64_t kj = 0; kj < f.kw; ++kj) {
                const int64_t ny = iy + f.p - ki * f.d,
                              nx = ix + f.p - kj * f.d;
                const bool in = ny >= 0 && nx >= 0 && ny % f.s == 0 &&
                    nx % f.s == 0 && ny / f.s < oh && nx / f.s < ow;
                const T v = in
                    ? gp[((n * f.o + oc) * oh + ny / f.s) * ow + nx / f.s]
                    : T(0);
                acc = std::fma(
                    wp[((oc * cg + ci) * f.kh + ki) * f.kw + kj], v, acc);
              }
          o[((n * f.c + c) * f.h + iy) * f.w + ix] = acc;
        }
  return gi;
}

// The definition of the deterministic weight gradient "gemm_chunked":
// ceil(n / m) chunks of equal samples (the last may be shorter), m =
// max(1, 4096 / (oh ow)); in each chunk, each weight
// one fma chain over (sample, y, x) in order from 0, with zeros for taps in
// the padding; then the chunk partials added in chunk order.
template <typename T>
Tensor chunked_weight_chain(const Tensor& go, const Tensor& x, const Cfg& f) {
  const int64_t oh = go.size(2), ow = go.size(3), cg = f.c / f.g,
                og = f.o / f.g;
  // About 4096 output positions per chunk, the samples shared out evenly.
  const int64_t most = std::max<int64_t>(1, 4096 / (oh * ow));
  const int64_t chunks = (f.n + most - 1) / most;
  const int64_t per = (f.n + chunks - 1) / chunks;
  Tensor gw = zeros({f.o, cg, f.kh, f.kw}, go.dtype());
  const T* gp = go.data_ptr<T>();
  const T* xp = x.data_ptr<T>();
  T* o = gw.data_ptr<T>();
  for (int64_t oc = 0; oc < f.o; ++oc)
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t ki = 0; ki < f.kh; ++ki)
        for (int64_t kj = 0; kj < f.kw; ++kj) {
          const int64_t c = oc / og * cg + ci;
          T total = 0;
          for (int64_t n0 = 0; n0 < f.n; n0 += per) {
            T acc = 0;
            for (int64_t n = n0; n < std::min(f.n, n0 + per); ++n)
              for (int64_t y = 0; y < oh; ++y)
                for (int64_t xo = 0; xo < ow; ++xo) {
                  const int64_t iy = y * f.s - f.p + ki * f.d,
                                ix = xo * f.s - f.p + kj * f.d;
                  const T v = iy >= 0 && iy < f.h && ix >= 0 && ix < f.w
                      ? xp[((n * f.c + c) * f.h + iy) * f.w + ix]
                      : T(0);
                  acc =
                      std::fma(gp[((n * f.o + oc) * oh + y) * ow + xo], v, acc);
                }
            total = n0 == 0 ? acc : T(total + acc);
          }
          o[((oc * cg + ci) * f.kh + ki) * f.kw + kj] = total;
        }
  return gw;
}

TEST_F(Conv, GradientAlgorithmsAreTheirChains) {
  Generator gen;
  gen.manual_seed(10);
  conv::force_algorithm("backward_input", "direct");
  conv::force_algorithm("backward_weight", "gemm_chunked");
  std::vector<Cfg> cfgs = kCfgs;
  cfgs.push_back({37, 4, 12, 12, 8, 3, 3, 1, 1, 1, 1}); // 2 sample chunks
  for (const Cfg& f : cfgs) {
    for (Dtype dt : {kFloat32, kFloat64}) {
      Tensor x = randn({f.n, f.c, f.h, f.w}, dt, gen);
      Tensor w = randn({f.o, f.c / f.g, f.kh, f.kw}, dt, gen);
      const Tensor y =
          conv2d(x, w, {}, {f.s, f.s}, {f.p, f.p}, {f.d, f.d}, f.g);
      Tensor go = randn(y.sizes(), dt, gen);
      const bool f32 = dt == kFloat32;
      expect_bits_everywhere(
          [&] {
            return conv2d_backward_input(
                go, w, x.sizes(), {f.s, f.s}, {f.p, f.p}, {f.d, f.d}, f.g);
          },
          f32 ? direct_input_chain<float>(go, w, f)
              : direct_input_chain<double>(go, w, f),
          "backward input " + cfg_name(f, dt));
      expect_bits_everywhere(
          [&] {
            return conv2d_backward_weight(
                go, x, w.sizes(), {f.s, f.s}, {f.p, f.p}, {f.d, f.d}, f.g);
          },
          f32 ? chunked_weight_chain<float>(go, x, f)
              : chunked_weight_chain<double>(go, x, f),
          "backward weight " + cfg_name(f, dt));
    }
  }
}

// The definition of "winograd_f2x2_3x3", one 4x4 tile at a time: U = G w
// G^T, V = B^T d B, M = sum over the group's channels in order (one fma
// chain from 0), Y = A^T M A, each step rounded in the order written.
template <typename T>
Tensor winograd_definition(const Tensor& x, const Tensor& w, const Cfg& f) {
  const int64_t oh = f.h + 2 * f.p - 2, ow = f.w + 2 * f.p - 2;
  const int64_t cg = f.c / f.g, og = f.o / f.g;
  Tensor y = zeros({f.n, f.o, oh, ow}, x.dtype());
  const T* xp = x.data_ptr<T>();
  const T* wp = w.data_ptr<T>();
  T* yp = y.data_ptr<T>();
  std::vector<T> u(size_t(f.o * cg * 16));
  for (int64_t k = 0; k < f.o * cg; ++k) {
    const T* g = wp + k * 9;
    T t[4][3];
    for (int j = 0; j < 3; ++j) {
      t[0][j] = g[j];
      t[1][j] = T((g[j] + g[3 + j] + g[6 + j]) * T(0.5));
      t[2][j] = T((g[j] - g[3 + j] + g[6 + j]) * T(0.5));
      t[3][j] = g[6 + j];
    }
    for (int i = 0; i < 4; ++i) {
      u[k * 16 + i * 4 + 0] = t[i][0];
      u[k * 16 + i * 4 + 1] = T((t[i][0] + t[i][1] + t[i][2]) * T(0.5));
      u[k * 16 + i * 4 + 2] = T((t[i][0] - t[i][1] + t[i][2]) * T(0.5));
      u[k * 16 + i * 4 + 3] = t[i][2];
    }
  }
  for (int64_t n = 0; n < f.n; ++n)
    for (int64_t oc = 0; oc < f.o; ++oc)
      for (int64_t y0 = 0; y0 < oh; y0 += 2)
        for (int64_t x0 = 0; x0 < ow; x0 += 2) {
          T m[16] = {};
          const int64_t gi = oc / og;
          for (int64_t ci = 0; ci < cg; ++ci) {
            T d[4][4], bd[4][4], v[16];
            for (int i = 0; i < 4; ++i)
              for (int j = 0; j < 4; ++j) {
                const int64_t iy = y0 - f.p + i, ix = x0 - f.p + j;
                d[i][j] = iy >= 0 && iy < f.h && ix >= 0 && ix < f.w
                    ? xp[((n * f.c + gi * cg + ci) * f.h + iy) * f.w + ix]
                    : T(0);
              }
            for (int j = 0; j < 4; ++j) {
              bd[0][j] = T(d[0][j] - d[2][j]);
              bd[1][j] = T(d[1][j] + d[2][j]);
              bd[2][j] = T(d[2][j] - d[1][j]);
              bd[3][j] = T(d[1][j] - d[3][j]);
            }
            for (int i = 0; i < 4; ++i) {
              v[i * 4 + 0] = T(bd[i][0] - bd[i][2]);
              v[i * 4 + 1] = T(bd[i][1] + bd[i][2]);
              v[i * 4 + 2] = T(bd[i][2] - bd[i][1]);
              v[i * 4 + 3] = T(bd[i][1] - bd[i][3]);
            }
            for (int e = 0; e < 16; ++e) {
              m[e] = std::fma(u[(oc * cg + ci) * 16 + e], v[e], m[e]);
            }
          }
          T am[2][4];
          for (int j = 0; j < 4; ++j) {
            am[0][j] = T(T(m[j] + m[4 + j]) + m[8 + j]);
            am[1][j] = T(T(m[4 + j] - m[8 + j]) - m[12 + j]);
          }
          for (int i = 0; i < 2; ++i) {
            const T r[2] = {
                T(T(am[i][0] + am[i][1]) + am[i][2]),
                T(T(am[i][1] - am[i][2]) - am[i][3])};
            for (int j = 0; j < 2; ++j) {
              if (y0 + i < oh && x0 + j < ow) {
                yp[((n * f.o + oc) * oh + y0 + i) * ow + x0 + j] = r[j];
              }
            }
          }
        }
  return y;
}

TEST_F(Conv, WinogradIsItsDefinition) {
  Generator gen;
  gen.manual_seed(11);
  conv::force_algorithm("forward", "winograd_f2x2_3x3");
  // Odd and even output sizes, padding 0 to 2, groups, several sample
  // blocks (512 / tiles samples each).
  for (const Cfg& f : std::vector<Cfg>{
           {3, 4, 9, 8, 6, 3, 3, 1, 1, 1, 1},
           {2, 6, 7, 10, 4, 3, 3, 1, 0, 1, 2},
           {1, 2, 5, 6, 3, 3, 3, 1, 2, 1, 1},
           {23, 3, 12, 12, 5, 3, 3, 1, 1, 1, 1}}) {
    for (Dtype dt : {kFloat32, kFloat64}) {
      Tensor x = randn({f.n, f.c, f.h, f.w}, dt, gen);
      Tensor w = randn({f.o, f.c / f.g, 3, 3}, dt, gen);
      Tensor want = dt == kFloat32 ? winograd_definition<float>(x, w, f)
                                   : winograd_definition<double>(x, w, f);
      expect_bits_everywhere(
          [&] {
            return conv2d(x, w, {}, {1, 1}, {f.p, f.p}, {1, 1}, f.g);
          },
          want,
          cfg_name(f, dt));
    }
  }
}

TEST_F(Conv, Conv1dIsConv2dOverOneRow) {
  Generator gen;
  gen.manual_seed(4);
  Tensor x = randn({2, 4, 30}, kFloat32, gen),
         w = randn({6, 2, 5}, kFloat32, gen);
  Tensor b = randn({6}, kFloat32, gen);
  Tensor y = conv1d(x, w, b, {2}, {3}, {2}, 2);
  Tensor y2 =
      conv2d(x.unsqueeze(2), w.unsqueeze(2), b, {1, 2}, {0, 3}, {1, 2}, 2)
          .squeeze(2);
  EXPECT_TRUE(same_bits(y, y2));
  Tensor go = randn(y.sizes(), kFloat32, gen);
  EXPECT_TRUE(same_bits(
      conv1d_backward_input(go, w, x.sizes(), {2}, {3}, {2}, 2),
      conv2d_backward_input(
          go.unsqueeze(2),
          w.unsqueeze(2),
          {2, 4, 1, 30},
          {1, 2},
          {0, 3},
          {1, 2},
          2)
          .squeeze(2)));
  EXPECT_TRUE(same_bits(
      conv1d_backward_weight(go, x, w.sizes(), {2}, {3}, {2}, 2),
      conv2d_backward_weight(
          go.unsqueeze(2),
          x.unsqueeze(2),
          {6, 2, 1, 5},
          {1, 2},
          {0, 3},
          {1, 2},
          2)
          .squeeze(2)));
}

TEST_F(Conv, BenchmarkTimesThenCachesAndReplaysFromAFile) {
  Generator gen;
  gen.manual_seed(5);
  Tensor x = randn({4, 8, 14, 14}, kFloat32, gen),
         w = randn({16, 8, 3, 3}, kFloat32, gen);
  conv::force_algorithm("forward", "");
  conv2d(x, w, {}, {1, 1}, {1, 1});
  EXPECT_EQ(conv::last_choice().source, conv::ChoiceSource::Heuristic);
  EXPECT_EQ(conv::last_choice().algorithm, "im2col_gemm");
  conv::benchmark(true);
  conv2d(x, w, {}, {1, 1}, {1, 1});
  const conv::Choice timed = conv::last_choice();
  EXPECT_EQ(timed.source, conv::ChoiceSource::Timed);
  conv2d(x, w, {}, {1, 1}, {1, 1});
  EXPECT_EQ(conv::last_choice().source, conv::ChoiceSource::Cached);
  EXPECT_EQ(conv::last_choice().algorithm, timed.algorithm);
  // Deterministic: the fast weight gradient is never a candidate.
  conv::deterministic(true);
  std::vector<std::string> warnings;
  determinism::set_warning_handler([&](std::string_view op, std::string_view) {
    warnings.emplace_back(op);
  });
  Tensor go = randn({4, 16, 14, 14}, kFloat32, gen);
  for (int i = 0; i < 3; ++i) {
    conv2d_backward_weight(go, x, w.sizes(), {1, 1}, {1, 1});
    EXPECT_EQ(conv::last_choice().algorithm, "gemm_chunked");
  }
  EXPECT_EQ(warnings, std::vector<std::string>{"conv (benchmark)"});
  conv::deterministic(false);
  // Save, forget, load, replay: nothing is timed.
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("ditto_tuning_" + std::to_string(::getpid()) + ".json"))
          .string();
  conv::save_tuning_cache(path);
  conv::clear_tuning_cache();
  ASSERT_TRUE(conv::load_tuning_cache(path));
  conv::replay_only(true);
  conv2d(x, w, {}, {1, 1}, {1, 1});
  EXPECT_EQ(conv::last_choice().source, conv::ChoiceSource::Replayed);
  EXPECT_EQ(conv::last_choice().algorithm, timed.algorithm);
  // A corrupt or foreign file is reported and changes nothing.
  warnings.clear();
  std::ofstream(path)
      << "{\"format\": \"ditto.conv_tuning_cache\", \"version\": 1, \"entr";
  EXPECT_FALSE(conv::load_tuning_cache(path));
  std::ofstream(path)
      << "{\"format\": \"ditto.conv_tuning_cache\", \"version\": 2}";
  EXPECT_FALSE(conv::load_tuning_cache(path));
  const char* foreign =
      get_cpu_capability() == CpuCapability::Neon ? "avx2" : "neon";
  std::ofstream(path)
      << "{\"format\": \"ditto.conv_tuning_cache\", \"version\": 1, "
         "\"cpu_capability\": \""
      << foreign << "\", \"threads\": 1, \"entries\": {}}";
  EXPECT_FALSE(conv::load_tuning_cache(path));
  EXPECT_EQ(warnings.size(), 3u);
  conv2d(x, w, {}, {1, 1}, {1, 1});
  EXPECT_EQ(conv::last_choice().source, conv::ChoiceSource::Replayed);
  // An entry naming an algorithm that does not apply (Winograd for a 5x5
  // kernel) is not replayed: the call times its candidates instead.
  Tensor w5 = randn({16, 8, 5, 5}, kFloat32, gen);
  conv::benchmark(false);
  conv2d(x, w5, {}, {1, 1}, {2, 2});
  conv::benchmark(true);
  conv::save_tuning_cache(path);
  {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    // Rewrite this key's choice (timed above? no: add it by hand).
    const std::string key =
        "forward|float32|in=4x8x14x14|w=16x8x5x5|s=1,1|p=2,2|d=1,1|g=1|t=" +
        std::to_string(get_num_threads()) + "|det=0";
    const size_t at = text.find("\"entries\": {");
    ASSERT_NE(at, std::string::npos) << text;
    text.insert(at + 13, "\n  \"" + key + "\": \"winograd_f2x2_3x3\",");
    std::ofstream(path) << text;
  }
  ASSERT_TRUE(conv::load_tuning_cache(path));
  conv2d(x, w5, {}, {1, 1}, {2, 2});
  EXPECT_EQ(conv::last_choice().source, conv::ChoiceSource::Timed);
  EXPECT_NE(conv::last_choice().algorithm, "winograd_f2x2_3x3");
  std::filesystem::remove(path);
  EXPECT_FALSE(conv::load_tuning_cache(path));
  EXPECT_THROW(conv::force_algorithm("forward", "fft"), ValueError);
  EXPECT_THROW(conv::benchmark_limit(-1), ValueError);
}

TEST_F(Conv, BadInput) {
  Tensor x = zeros({2, 4, 8, 8}), w = zeros({6, 2, 3, 3});
  EXPECT_THROW(conv2d(x, w), ValueError); // 4 channels, weight wants 2
  EXPECT_THROW(conv2d(x, w, {}, {1, 1}, {0, 0}, {1, 1}, 3), ValueError);
  EXPECT_NO_THROW(conv2d(x, w, {}, {1, 1}, {0, 0}, {1, 1}, 2));
  EXPECT_THROW(conv2d(x.view({8, 8, 8}), w), ValueError);
  EXPECT_THROW(conv2d(x, w, {}, {0, 1}, {0, 0}, {1, 1}, 2), ValueError);
  EXPECT_THROW(conv2d(x, w, {}, {1, 1}, {-1, 0}, {1, 1}, 2), ValueError);
  EXPECT_THROW(
      conv2d(x, zeros({6, 2, 9, 9}), {}, {1, 1}, {0, 0}, {1, 1}, 2),
      ValueError);
  EXPECT_THROW(
      conv2d(x, w.to(kFloat64), {}, {1, 1}, {0, 0}, {1, 1}, 2), TypeError);
  EXPECT_THROW(conv2d(x, w, zeros({5}), {1, 1}, {0, 0}, {1, 1}, 2), ValueError);
  EXPECT_THROW(
      conv2d_backward_input(
          zeros({2, 6, 5, 5}), w, {2, 4, 8, 8}, {1, 1}, {0, 0}, {1, 1}, 2),
      ValueError);
}
