// Prints what ditto read from its environment variables, or the error:
// tests/CMakeLists.txt runs it with good and bad values (env_* tests) to
// check that every DITTO_* variable follows the same rules.

#include <cstdio>

#include "ditto/ditto.h"

int main() {
  try {
    const int threads = ditto::get_num_threads();
    const unsigned long long seed = ditto::initial_seed();
    std::printf(
        "threads %d seed %llu capability %s\n",
        threads,
        seed,
        std::string(ditto::cpu_capability_name(ditto::get_cpu_capability()))
            .c_str());
    return 0;
  } catch (const ditto::ValueError& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
