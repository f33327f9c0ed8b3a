#include "ditto/random/generator.h"

#include "ditto/core/deferred.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>

#include "ditto/core/device.h"
#include "ditto/core/env.h"
#include "ditto/core/error.h"
#include "ditto/core/tensor.h"
#include "ditto/random/generator_impl.h"

namespace ditto {
namespace {

// torch.Generator.get_state() layout for a CPU generator (PyTorch 1.13,
// little-endian x86-64). See reference/pytorch-rng.md §2.1.
constexpr size_t kStateBytes = 5056;
constexpr size_t kOffSeed = 0;
constexpr size_t kOffLeft = 8;
constexpr size_t kOffSeeded = 12;
constexpr size_t kOffNext = 16;
constexpr size_t kOffWords = 24;
constexpr size_t kOffNormalY = 5024;
constexpr size_t kOffNormalValid = 5040;
constexpr size_t kOffFloatNormal = 5048;
constexpr size_t kOffFloatValid = 5052;

template <typename T>
void put(std::vector<uint8_t>& b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof(T));
}

template <typename T>
T get(const uint8_t* p, size_t off) {
  T v;
  std::memcpy(&v, p + off, sizeof(T));
  return v;
}

// 64 bits from the OS. Only ever a seed, which is always reported.
uint64_t os_random64() {
  uint64_t v = 0;
  if (FILE* f = std::fopen("/dev/urandom", "rb")) {
    size_t got = std::fread(&v, 1, sizeof(v), f);
    std::fclose(f);
    if (got == sizeof(v)) {
      return v;
    }
  }
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}

std::shared_ptr<GeneratorImpl> make_process_default() {
  // DITTO_SEED: a decimal integer in [-2^63, 2^64); negative values are
  // taken as their two's-complement bits, as manual_seed does.
  auto env = detail::env_u64_bits("DITTO_SEED");
  uint64_t s = env ? *env : os_random64();
  return std::make_shared<CPUGeneratorImpl>(s);
}

Generator& process_default() {
  static Generator g(make_process_default());
  return g;
}

thread_local std::optional<Generator> tls_current;

} // namespace

std::vector<uint8_t> CPUGeneratorImpl::state_bytes() const {
  std::vector<uint8_t> b(kStateBytes, 0);
  random::MT19937::State s = engine_.state();
  put<uint64_t>(b, kOffSeed, s.seed);
  put<int32_t>(b, kOffLeft, s.left);
  put<int32_t>(b, kOffSeeded, s.seeded ? 1 : 0);
  put<uint64_t>(b, kOffNext, s.next);
  for (int i = 0; i < random::MT19937::kN; ++i) {
    put<uint64_t>(b, kOffWords + 8 * size_t(i), s.words[size_t(i)]);
  }
  put<double>(b, kOffNormalY, next_double_normal.value_or(0.0));
  put<int32_t>(b, kOffNormalValid, next_double_normal ? 1 : 0);
  put<float>(b, kOffFloatNormal, next_float_normal.value_or(0.0f));
  b[kOffFloatValid] = next_float_normal ? 1 : 0;
  return b;
}

void CPUGeneratorImpl::set_state_bytes(const uint8_t* p, size_t n) {
  DITTO_CHECK(
      n == kStateBytes,
      ValueError,
      "set_state",
      "expected a CPU mt19937 state of ",
      kStateBytes,
      " bytes but got ",
      n);
  random::MT19937::State s;
  s.seed = get<uint64_t>(p, kOffSeed);
  s.left = get<int32_t>(p, kOffLeft);
  s.seeded = get<int32_t>(p, kOffSeeded) != 0;
  uint64_t next = get<uint64_t>(p, kOffNext);
  s.next = next > 624 ? 625 : uint32_t(next); // 625 fails the check below
  for (int i = 0; i < random::MT19937::kN; ++i) {
    s.words[size_t(i)] = uint32_t(get<uint64_t>(p, kOffWords + 8 * size_t(i)));
  }
  // Validate everything before changing anything.
  random::MT19937 probe;
  probe.set_state(s, "set_state");
  engine_ = probe;
  if (get<int32_t>(p, kOffNormalValid) != 0) {
    next_double_normal = get<double>(p, kOffNormalY);
  } else {
    next_double_normal.reset();
  }
  if (p[kOffFloatValid] != 0) {
    next_float_normal = get<float>(p, kOffFloatNormal);
  } else {
    next_float_normal.reset();
  }
}

// Philox state: magic, seed, word position, normal caches (48 bytes).
constexpr char kPhiloxMagic[8] = {'D', 'P', 'H', 'I', 'L', 'O', 'X', '1'};
constexpr size_t kPhiloxStateBytes = 48;

std::vector<uint8_t> PhiloxGeneratorImpl::state_bytes() const {
  std::vector<uint8_t> b(kPhiloxStateBytes, 0);
  std::memcpy(b.data(), kPhiloxMagic, 8);
  put<uint64_t>(b, 8, seed_);
  put<uint64_t>(b, 16, pos_);
  put<double>(b, 24, next_double_normal.value_or(0.0));
  put<int32_t>(b, 32, next_double_normal ? 1 : 0);
  put<float>(b, 36, next_float_normal.value_or(0.0f));
  b[40] = next_float_normal ? 1 : 0;
  return b;
}

void PhiloxGeneratorImpl::set_state_bytes(const uint8_t* p, size_t n) {
  DITTO_CHECK(
      n == kPhiloxStateBytes && std::memcmp(p, kPhiloxMagic, 8) == 0,
      ValueError,
      "set_state",
      "expected a Philox state of ",
      kPhiloxStateBytes,
      " bytes starting with DPHILOX1, but got ",
      n,
      " bytes of another kind");
  set_current_seed(get<uint64_t>(p, 8));
  pos_ = get<uint64_t>(p, 16);
  if (get<int32_t>(p, 32) != 0) {
    next_double_normal = get<double>(p, 24);
  }
  if (p[40] != 0) {
    next_float_normal = get<float>(p, 36);
  }
}

std::shared_ptr<GeneratorImpl> PhiloxGeneratorImpl::clone() const {
  auto c = std::make_shared<PhiloxGeneratorImpl>(seed_);
  c->pos_ = pos_;
  c->next_double_normal = next_double_normal;
  c->next_float_normal = next_float_normal;
  return c;
}

std::shared_ptr<GeneratorImpl> CPUGeneratorImpl::clone() const {
  auto c = std::make_shared<CPUGeneratorImpl>(0);
  c->engine_ = engine_;
  c->next_double_normal = next_double_normal;
  c->next_float_normal = next_float_normal;
  return c;
}

Generator::Generator()
    : impl_(std::make_shared<CPUGeneratorImpl>(kDefaultGeneratorSeed)) {}

Generator::Generator(std::shared_ptr<GeneratorImpl> impl)
    : impl_(std::move(impl)) {
  DITTO_CHECK(impl_ != nullptr, ValueError, "Generator", "null generator");
}

Generator Generator::philox(uint64_t seed) {
  return Generator(std::make_shared<PhiloxGeneratorImpl>(seed));
}

bool Generator::is_philox() const {
  return impl_->philox_key() != nullptr;
}

Generator& Generator::manual_seed(uint64_t s) {
  detail::run_deferred();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->set_current_seed(s);
  return *this;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->current_seed();
}

uint64_t Generator::seed() {
  uint64_t s = os_random64();
  manual_seed(s);
  return s;
}

Tensor Generator::get_state() const {
  detail::run_deferred();
  std::vector<uint8_t> b;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    b = impl_->state_bytes();
  }
  Tensor t = detail::new_tensor({int64_t(b.size())}, kUInt8);
  std::memcpy(t.data_ptr<uint8_t>(), b.data(), b.size());
  return t;
}

Generator& Generator::set_state(const Tensor& state) {
  DITTO_CHECK(state.defined(), ValueError, "set_state", "undefined tensor");
  DITTO_CHECK(
      state.dtype() == kUInt8,
      TypeError,
      "set_state",
      "expected a uint8 tensor but got ",
      state.dtype());
  Tensor c = state.contiguous();
  detail::run_deferred();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->set_state_bytes(c.data_ptr<uint8_t>(), size_t(c.numel()));
  return *this;
}

Generator Generator::clone() const {
  detail::run_deferred();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return Generator(impl_->clone());
}

Generator default_generator() {
  if (tls_current) {
    return *tls_current;
  }
  return process_default();
}

namespace detail {
namespace {
std::atomic<uint64_t> g_seed_epoch{0};
} // namespace
uint64_t seed_epoch() {
  return g_seed_epoch.load();
}
Generator process_default_generator() {
  return process_default();
}
} // namespace detail

namespace {

// The devices' default generators (Philox), created on first use.
struct DeviceGenerators {
  std::mutex mu;
  std::map<std::pair<int, int>, Generator> generators;
  uint64_t seed = kDefaultGeneratorSeed; // the last manual_seed's
};

DeviceGenerators& device_generators() {
  static DeviceGenerators* d = new DeviceGenerators; // used at exit
  return *d;
}

} // namespace

Generator default_generator(Device device) {
  if (device.is_cpu() || tls_current) {
    return default_generator();
  }
  return device_generator(device);
}

Generator device_generator(Device device) {
  if (device.is_cpu()) {
    return process_default();
  }
  DeviceGenerators& d = device_generators();
  std::lock_guard<std::mutex> lock(d.mu);
  const std::pair<int, int> key{int(device.type), device.resolved_index()};
  auto it = d.generators.find(key);
  if (it == d.generators.end()) {
    it = d.generators.emplace(key, Generator::philox(d.seed)).first;
  }
  return it->second;
}

void manual_seed(uint64_t s) {
  default_generator().manual_seed(s);
  {
    DeviceGenerators& d = device_generators();
    std::lock_guard<std::mutex> lock(d.mu);
    d.seed = s;
    for (auto& [key, g] : d.generators) {
      g.manual_seed(s);
    }
  }
  detail::g_seed_epoch.fetch_add(1); // named streams re-derive
}

uint64_t initial_seed() {
  return default_generator().initial_seed();
}

uint64_t seed() {
  return default_generator().seed();
}

Tensor get_rng_state() {
  return default_generator().get_state();
}

void set_rng_state(const Tensor& state) {
  default_generator().set_state(state);
}

// Deferred initial draws (ditto/core/deferred.h) run before a guard
// switches the thread's generator, either way: they belong to the
// generator in force where the layers were built, never to a loader's
// per-sample generator or a scope that came later (issue 61, item 1).
GeneratorGuard::GeneratorGuard(Generator g) : previous_(tls_current) {
  detail::run_deferred();
  tls_current = std::move(g);
}

GeneratorGuard::~GeneratorGuard() {
  detail::run_deferred();
  tls_current = previous_;
}

ForkRng::ForkRng() : generator_(default_generator()) {
  std::lock_guard<std::mutex> lock(generator_.impl()->mutex);
  saved_ = generator_.impl()->clone();
}

ForkRng::~ForkRng() {
  std::vector<uint8_t> b = saved_->state_bytes();
  std::lock_guard<std::mutex> lock(generator_.impl()->mutex);
  generator_.impl()->set_state_bytes(b.data(), b.size());
}

} // namespace ditto
