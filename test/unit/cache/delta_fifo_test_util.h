// Helpers of the DeltaFIFO tests (delta_fifo*_test.cc): pop one key with its deltas, the types
// of a key's deltas. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/cache/delta_fifo.h"

namespace kcm::cache {

struct Popped {
  std::string key;
  Deltas deltas;
  bool is_in_initial_list = false;
};

inline Popped PopOne(DeltaFIFO& fifo) {
  Popped out;
  Status s = fifo.Pop([&](const Deltas& deltas, bool initial) {
    out.key = fifo.KeyOf(*deltas.back().object);
    out.deltas = deltas;
    out.is_in_initial_list = initial;
    return OkStatus();
  });
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().ToString());
  return out;
}

inline std::vector<DeltaType> Types(const Deltas& deltas) {
  std::vector<DeltaType> out;
  for (const Delta& d : deltas) out.push_back(d.type);
  return out;
}

}  // namespace kcm::cache
