#include "pkg/metrics/first_write.h"

namespace kcm::metrics {
namespace {

// Per-thread, set only by ScopedFirstWriteProbe (see the header for why it is not a parameter).
thread_local FirstWriteProbe* current_probe = nullptr;

}  // namespace

ScopedFirstWriteProbe::ScopedFirstWriteProbe(FirstWriteProbe* probe) : previous_(current_probe) {
  current_probe = probe;
}

ScopedFirstWriteProbe::~ScopedFirstWriteProbe() {
  current_probe = previous_;
}

FirstWriteProbe* CurrentFirstWriteProbe() {
  return current_probe;
}

void NoteWriteSent() {
  if (current_probe != nullptr) current_probe->WriteSent();
}

}  // namespace kcm::metrics
