// The failure path of ZL_ASSERT; see zonelab/assert.h.
#include "zonelab/assert.h"

#include <cstdio>
#include <cstdlib>

namespace zonelab::detail {

void assertion_failed(const char* condition, const char* file, int line, const char* function) {
  std::fprintf(stderr, "zonelab: internal error: assertion failed: %s (%s:%d, in %s)\n", condition,
               file, line, function);
  std::fflush(stderr);
  std::abort();
}

}  // namespace zonelab::detail
