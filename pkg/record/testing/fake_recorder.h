// FakeRecorder: an EventRecorder for controller unit tests that keeps each event as the string
// "<Type> <Reason> <Message>" (client-go's record.FakeRecorder). Test-only library
// kcm_record_testing. Thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "pkg/record/event_recorder.h"

namespace kcm::record {

class FakeRecorder final : public EventRecorder {
 public:
  // include_object appends " involvedObject{kind=...,apiVersion=...}" like upstream's option.
  explicit FakeRecorder(bool include_object = false) : include_object_(include_object) {}

  void Event(const ObjectReference& object, std::string_view type, std::string_view reason,
             std::string_view message) override;

  // The events so far, oldest first.
  std::vector<std::string> Events() const;
  // Returns the events so far and forgets them.
  std::vector<std::string> TakeEvents();

 private:
  const bool include_object_;
  mutable std::mutex mu_;
  std::vector<std::string> events_;  // guarded by mu_
};

}  // namespace kcm::record
