// Run by CTest with DITTO_SEED set: the unseeded default generator must
// start from it (and say so), or a bad value must be a clear error.
#include <cstdio>
#include <cstdlib>

#include "ditto/ditto.h"

int main() {
  try {
    const char* env = std::getenv("DITTO_SEED");
    uint64_t expected = std::strtoull(env ? env : "0", nullptr, 10);
    uint64_t got = ditto::initial_seed();
    ditto::Tensor a = ditto::rand({3});
    ditto::Generator g;
    g.manual_seed(expected);
    ditto::Tensor b = ditto::rand({3}, ditto::kFloat32, g);
    std::printf("initial_seed %llu\n", static_cast<unsigned long long>(got));
    return got == expected && ditto::equal(a, b) ? 0 : 1;
  } catch (const ditto::Error& e) {
    std::printf("error: %s\n", e.what());
    return 2;
  }
}
