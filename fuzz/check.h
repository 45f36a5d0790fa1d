// Check(cond) for the libFuzzer targets under fuzz/: a property that does not hold aborts the
// run (libFuzzer then keeps the input), after printing which check it was so a crash report
// names the broken property, not only the target. (__builtin_FILE/__builtin_LINE as default
// arguments give the caller's place: Debian's clang has no std::source_location with libstdc++.)
#pragma once

#include <cstdio>
#include <cstdlib>

namespace kcm::fuzz {

inline void Check(bool ok, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s:%d\n", file, line);
  std::abort();
}

}  // namespace kcm::fuzz
