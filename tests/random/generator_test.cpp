#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "ditto/ditto.h"

using namespace ditto;

namespace {

// tests/random/golden.{bin,txt}, made by gen_golden.py from PyTorch 1.13.
struct Golden {
  std::map<std::string, std::vector<uint8_t>> bytes;
  Golden() {
    std::ifstream idx(DITTO_TEST_DATA_DIR "/random/golden.txt");
    std::ifstream bin(
        DITTO_TEST_DATA_DIR "/random/golden.bin", std::ios::binary);
    std::string line;
    while (std::getline(idx, line)) {
      if (line.empty() || line[0] == '#') {
        continue;
      }
      std::istringstream ls(line);
      std::string name, dtype;
      size_t off = 0, n = 0;
      ls >> name >> dtype >> off >> n;
      std::vector<uint8_t> b(n);
      bin.seekg(std::streamoff(off));
      bin.read(reinterpret_cast<char*>(b.data()), std::streamsize(n));
      bytes[name] = b;
    }
  }
  const std::vector<uint8_t>& at(const std::string& name) const {
    auto it = bytes.find(name);
    if (it == bytes.end()) {
      throw std::runtime_error("no golden case " + name);
    }
    return it->second;
  }
};

const Golden& golden() {
  static Golden g;
  return g;
}

std::vector<uint8_t> bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  auto p = static_cast<const uint8_t*>(c.raw_data());
  return std::vector<uint8_t>(p, p + c.nbytes());
}

Tensor uint8_tensor(const std::vector<uint8_t>& b) {
  return tensor(b);
}

} // namespace

TEST(MT19937, MatchesStdMt19937AndReferenceWords) {
  for (uint64_t seed :
       {uint64_t(0),
        uint64_t(42),
        kDefaultGeneratorSeed,
        (uint64_t(1) << 32) + 3}) {
    random::MT19937 e(seed);
    std::mt19937 ref(static_cast<uint32_t>(seed));
    for (int i = 0; i < 2000; ++i) {
      ASSERT_EQ(e(), ref()) << "seed " << seed << " draw " << i;
    }
    EXPECT_EQ(e.seed(), seed);
  }
  random::MT19937 e0(0);
  EXPECT_EQ(e0(), 2357136044u);
  EXPECT_EQ(e0(), 2546248239u);
  random::MT19937 d(kDefaultGeneratorSeed);
  EXPECT_EQ(d(), 2353294710u);
}

TEST(Random, RandMatchesPyTorchBitForBit) {
  const int64_t sizes[] = {1, 3, 15, 16, 17, 31, 100, 1000, 4099};
  for (int64_t seed :
       {int64_t(0),
        int64_t(1),
        int64_t(42),
        (int64_t(1) << 32) + 5,
        int64_t(-1)}) {
    for (Dtype dt : {kFloat32, kFloat64}) {
      manual_seed(uint64_t(seed));
      std::vector<Tensor> parts;
      for (int64_t n : sizes) {
        parts.push_back(rand({n}, dt));
      }
      std::string name = "rand_seed" + std::to_string(seed) + "_" +
          std::string(dtype_name(dt));
      EXPECT_EQ(bytes_of(cat(parts)), golden().at(name)) << name;
    }
  }
}

TEST(Random, ReadmeValues) {
  manual_seed(0);
  Tensor a = rand({3});
  EXPECT_EQ(a.to_string(), "tensor([0.4963, 0.7682, 0.0885])");
  EXPECT_EQ(initial_seed(), 0u);
  manual_seed(uint64_t(-1));
  EXPECT_EQ(initial_seed(), 0xFFFFFFFFFFFFFFFFull);
}

TEST(Random, UniformWithBoundsUsesPyTorchsFusedMultiplyAdd) {
  manual_seed(0);
  Tensor a = empty({5000});
  a.uniform_(-0.1, 0.1);
  EXPECT_EQ(bytes_of(a), golden().at("uniform_m0.1_0.1_seed0_float32"));
  manual_seed(3);
  Tensor b = empty({5000});
  b.uniform_(2, 5);
  EXPECT_EQ(bytes_of(b), golden().at("uniform_2_5_seed3_float32"));
  manual_seed(3);
  Tensor c = empty({3000}, kFloat64);
  c.uniform_(-3, 7.5);
  EXPECT_EQ(bytes_of(c), golden().at("uniform_m3_7.5_seed3_float64"));
}

TEST(Random, GeneratorObjects) {
  Generator g; // PyTorch's default seed 67280421310721
  EXPECT_EQ(g.initial_seed(), kDefaultGeneratorSeed);
  EXPECT_EQ(
      bytes_of(rand({3}, kFloat32, g)),
      golden().at("rand_new_generator_float32"));
  Generator h;
  h.manual_seed(99);
  EXPECT_EQ(
      bytes_of(rand({2, 5}, kFloat32, h)),
      golden().at("rand_generator99_float32"));
  // Copies share; clone copies the state.
  Generator a;
  Generator shared = a;
  Generator copy = a.clone();
  rand({10}, kFloat32, shared);
  EXPECT_TRUE(
      equal(rand({4}, kFloat32, copy), rand({4}, kFloat32, Generator())));
  EXPECT_FALSE(equal(rand({4}, kFloat32, a), rand({4}, kFloat32, Generator())));
}

TEST(Random, NonContiguousFillsInMemoryOrder) {
  manual_seed(7);
  Tensor x = empty({3, 4}).t();
  x.uniform_();
  EXPECT_EQ(bytes_of(x), golden().at("uniform_transposed_seed7_float32"));
}

TEST(Random, StateIsByteCompatibleWithPyTorch) {
  manual_seed(0);
  rand({5});
  EXPECT_EQ(bytes_of(get_rng_state()), golden().at("state_after_seed0_rand5"));
  // A state saved by PyTorch (with a cached normal) loads, round-trips and
  // continues identically.
  const auto& blob = golden().at("state_seed123_mid");
  Generator g;
  g.set_state(uint8_tensor(blob));
  EXPECT_EQ(bytes_of(g.get_state()), blob);
  EXPECT_EQ(g.initial_seed(), 123u);
  EXPECT_EQ(
      bytes_of(rand({20}, kFloat32, g)),
      golden().at("rand_after_state_seed123_float32"));
}

TEST(Random, SetStateMidStreamRoundTrips) {
  Generator g;
  g.manual_seed(5);
  rand({777}, kFloat64, g);
  Tensor s = g.get_state();
  Tensor a = rand({1000}, kFloat32, g);
  g.set_state(s);
  EXPECT_TRUE(equal(rand({1000}, kFloat32, g), a));
}

TEST(Random, BadStateLeavesTheGeneratorUnchanged) {
  Generator g;
  g.manual_seed(11);
  Tensor before = g.get_state();
  EXPECT_THROW(g.set_state(zeros({100}, kUInt8)), ValueError);
  EXPECT_THROW(g.set_state(zeros({5056}, kFloat32)), TypeError);
  std::vector<uint8_t> bad = bytes_of(before);
  int32_t left = 0; // PyTorch rejects left outside (0, 624]
  std::memcpy(bad.data() + 8, &left, 4);
  EXPECT_THROW(g.set_state(uint8_tensor(bad)), ValueError);
  EXPECT_EQ(bytes_of(g.get_state()), bytes_of(before));
}

TEST(Random, BadArguments) {
  EXPECT_THROW(rand({2}, kInt64), TypeError);
  EXPECT_THROW(rand({-1}), ValueError);
  Tensor t = zeros({3});
  manual_seed(1);
  Tensor before = get_rng_state();
  EXPECT_THROW(t.uniform_(1, 0), ValueError);
  EXPECT_THROW(zeros({3}, kInt32).uniform_(), TypeError);
  EXPECT_EQ(bytes_of(get_rng_state()), bytes_of(before));
  EXPECT_EQ(sum(t).item<float>(), 0.0f);
}

TEST(Random, GuardAndForkRng) {
  manual_seed(3);
  Tensor expected = rand({5});
  manual_seed(3);
  {
    ForkRng fork;
    rand({100});
    manual_seed(77);
  }
  EXPECT_TRUE(equal(rand({5}), expected));
  manual_seed(3);
  Generator worker;
  {
    GeneratorGuard guard(worker);
    manual_seed(9); // seeds the worker's generator only
    EXPECT_EQ(initial_seed(), 9u);
    EXPECT_EQ(default_generator(), worker);
  }
  EXPECT_EQ(initial_seed(), 3u);
  EXPECT_TRUE(equal(rand({5}), expected));
  EXPECT_EQ(worker.initial_seed(), 9u);
}

TEST(Random, ConcurrentUseIsSerialized) {
  Generator g;
  g.manual_seed(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < 50; ++k) {
        rand({100}, kFloat32, g);
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  // 4 * 50 * 100 draws in some order: the state equals 20000 serial draws.
  Generator ref;
  ref.manual_seed(1);
  rand({20000}, kFloat32, ref);
  EXPECT_EQ(bytes_of(g.get_state()), bytes_of(ref.get_state()));
}

void expect_randn_matches_pytorch(Dtype dt) {
  const int64_t sizes[] = {1, 3, 15, 16, 17, 31, 100, 1000, 4099};
  for (int64_t seed : {int64_t(0), int64_t(42), int64_t(-1)}) {
    manual_seed(uint64_t(seed));
    std::vector<Tensor> parts;
    for (int64_t n : sizes) {
      parts.push_back(randn({n}, dt));
    }
    std::string name =
        "randn_seed" + std::to_string(seed) + "_" + std::string(dtype_name(dt));
    EXPECT_EQ(bytes_of(cat(parts)), golden().at(name)) << name;
  }
}

TEST(Random, RandnMatchesPyTorchOnEveryPath) {
  expect_randn_matches_pytorch(kFloat32);
  manual_seed(0);
  EXPECT_EQ(randn({3}).to_string(), "tensor([ 1.5410, -0.2934, -2.1788])");
}

// float64 normals go through glibc's log, sin and cos, as PyTorch's do
// (Note [Whose libm] in ditto/ops/detail/random_fill.h). The goldens come from
// a CPU with FMA; on x86-64 CPUs without it glibc runs other variants, and
// PyTorch's own bits differ there as ditto's do.
TEST(Random, RandnFloat64MatchesPyTorchWhereGlibcHasFma) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("fma") || !__builtin_cpu_supports("avx2")) {
    GTEST_SKIP() << "float64 randn uses glibc's non-FMA log/sin/cos on this "
                    "CPU; PyTorch's own bits differ here too "
                    "(docs/numerics.md, libm calls)";
  }
#endif
  expect_randn_matches_pytorch(kFloat64);
}

TEST(Random, NormalWithMeanAndStdMatchesPyTorch) {
  for (Dtype dt : {kFloat32, kFloat64}) {
    manual_seed(5);
    Tensor a = empty({1000}, dt);
    a.normal_(-3, 7.5);
    Tensor b = empty({5}, dt);
    b.normal_(-3, 7.5);
    Tensor c = empty({40, 3}, dt).t();
    c.normal_(2, 0.5);
    std::string name = "normal_m3_7.5_seed5_" + std::string(dtype_name(dt));
    EXPECT_EQ(
        bytes_of(cat({a, b, c.contiguous().flatten()})), golden().at(name))
        << name;
  }
}

TEST(Random, IntegerDrawsMatchPyTorch) {
  manual_seed(0);
  Tensor ints = cat(
      {randint(0, 10, {5}),
       randint(-5, int64_t(1) << 31, {100}),
       randint(0, int64_t(1) << 40, {100}),
       randint(-(int64_t(1) << 62), int64_t(1) << 62, {10})});
  EXPECT_EQ(bytes_of(ints), golden().at("randint_seed0_int64"));
  manual_seed(1);
  EXPECT_EQ(
      bytes_of(randint(-100, 100, {50}, kInt32)),
      golden().at("randint_seed1_int32"));
  manual_seed(1);
  EXPECT_EQ(
      bytes_of(randint(0, 1000, {50}, kFloat32)),
      golden().at("randint_seed1_float32"));
  manual_seed(2);
  Tensor u = empty({20}, kUInt8);
  u.random_(0, 256);
  EXPECT_EQ(bytes_of(u), golden().at("random_seed2_uint8"));
  // random_'s other forms (torch's random_.to, random_(from, None),
  // random_()), on every dtype PyTorch draws them for.
  manual_seed(13);
  Tensor to = empty({40}, kInt64);
  EXPECT_EQ(
      bytes_of(to.random_(1000)), golden().at("random_to1000_seed13_int64"));
  const std::pair<Dtype, const char*> dtypes[] = {
      {kInt64, "int64"},
      {kInt32, "int32"},
      {kInt16, "int16"},
      {kInt8, "int8"},
      {kUInt8, "uint8"},
      {kBool, "bool"},
      {kFloat32, "float32"},
      {kFloat64, "float64"},
      {kFloat16, "float16"},
      {kBFloat16, "bfloat16"}};
  for (const auto& [dt, dn] : dtypes) {
    manual_seed(11);
    Tensor t = empty({40}, dt);
    EXPECT_EQ(
        bytes_of(t.random_()),
        golden().at(std::string("random_noargs_seed11_") + dn))
        << dn;
  }
  const std::tuple<Dtype, int64_t, const char*> from_none[] = {
      {kInt64, -3, "random_from-3_none_seed12_int64"},
      {kInt32, -3, "random_from-3_none_seed12_int32"},
      {kFloat32, -3, "random_from-3_none_seed12_float32"},
      {kFloat64, 5, "random_from5_none_seed12_float64"},
      {kUInt8, 200, "random_from200_none_seed12_uint8"},
      {kInt64,
       std::numeric_limits<int64_t>::min(),
       "random_from-9223372036854775808_none_seed12_int64"},
      {kFloat32,
       std::numeric_limits<int64_t>::min(),
       "random_from_min_none_seed12_float32"}};
  for (const auto& [dt, lo, name] : from_none) {
    manual_seed(12);
    Tensor t = empty({40}, dt);
    EXPECT_EQ(
        bytes_of(t.random_(lo, std::optional<int64_t>())), golden().at(name))
        << name;
  }
  // PyTorch's refusals: the full int64 range on another dtype, a from
  // beyond the dtype's largest value; nothing is written.
  Tensor i32 = zeros({4}, kInt32);
  EXPECT_THROW(
      i32.random_(
          std::numeric_limits<int64_t>::min(), std::optional<int64_t>()),
      TypeError);
  Tensor u8 = zeros({4}, kUInt8);
  EXPECT_THROW(u8.random_(300, std::optional<int64_t>()), ValueError);
  EXPECT_THROW(u8.random_(5, 2), ValueError);
  EXPECT_TRUE(equal(u8, zeros({4}, kUInt8)));
  EXPECT_TRUE(equal(i32, zeros({4}, kInt32)));
  for (int seed : {0, 42}) {
    manual_seed(uint64_t(seed));
    Tensor p = cat({randperm(10), randperm(1), randperm(0), randperm(1000)});
    EXPECT_EQ(
        bytes_of(p),
        golden().at("randperm_seed" + std::to_string(seed) + "_int64"));
  }
  Generator g;
  g.manual_seed(42);
  EXPECT_TRUE(equal(
      randperm(10, kInt64, g),
      tensor<int64_t>({2, 6, 1, 8, 4, 5, 0, 9, 3, 7})));
}

TEST(Random, BernoulliDropoutExponentialMatchPyTorch) {
  manual_seed(0);
  Tensor b = empty({8});
  b.bernoulli_(0.5);
  EXPECT_EQ(bytes_of(b), golden().at("bernoulli_0.5_seed0_float32"));
  manual_seed(4);
  Tensor bb = empty({100}, kBool);
  bb.bernoulli_(0.3);
  EXPECT_EQ(bytes_of(bb), golden().at("bernoulli_0.3_seed4_bool"));
  Tensor pf = linspace(0, 1, 100);
  manual_seed(4);
  EXPECT_EQ(
      bytes_of(bernoulli(pf)), golden().at("bernoulli_tensor_seed4_float32"));
  manual_seed(4);
  EXPECT_EQ(
      bytes_of(bernoulli(pf.to(kFloat64))),
      golden().at("bernoulli_tensor_seed4_float64"));
  Tensor x = sub(mul(arange(0, 20, 1, kFloat32), 0.5), 3);
  manual_seed(6);
  EXPECT_EQ(
      bytes_of(dropout(x, 0.3, true)),
      golden().at("dropout_0.3_seed6_float32"));
  manual_seed(6);
  EXPECT_EQ(
      bytes_of(dropout(ones({1000}), 0.021, true)),
      golden().at("dropout_0.021_seed6_float32"));
  EXPECT_TRUE(dropout(x, 0.3, false).is_same(x));
  EXPECT_TRUE(dropout(x, 0.0, true).is_same(x));
  manual_seed(8);
  Tensor e = empty({100}, kFloat64);
  e.exponential_(1.5);
  EXPECT_EQ(bytes_of(e), golden().at("exponential_1.5_seed8_float64"));
  manual_seed(8);
  Tensor ef = empty({100});
  ef.exponential_(1.5);
  EXPECT_EQ(bytes_of(ef), golden().at("exponential_1.5_seed8_float32"));
}

TEST(Random, BadDistributionArgumentsChangeNothing) {
  manual_seed(12);
  Tensor before = get_rng_state();
  EXPECT_THROW(randint(5, 5, {3}), ValueError);
  EXPECT_THROW(randint(0, 300, {3}, kUInt8), ValueError);
  EXPECT_THROW(randn({2}, kInt32), TypeError);
  Tensor t = zeros({4});
  EXPECT_THROW(t.normal_(0, -1), ValueError);
  EXPECT_THROW(t.bernoulli_(1.5), ValueError);
  EXPECT_THROW(
      t.bernoulli_(tensor<float>({0.5f, 2.0f, 0.1f, 0.2f})), ValueError);
  EXPECT_THROW(t.exponential_(0), ValueError);
  EXPECT_THROW(dropout(t, -0.1, true), ValueError);
  EXPECT_THROW(randperm(-1), ValueError);
  EXPECT_THROW(randperm(300, kUInt8), ValueError);
  EXPECT_EQ(bytes_of(get_rng_state()), bytes_of(before));
  EXPECT_EQ(sum(t).item<float>(), 0.0f);
}

TEST(Random, MultinomialMatchesPyTorch) {
  Tensor w = tensor<float>({0.1f, 0.0f, 2.0f, 0.5f, 1.4f, 0.0f, 3.0f});
  manual_seed(9);
  EXPECT_EQ(
      bytes_of(multinomial(w, 200, true)),
      golden().at("multinomial_repl_seed9"));
  Generator g1;
  g1.manual_seed(1);
  Tensor w2 = rand({4, 50}, kFloat32, g1).to(kFloat64);
  manual_seed(9);
  EXPECT_EQ(
      bytes_of(multinomial(w2, 30, true)),
      golden().at("multinomial_repl_2d_seed9_float64"));
  manual_seed(9);
  EXPECT_EQ(
      bytes_of(multinomial(w2.to(kFloat32), 10, false)),
      golden().at("multinomial_norepl_seed9"));
  manual_seed(9);
  EXPECT_EQ(bytes_of(multinomial(w, 1)), golden().at("multinomial_one_seed9"));
  // Zero-weight categories are never drawn.
  Tensor draws = multinomial(w, 1000, true);
  EXPECT_FALSE(max(eq(draws, 1)).item<bool>());
  EXPECT_FALSE(max(eq(draws, 5)).item<bool>());
}

TEST(Random, MultinomialBadInput) {
  manual_seed(3);
  Tensor before = get_rng_state();
  EXPECT_THROW(multinomial(tensor<float>({1, -1}), 1), ValueError);
  EXPECT_THROW(multinomial(tensor<float>({0, 0}), 1), ValueError);
  EXPECT_THROW(multinomial(tensor<float>({1, 2}), 3, false), ValueError);
  EXPECT_THROW(multinomial(tensor<float>({1, 2}), 0, true), ValueError);
  EXPECT_THROW(multinomial(tensor<int64_t>({1, 2}), 1), TypeError);
  EXPECT_THROW(multinomial(tensor<float>({1, NAN}), 1), ValueError);
  EXPECT_EQ(bytes_of(get_rng_state()), bytes_of(before));
}
