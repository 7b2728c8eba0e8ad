// What the fuzz targets share: a broken invariant ends the run as a crash
// that libFuzzer records (and the corpus replay reports), naming itself.
#pragma once

#include <cstdio>
#include <cstdlib>

#define TRN3_FUZZ_CHECK(cond)                                                                       \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            std::fprintf(stderr, "fuzz invariant broken: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
            std::abort();                                                                           \
        }                                                                                           \
    } while (0)
