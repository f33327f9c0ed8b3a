#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "ditto/ditto.h"
#include "tests/cpu_caps.h"

using namespace ditto;

TEST(Philox, Random123KnownAnswers) {
  // Random123 tests/kat_vectors, the three "philox4x32 10" lines.
  using random::philox4x32_10;
  EXPECT_EQ(
      philox4x32_10({0, 0, 0, 0}, {0, 0}),
      (random::PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(
      philox4x32_10(
          {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
          {0xffffffff, 0xffffffff}),
      (random::PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      philox4x32_10(
          {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
          {0xa4093822, 0x299f31d0}),
      (random::PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

namespace {
class PhiloxThreads : public ::testing::Test {
 protected:
  void TearDown() override {
    set_num_threads(saved_);
  }
  int saved_ = get_num_threads();
};
} // namespace

TEST_F(PhiloxThreads, FillsAreTheSameForEveryThreadCount) {
  std::vector<uint64_t> ref;
  for (int threads : {1, 2, 3, 8}) {
    set_num_threads(threads);
    Generator g = Generator::philox(1234);
    std::vector<uint64_t> got;
    got.push_back(fingerprint(rand({100003}, kFloat32, g)));
    got.push_back(fingerprint(rand({50001}, kFloat64, g)));
    got.push_back(fingerprint(randn({100003}, kFloat32, g)));
    got.push_back(fingerprint(randn({40007}, kFloat64, g)));
    Tensor b = empty({70001});
    b.bernoulli_(0.3, g);
    got.push_back(fingerprint(b));
    Tensor u = empty({33333});
    u.uniform_(-2, 3, g);
    got.push_back(fingerprint(u));
    got.push_back(fingerprint(randint(0, 100, {1000}, kInt64, g)));
    if (ref.empty()) {
      ref = got;
    }
    EXPECT_EQ(got, ref) << threads << " threads";
  }
}

TEST(Philox, ElementsDependOnlyOnKeyPositionAndIndex) {
  // A fill of n and a fill of 2n from the same position agree on the
  // first n elements: element i does not depend on how much is drawn.
  Generator a = Generator::philox(7);
  Generator b = Generator::philox(7);
  Tensor x = rand({1000}, kFloat32, a);
  Tensor y = rand({2000}, kFloat32, b);
  EXPECT_TRUE(equal(x, y.narrow(0, 0, 1000)));
  // Uniform values are in [0, 1) and not all equal.
  EXPECT_LT(max(y).item<float>(), 1.0f);
  EXPECT_GE(min(y).item<float>(), 0.0f);
  EXPECT_GT(sum(y).item<float>(), 900.0f);
  EXPECT_LT(sum(y).item<float>(), 1100.0f);
  Tensor z = randn({100000}, kFloat32, a);
  EXPECT_NEAR(mean(z).item<float>(), 0.0f, 0.02f);
  EXPECT_NEAR(mean(mul(z, z)).item<float>(), 1.0f, 0.02f);
}

TEST(Philox, StateRoundTripsAndRejectsOtherEngines) {
  Generator g = Generator::philox(99);
  EXPECT_TRUE(g.is_philox());
  EXPECT_EQ(g.initial_seed(), 99u);
  rand({17}, kFloat32, g);
  Tensor s = g.get_state();
  Tensor a = randn({100}, kFloat32, g);
  g.set_state(s);
  EXPECT_TRUE(equal(randn({100}, kFloat32, g), a));
  Generator mt;
  EXPECT_THROW(g.set_state(mt.get_state()), ValueError);
  EXPECT_THROW(mt.set_state(s), ValueError);
  Generator c = g.clone(); // continues identically, independently
  Tensor from_g = randn({100}, kFloat32, g);
  EXPECT_TRUE(equal(randn({100}, kFloat32, c), from_g));
}

TEST(Streams, IndependentAndRederivedByManualSeed) {
  manual_seed(5);
  Tensor d1 = rand({8}, kFloat32, random::stream("dropout"));
  manual_seed(5);
  // Drawing from another stream and from the default generator first does
  // not shift "dropout".
  rand({100}, kFloat32, random::stream("validation"));
  rand({100});
  Tensor d2 = rand({8}, kFloat32, random::stream("dropout"));
  EXPECT_TRUE(equal(d1, d2));
  EXPECT_FALSE(equal(d1, rand({8}, kFloat32, random::stream("dropout"))));
  manual_seed(6);
  EXPECT_FALSE(equal(d1, rand({8}, kFloat32, random::stream("dropout"))));
  EXPECT_TRUE(random::stream("dropout").is_philox());
  EXPECT_EQ(random::stream("a"), random::stream("a")); // shared handle
  EXPECT_NE(random::derive_seed(1, "a"), random::derive_seed(1, "b"));
  EXPECT_NE(random::derive_seed(1, "a"), random::derive_seed(2, "a"));
  EXPECT_THROW(random::stream(""), ValueError);
}

TEST(SeedEverything, SeedsRegisteredGeneratorsAndSrand) {
  std::mt19937 engine;
  register_generator(
      "std_mt19937",
      [&](uint64_t s) { engine.seed(uint32_t(s)); },
      [&] {
        std::vector<uint8_t> b(sizeof(engine));
        std::memcpy(b.data(), &engine, sizeof(engine));
        return b;
      },
      [&](const std::vector<uint8_t>& b) {
        std::memcpy(&engine, b.data(), sizeof(engine));
      });
  seed_everything(42);
  uint32_t first = engine();
  int c_first = std::rand();
  Tensor t1 = rand({4});
  seed_everything(42);
  EXPECT_EQ(engine(), first);
  EXPECT_EQ(std::rand(), c_first);
  EXPECT_TRUE(equal(rand({4}), t1));
  EXPECT_EQ(initial_seed(), 42u);
  auto states = registered_generator_states();
  ASSERT_EQ(states.count("std_mt19937"), 1u);
  uint32_t next = engine();
  set_registered_generator_states(states);
  EXPECT_EQ(engine(), next);
  EXPECT_THROW(set_registered_generator_states({{"nope", {}}}), ValueError);
  EXPECT_THROW(register_generator("x", {}), ValueError);
  unregister_generator("std_mt19937");
  EXPECT_EQ(registered_generator_states().count("std_mt19937"), 0u);
}

TEST(Philox, BlocksPastTwoToThe32EqualTheSerialDefinitionOnEveryCapability) {
  // Note [Philox in 64-bit lanes]: the counter's high word (block >> 32)
  // and a 64-bit key, from a state placed 37 blocks below block 2^32; 1001
  // elements end in a partial batch of blocks.
  const uint64_t seed = 0x1234567890abcdefull;
  const random::PhiloxKey key = {uint32_t(seed), uint32_t(seed >> 32)};
  const uint64_t first = 4 * ((uint64_t(1) << 32) - 37);
  const int64_t n = 1001;
  std::vector<float> expected(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t w = random::philox_word(key, first + uint64_t(i));
    expected[size_t(i)] = float(w & 0xffffffu) * 0x1p-24f;
  }
  Tensor state = Generator::philox(seed).get_state();
  std::memcpy(state.data_ptr<uint8_t>() + 16, &first, 8);
  const CpuCapability saved = get_cpu_capability();
  const int saved_threads = get_num_threads();
  for (CpuCapability cap : test::testable_capabilities()) {
    set_cpu_capability(cap);
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      Generator g = Generator::philox(seed);
      g.set_state(state);
      Tensor got = rand({n}, kFloat32, g);
      EXPECT_TRUE(equal(got, tensor(expected)))
          << cpu_capability_name(cap) << ", " << threads << " threads";
    }
  }
  set_cpu_capability(saved);
  set_num_threads(saved_threads);
}

TEST(Philox, ParallelFillEqualsTheSerialDefinitionOnEveryCapability) {
  // rand with a fresh Philox(seed) generator: element i is the low 24 bits
  // of word i of the stream keyed by the seed, times 2^-24.
  const int64_t n = 50003;
  std::vector<float> expected(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint32_t w = random::philox_word({7u, 0u}, uint64_t(i));
    expected[size_t(i)] = float(w & 0xffffffu) * 0x1p-24f;
  }
  CpuCapability saved = get_cpu_capability();
  for (CpuCapability cap : test::testable_capabilities()) {
    set_cpu_capability(cap);
    Tensor got = rand({n}, kFloat32, Generator::philox(7));
    EXPECT_TRUE(equal(got, tensor(expected))) << cpu_capability_name(cap);
  }
  set_cpu_capability(saved);
}

namespace ditto {
namespace {

// Issue 61, item 18: a Philox position near the stream's end (2^64 words,
// reachable through set_state) used to wrap to the start without notice;
// now a draw that would pass the end is a ValueError and the state stays.
TEST(Philox, APositionThatWouldPassTheEndIsRefused) {
  Generator g = Generator::philox(7);
  Tensor state = g.get_state();
  const uint64_t near_end = ~uint64_t(0) - 10;
  std::memcpy(state.data_ptr<uint8_t>() + 16, &near_end, 8);
  g.set_state(state);
  try {
    rand({64}, kFloat32, g);
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("passes its end"), std::string::npos)
        << e.what();
  }
  // Nothing moved: the state is still the one set.
  EXPECT_TRUE(equal(g.get_state(), state));
  // A fill that fits still draws.
  EXPECT_EQ(rand({2}, kFloat32, g).numel(), 2);
}

} // namespace
} // namespace ditto
