#include "pkg/record/testing/fake_recorder.h"

#include <utility>

namespace kcm::record {

void FakeRecorder::Event(const ObjectReference& object, std::string_view type,
                         std::string_view reason, std::string_view message) {
  std::string line;
  line.append(type).append(" ").append(reason).append(" ").append(message);
  if (include_object_) {
    line.append(" involvedObject{kind=").append(object.kind);
    line.append(",apiVersion=").append(object.api_version).append("}");
  }
  std::lock_guard lock(mu_);
  events_.push_back(std::move(line));
}

std::vector<std::string> FakeRecorder::Events() const {
  std::lock_guard lock(mu_);
  return events_;
}

std::vector<std::string> FakeRecorder::TakeEvents() {
  std::lock_guard lock(mu_);
  return std::exchange(events_, {});
}

}  // namespace kcm::record
