// ZL_ASSERT: an invariant that holds unless zonelab has a bug. It is checked
// in every build -- release, tests, benchmarks, sanitizers -- and a failure
// prints the condition and where it failed, then aborts: a bug crashes
// loudly. Bad input is never asserted; it is answered with an error.
#pragma once

namespace zonelab::detail {

[[noreturn]] void assertion_failed(const char* condition, const char* file, int line,
                                   const char* function);

}  // namespace zonelab::detail

#define ZL_ASSERT(condition)          \
  ((condition) ? static_cast<void>(0) \
               : ::zonelab::detail::assertion_failed(#condition, __FILE__, __LINE__, __func__))
