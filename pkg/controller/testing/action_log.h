// ActionLog: the calls the fake clients of one test received, in order, across resources (what
// client-go's fake Clientset.Actions() gives upstream's controller tests). Thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace kcm::controller::testing {

struct Action {
  std::string verb;      // get, create, update, update-status, patch, delete
  std::string resource;  // replicasets, deployments
  std::string ns;
  std::string name;
  std::string body;  // the request body (the patch for "patch"; empty for get and delete)
};

class ActionLog {
 public:
  void Record(Action action) {
    std::lock_guard lock(mu_);
    actions_.push_back(std::move(action));
  }
  std::vector<Action> Actions() const {
    std::lock_guard lock(mu_);
    return actions_;
  }
  // The actions of one verb on one resource, in order.
  std::vector<Action> Of(const std::string& verb, const std::string& resource) const {
    std::lock_guard lock(mu_);
    std::vector<Action> out;
    for (const Action& a : actions_) {
      if (a.verb == verb && a.resource == resource) out.push_back(a);
    }
    return out;
  }
  void Clear() {
    std::lock_guard lock(mu_);
    actions_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::vector<Action> actions_;
};

}  // namespace kcm::controller::testing
