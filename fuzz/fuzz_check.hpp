#pragma once

// The assertion of the fuzz targets: active in every build (the replay
// driver is built with NDEBUG), and an abort libFuzzer reports as a crash
// with its input.

#include <cstdio>
#include <cstdlib>

#define MAILASSAY_FUZZ_CHECK(cond)                                             \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #cond, __FILE__, \
                   __LINE__);                                                  \
      std::abort();                                                            \
    }                                                                          \
  } while (false)
