#pragma once

// Symbols of the shared library that users may call carry DITTO_API; the
// library is built with -fvisibility=hidden so nothing else leaks out.
#if defined(DITTO_BUILDING_LIBRARY)
#define DITTO_API __attribute__((visibility("default")))
#else
#define DITTO_API
#endif
