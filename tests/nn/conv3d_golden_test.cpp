// conv3d and conv_transpose3d against PyTorch 1.13 (float64 values and
// gradients; the initial parameters of Conv3d and ConvTranspose3d bit for
// bit, and their repr), and against Note [conv3d's one chain]: every
// direction equals, bit for bit, the serial loop of the chain the note
// names, in float32 and float64, at 1, 2 and 3 threads.
// tests/nn/gen_conv3d_golden.py wrote the fixture
// (tests/nn/conv3d_golden.json).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ditto/ditto.h"
#include "tests/nn/fixture.h"

namespace ditto {
namespace {

namespace F = ditto::nn::functional;
using nlohmann::json;

const json& conv3d_golden() {
  static const json j = [] {
    std::ifstream in(
        std::string(DITTO_TEST_DATA_DIR) + "/nn/conv3d_golden.json");
    return json::parse(in);
  }();
  return j;
}

struct Args3 {
  IntList stride{1, 1, 1}, padding{0, 0, 0}, dilation{1, 1, 1},
      output_padding{0, 0, 0};
  int64_t groups = 1;
};

IntList three_of(const json& a, const char* key, int64_t fallback) {
  if (!a.contains(key)) {
    return {fallback, fallback, fallback};
  }
  const json& v = a[key];
  if (v.is_array()) {
    const IntList l = v.get<IntList>();
    return l.size() == 1 ? IntList{l[0], l[0], l[0]} : l;
  }
  const int64_t k = v.get<int64_t>();
  return {k, k, k};
}

Args3 args_of(const json& c) {
  const json& a = c["args"];
  Args3 r;
  r.stride = three_of(a, "stride", 1);
  r.padding = three_of(a, "padding", 0);
  r.dilation = three_of(a, "dilation", 1);
  r.output_padding = three_of(a, "output_padding", 0);
  r.groups = a.value("groups", int64_t(1));
  return r;
}

bool bits_equal(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) {
    return false;
  }
  Tensor x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) == 0;
}

// ---- The serial chains of Note [conv3d's one chain].

struct Dims {
  int64_t n, c, o, groups, cg, og;
  int64_t in[3], k[3], out[3];
  Args3 a;
};

Dims dims_of(const Shape& x, const Shape& w, const Args3& a) {
  Dims d{};
  d.n = x[0];
  d.c = x[1];
  d.o = w[0];
  d.groups = a.groups;
  d.cg = d.c / d.groups;
  d.og = d.o / d.groups;
  d.a = a;
  for (int i = 0; i < 3; ++i) {
    d.in[i] = x[size_t(2 + i)];
    d.k[i] = w[size_t(2 + i)];
    d.out[i] = (d.in[i] + 2 * a.padding[size_t(i)] -
                a.dilation[size_t(i)] * (d.k[i] - 1) - 1) /
            a.stride[size_t(i)] +
        1;
  }
  return d;
}

// Input coordinate of output position p's tap k along dim i, or -1
// outside.
int64_t at(const Dims& d, int i, int64_t p, int64_t k) {
  const int64_t v = p * d.a.stride[size_t(i)] - d.a.padding[size_t(i)] +
      k * d.a.dilation[size_t(i)];
  return v >= 0 && v < d.in[i] ? v : -1;
}

// Forward: each output the chain over (ci, kz, ky, kx) from 0.
template <typename T>
Tensor ref_forward(const Tensor& x, const Tensor& w, const Dims& d) {
  Tensor y = zeros({d.n, d.o, d.out[0], d.out[1], d.out[2]}, dtype_of<T>);
  const T* xp = x.data_ptr<T>();
  const T* wp = w.data_ptr<T>();
  T* yp = y.data_ptr<T>();
  const int64_t iv = d.in[0] * d.in[1] * d.in[2];
  for (int64_t ni = 0; ni < d.n; ++ni) {
    for (int64_t oc = 0; oc < d.o; ++oc) {
      const int64_t gi = oc / d.og;
      for (int64_t z = 0; z < d.out[0]; ++z) {
        for (int64_t y0 = 0; y0 < d.out[1]; ++y0) {
          for (int64_t x0 = 0; x0 < d.out[2]; ++x0) {
            T acc = 0;
            for (int64_t ci = 0; ci < d.cg; ++ci) {
              const T* xs = xp + (ni * d.c + gi * d.cg + ci) * iv;
              for (int64_t kz = 0; kz < d.k[0]; ++kz) {
                for (int64_t ky = 0; ky < d.k[1]; ++ky) {
                  for (int64_t kx = 0; kx < d.k[2]; ++kx) {
                    const int64_t iz = at(d, 0, z, kz), iy = at(d, 1, y0, ky),
                                  ix = at(d, 2, x0, kx);
                    const T v = iz < 0 || iy < 0 || ix < 0
                        ? T(0)
                        : xs[(iz * d.in[1] + iy) * d.in[2] + ix];
                    const T wv =
                        wp[(((oc * d.cg + ci) * d.k[0] + kz) * d.k[1] + ky) *
                               d.k[2] +
                           kx];
                    acc = std::fma(wv, v, acc);
                  }
                }
              }
            }
            *yp++ = acc;
          }
        }
      }
    }
  }
  return y;
}

// Weight gradient: each weight the chain over (n, z, y, x) from 0.
template <typename T>
Tensor ref_weight_grad(const Tensor& gy, const Tensor& x, const Dims& d) {
  Tensor gw = zeros({d.o, d.cg, d.k[0], d.k[1], d.k[2]}, dtype_of<T>);
  const T* gp = gy.data_ptr<T>();
  const T* xp = x.data_ptr<T>();
  T* out = gw.data_ptr<T>();
  const int64_t iv = d.in[0] * d.in[1] * d.in[2];
  const int64_t ov = d.out[0] * d.out[1] * d.out[2];
  for (int64_t oc = 0; oc < d.o; ++oc) {
    const int64_t gi = oc / d.og;
    for (int64_t ci = 0; ci < d.cg; ++ci) {
      for (int64_t kz = 0; kz < d.k[0]; ++kz) {
        for (int64_t ky = 0; ky < d.k[1]; ++ky) {
          for (int64_t kx = 0; kx < d.k[2]; ++kx) {
            T acc = 0;
            for (int64_t ni = 0; ni < d.n; ++ni) {
              const T* xs = xp + (ni * d.c + gi * d.cg + ci) * iv;
              const T* gs = gp + (ni * d.o + oc) * ov;
              for (int64_t z = 0; z < d.out[0]; ++z) {
                for (int64_t y0 = 0; y0 < d.out[1]; ++y0) {
                  for (int64_t x0 = 0; x0 < d.out[2]; ++x0) {
                    const int64_t iz = at(d, 0, z, kz), iy = at(d, 1, y0, ky),
                                  ix = at(d, 2, x0, kx);
                    const T v = iz < 0 || iy < 0 || ix < 0
                        ? T(0)
                        : xs[(iz * d.in[1] + iy) * d.in[2] + ix];
                    acc = std::fma(
                        gs[(z * d.out[1] + y0) * d.out[2] + x0], v, acc);
                  }
                }
              }
            }
            *out++ = acc;
          }
        }
      }
    }
  }
  return gw;
}

// Input gradient. Unit strides with padding within the kernel's reach: the
// chain over (oc, kz, ky, kx) from 0. Otherwise: for each slab of output
// planes in order (conv3d.cpp's slab_planes: about 2^18 column values per
// slab), each tap in order, the chain over oc of its one output position
// (the columns), added.
template <typename T>
Tensor ref_input_grad(const Tensor& gy, const Tensor& w, const Dims& d) {
  bool transposed = true;
  for (int i = 0; i < 3; ++i) {
    transposed = transposed && d.a.stride[size_t(i)] == 1 &&
        d.a.padding[size_t(i)] <= (d.k[i] - 1) * d.a.dilation[size_t(i)];
  }
  Tensor gx = zeros({d.n, d.c, d.in[0], d.in[1], d.in[2]}, dtype_of<T>);
  const T* gp = gy.data_ptr<T>();
  const T* wp = w.data_ptr<T>();
  T* out = gx.data_ptr<T>();
  const int64_t ov = d.out[0] * d.out[1] * d.out[2];
  const int64_t taps = d.k[0] * d.k[1] * d.k[2];
  const int64_t slab = std::clamp<int64_t>(
      (int64_t(1) << 18) /
          std::max<int64_t>(d.cg * taps * d.out[1] * d.out[2], 1),
      1,
      std::max<int64_t>(d.out[0], 1));
  // The output position whose tap k lands on input coordinate v along
  // dim i, or -1.
  auto from = [&](int i, int64_t v, int64_t k) -> int64_t {
    const int64_t t = v + d.a.padding[size_t(i)] - k * d.a.dilation[size_t(i)];
    const int64_t s = d.a.stride[size_t(i)];
    return t >= 0 && t % s == 0 && t / s < d.out[i] ? t / s : -1;
  };
  for (int64_t ni = 0; ni < d.n; ++ni) {
    for (int64_t c = 0; c < d.c; ++c) {
      const int64_t gi = c / d.cg, ci = c % d.cg;
      for (int64_t iz = 0; iz < d.in[0]; ++iz) {
        for (int64_t iy = 0; iy < d.in[1]; ++iy) {
          for (int64_t ix = 0; ix < d.in[2]; ++ix) {
            T sum = 0;
            if (transposed) {
              for (int64_t oc = 0; oc < d.og; ++oc) {
                const int64_t o = gi * d.og + oc;
                for (int64_t t = 0; t < taps; ++t) {
                  const int64_t kz = t / (d.k[1] * d.k[2]),
                                ky = t / d.k[2] % d.k[1], kx = t % d.k[2];
                  const int64_t z = from(0, iz, kz), y0 = from(1, iy, ky),
                                x0 = from(2, ix, kx);
                  const T v = z < 0 || y0 < 0 || x0 < 0
                      ? T(0)
                      : gp[(ni * d.o + o) * ov +
                           (z * d.out[1] + y0) * d.out[2] + x0];
                  sum = std::fma(wp[(o * d.cg + ci) * taps + t], v, sum);
                }
              }
            } else {
              for (int64_t t = 0; t < taps * d.out[0]; ++t) {
                const int64_t s = t / taps; // the slab, then the tap
                const int64_t kz = t % taps / (d.k[1] * d.k[2]),
                              ky = t / d.k[2] % d.k[1], kx = t % d.k[2];
                const int64_t z = from(0, iz, kz), y0 = from(1, iy, ky),
                              x0 = from(2, ix, kx);
                if (z < 0 || y0 < 0 || x0 < 0 || z / slab != s) {
                  continue;
                }
                T col = 0;
                for (int64_t oc = 0; oc < d.og; ++oc) {
                  const int64_t o = gi * d.og + oc;
                  col = std::fma(
                      wp[(o * d.cg + ci) * taps + t % taps],
                      gp[(ni * d.o + o) * ov + (z * d.out[1] + y0) * d.out[2] +
                         x0],
                      col);
                }
                sum = T(sum + col);
              }
            }
            *out++ = sum;
          }
        }
      }
    }
  }
  return gx;
}

class Conv3dGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    threads_ = get_num_threads();
  }
  void TearDown() override {
    set_num_threads(threads_);
  }
  int threads_ = 1;
};

TEST_F(Conv3dGolden, ValuesAndGradientsMatchPyTorch) {
  for (const json& c : conv3d_golden()["conv3d"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const Args3 a = args_of(c);
    Tensor x = test::f64(c["x"], c["x_sizes"].get<Shape>()).requires_grad_();
    Tensor w = test::f64(c["w"], c["w_sizes"].get<Shape>()).requires_grad_();
    Tensor b =
        test::f64(c["b"], {c["w_sizes"][0].get<int64_t>()}).requires_grad_();
    Tensor y = conv3d(x, w, b, a.stride, a.padding, a.dilation, a.groups);
    test::expect_close(y, c["y"]);
    y.backward(test::f64(c["grad_y"], c["y_sizes"].get<Shape>()));
    test::expect_close(x.grad(), c["grad_x"]);
    test::expect_close(w.grad(), c["grad_w"]);
    test::expect_close(b.grad(), c["grad_b"]);
  }
  for (const json& c : conv3d_golden()["conv_transpose3d"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const Args3 a = args_of(c);
    Tensor x = test::f64(c["x"], c["x_sizes"].get<Shape>()).requires_grad_();
    Tensor w = test::f64(c["w"], c["w_sizes"].get<Shape>()).requires_grad_();
    Tensor b = test::f64(c["b"], {int64_t(c["b"].size())}).requires_grad_();
    Tensor y = conv_transpose3d(
        x, w, b, a.stride, a.padding, a.output_padding, a.groups, a.dilation);
    ASSERT_EQ(y.sizes(), c["y_sizes"].get<Shape>());
    test::expect_close(y, c["y"]);
    y.backward(test::f64(c["grad_y"], c["y_sizes"].get<Shape>()));
    test::expect_close(x.grad(), c["grad_x"]);
    test::expect_close(w.grad(), c["grad_w"]);
    test::expect_close(b.grad(), c["grad_b"]);
  }
}

// Each direction is the note's serial chain, bit for bit, in both dtypes,
// for any thread count: the algorithms the shapes choose (implicit GEMM,
// direct tiles, columns, shifted volumes, the flipped forward) agree.
template <typename T>
void check_chains(const json& c) {
  const Args3 a = args_of(c);
  const Dtype dt = dtype_of<T>;
  Tensor x = test::f64(c["x"], c["x_sizes"].get<Shape>()).to(dt);
  Tensor w = test::f64(c["w"], c["w_sizes"].get<Shape>()).to(dt);
  Tensor gy = test::f64(c["grad_y"], c["y_sizes"].get<Shape>()).to(dt);
  const Dims d = dims_of(x.sizes(), w.sizes(), a);
  const Tensor want_y = ref_forward<T>(x, w, d);
  const Tensor want_gx = ref_input_grad<T>(gy, w, d);
  const Tensor want_gw = ref_weight_grad<T>(gy, x, d);
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    set_num_threads(threads);
    EXPECT_TRUE(bits_equal(
        conv3d(x, w, {}, a.stride, a.padding, a.dilation, a.groups), want_y));
    EXPECT_TRUE(bits_equal(
        conv3d_backward_input(
            gy, w, x.sizes(), a.stride, a.padding, a.dilation, a.groups),
        want_gx));
    EXPECT_TRUE(bits_equal(
        conv3d_backward_weight(
            gy, x, w.sizes(), a.stride, a.padding, a.dilation, a.groups),
        want_gw));
  }
}

TEST_F(Conv3dGolden, EveryDirectionIsTheNotesSerialChain) {
  for (const json& c : conv3d_golden()["conv3d"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    check_chains<float>(c);
    check_chains<double>(c);
  }
}

// Wide enough for the float32 direct tiles in all three directions (32
// output channels, 32 input channels) and for several tasks of each.
TEST_F(Conv3dGolden, WideChannelsAreTheSerialChainToo) {
  Generator g = Generator::philox(11);
  for (const IntList& stride : {IntList{1}, IntList{1, 2, 1}}) {
    json c;
    c["args"] = {{"padding", 1}, {"stride", stride}};
    // 2 x 8 x 12 x 12 positions: more than one run of the direct weight
    // gradient (kDirectSteps), so its chains continue across runs.
    Tensor x = randn({2, 32, 8, 12, 12}, kFloat64, g);
    Tensor w = randn({32, 32, 3, 3, 3}, kFloat64, g);
    Args3 a;
    a.stride = stride.size() == 1 ? IntList{1, 1, 1} : stride;
    a.padding = {1, 1, 1};
    const Dims d = dims_of(x.sizes(), w.sizes(), a);
    Tensor gy = randn({2, 32, d.out[0], d.out[1], d.out[2]}, kFloat64, g);
    auto list = [](const Tensor& t) {
      std::vector<double> v(size_t(t.numel()));
      std::memcpy(v.data(), t.contiguous().raw_data(), t.nbytes());
      return json(v);
    };
    c["x"] = list(x);
    c["w"] = list(w);
    c["grad_y"] = list(gy);
    c["x_sizes"] = x.sizes();
    c["w_sizes"] = w.sizes();
    c["y_sizes"] = gy.sizes();
    check_chains<float>(c);
  }
}

TEST_F(Conv3dGolden, LayersDrawPyTorchsInitialParameters) {
  for (const json& c : conv3d_golden()["init"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name + " seed " + std::to_string(c["seed"].get<int>()));
    manual_seed(c["seed"].get<uint64_t>());
    std::shared_ptr<nn::Module> m;
    Tensor weight, bias;
    if (name == "conv3d_4_8_3") {
      auto l = std::make_shared<nn::Conv3dImpl>(4, 8, 3, 1, 1);
      weight = l->weight, bias = l->bias, m = l;
    } else if (name == "conv3d_6_4_k232_g2") {
      auto l = std::make_shared<nn::Conv3dImpl>(
          nn::Conv3dOptions(6, 4, {2, 3, 2}).stride({2}).groups(2).bias(false));
      weight = l->weight, bias = l->bias, m = l;
    } else if (name == "convtranspose3d_4_6_3_s2") {
      auto l = std::make_shared<nn::ConvTranspose3dImpl>(4, 6, 3, 2, 1, 1);
      weight = l->weight, bias = l->bias, m = l;
    } else {
      auto l = std::make_shared<nn::ConvTranspose3dImpl>(
          nn::ConvTranspose3dOptions(4, 6, {2, 1, 3})
              .groups(2)
              .dilation({1, 2, 1}));
      weight = l->weight, bias = l->bias, m = l;
    }
    EXPECT_EQ(weight.sizes(), c["weight_sizes"].get<Shape>());
    EXPECT_TRUE(bits_equal(
        weight,
        tensor(test::fixture_doubles(c["weight"]))
            .to(kFloat32)
            .view(weight.sizes())));
    if (c["bias"].is_null()) {
      EXPECT_FALSE(bias.defined());
    } else {
      EXPECT_TRUE(bits_equal(
          bias, tensor(test::fixture_doubles(c["bias"])).to(kFloat32)));
    }
    EXPECT_EQ(m->repr(), c["repr"].get<std::string>());
  }
}

TEST_F(Conv3dGolden, BadArgumentsNameTheOpAndChangeNothing) {
  Tensor x = ones({1, 2, 4, 4, 4});
  Tensor w = ones({3, 2, 2, 2, 2});
  EXPECT_THROW(conv3d(x, ones({3, 2, 2, 2})), ValueError);
  EXPECT_THROW(conv3d(x, ones({3, 3, 2, 2, 2})), ValueError);
  EXPECT_THROW(conv3d(x, w, {}, {1, 1}), ValueError);
  EXPECT_THROW(conv3d(x, w, {}, {0}), ValueError);
  EXPECT_THROW(conv3d(x, ones({3, 2, 5, 2, 2})), ValueError);
  EXPECT_THROW(conv3d(x, w.to(kFloat64)), TypeError);
  EXPECT_THROW(conv3d(x, w, ones({4})), ValueError);
  EXPECT_THROW(
      conv3d(x, w, {}, {1}, {int64_t(1) << 62}), ValueError); // overflow
  EXPECT_THROW(
      conv3d_backward_input(ones({1, 3, 2, 3, 3}), w, x.sizes()), ValueError);
  EXPECT_THROW(
      conv3d_backward_weight(ones({1, 3, 3, 3, 3}), x, {3, 2, 2, 2}),
      ValueError);
  EXPECT_THROW(conv_transpose3d(x, w), ValueError); // 3 input channels
  EXPECT_THROW(
      conv_transpose3d(x, w.transpose(0, 1), {}, {1}, {0}, {1}), ValueError);
  try {
    conv3d(x, ones({3, 3, 2, 2, 2}));
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("conv3d"), std::string::npos);
  }
}

} // namespace
} // namespace ditto
