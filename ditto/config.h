#pragma once

#include <string>

#include "ditto/core/api.h"

namespace ditto {

// "0.1.0"
DITTO_API const char* version();

// A printable summary of the build and every setting that can change what
// ditto computes or how: version, compiled and active CPU capability, thread
// count, the determinism switches.
DITTO_API std::string config_report();

} // namespace ditto
