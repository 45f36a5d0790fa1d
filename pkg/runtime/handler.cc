#include "pkg/runtime/handler.h"

#include <set>

namespace kcm::runtime {
namespace {

void AddKeyOf(const api::ObjectPtr& obj, Queue& q) {
  if (obj) q.Add(Request{obj->Meta().namespace_, obj->Meta().name}.Key());
}

class ForObject final : public EventHandler {
 public:
  void Create(const CreateEvent& e, Queue& q) override { AddKeyOf(e.object, q); }
  void Update(const UpdateEvent& e, Queue& q) override {
    AddKeyOf(e.new_object ? e.new_object : e.old_object, q);
  }
  void Delete(const DeleteEvent& e, Queue& q) override { AddKeyOf(e.object, q); }
  void Generic(const GenericEvent& e, Queue& q) override { AddKeyOf(e.object, q); }
  bool NonBlocking() const override { return true; }
};

// "apps/v1" -> "apps"; "v1" -> "".
std::string GroupOf(const std::string& api_version) {
  size_t slash = api_version.find('/');
  return slash == std::string::npos ? "" : api_version.substr(0, slash);
}

class ForOwner final : public EventHandler {
 public:
  explicit ForOwner(OwnerOptions o) : o_(std::move(o)) {}
  void Create(const CreateEvent& e, Queue& q) override { Enqueue({e.object}, q); }
  // Both old and new owners: a released object must wake its former owner too.
  void Update(const UpdateEvent& e, Queue& q) override { Enqueue({e.old_object, e.new_object}, q); }
  void Delete(const DeleteEvent& e, Queue& q) override { Enqueue({e.object}, q); }
  void Generic(const GenericEvent& e, Queue& q) override { Enqueue({e.object}, q); }
  bool NonBlocking() const override { return true; }

 private:
  void Enqueue(std::initializer_list<api::ObjectPtr> objects, Queue& q) const {
    std::set<std::string> keys;
    for (const auto& obj : objects) {
      if (!obj) continue;
      for (const auto& ref : obj->Meta().owner_references) {
        if (ref.kind != o_.owner_kind || GroupOf(ref.api_version) != o_.owner_group) continue;
        if (o_.only_controller && !ref.controller) continue;
        Request r{o_.owner_cluster_scoped ? "" : obj->Meta().namespace_, ref.name};
        keys.insert(r.Key());
      }
    }
    for (const auto& k : keys) q.Add(k);
  }
  OwnerOptions o_;
};

class FromMapFunc final : public EventHandler {
 public:
  explicit FromMapFunc(MapFunc fn) : fn_(std::move(fn)) {}
  void Create(const CreateEvent& e, Queue& q) override { Map({e.object}, q); }
  void Update(const UpdateEvent& e, Queue& q) override { Map({e.old_object, e.new_object}, q); }
  void Delete(const DeleteEvent& e, Queue& q) override { Map({e.object}, q); }
  void Generic(const GenericEvent& e, Queue& q) override { Map({e.object}, q); }
  bool NonBlocking() const override { return true; }

 private:
  void Map(std::initializer_list<api::ObjectPtr> objects, Queue& q) const {
    std::set<std::string> keys;
    for (const auto& obj : objects) {
      if (!obj) continue;
      for (const auto& r : fn_(*obj)) keys.insert(r.Key());
    }
    for (const auto& k : keys) q.Add(k);
  }
  MapFunc fn_;
};

}  // namespace

Request Request::FromKey(const std::string& key) {
  size_t slash = key.find('/');
  if (slash == std::string::npos) return Request{"", key};
  return Request{key.substr(0, slash), key.substr(slash + 1)};
}

void AddAll(Queue& q, const std::vector<Request>& requests) {
  for (const auto& r : requests) q.Add(r.Key());
}

void AddAll(Queue& q, const std::vector<Enqueue>& requests) {
  for (const auto& e : requests) {
    if (e.after > std::chrono::nanoseconds::zero()) {
      q.AddAfter(e.request.Key(), std::chrono::duration_cast<Clock::duration>(e.after));
    } else {
      q.Add(e.request.Key());
    }
  }
}

std::shared_ptr<EventHandler> EnqueueRequestForObject() {
  return std::make_shared<ForObject>();
}

std::shared_ptr<EventHandler> EnqueueRequestForOwner(OwnerOptions options) {
  return std::make_shared<ForOwner>(std::move(options));
}

std::shared_ptr<EventHandler> EnqueueRequestsFromMapFunc(MapFunc fn) {
  return std::make_shared<FromMapFunc>(std::move(fn));
}

}  // namespace kcm::runtime
