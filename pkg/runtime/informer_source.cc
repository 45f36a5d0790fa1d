#include "pkg/runtime/informer_source.h"

#include "pkg/cache/keys.h"
#include "pkg/cache/wait.h"

namespace kcm::runtime {
namespace {

// Turns informer notifications into runtime events, filtered by the predicates.
class Adapter final : public cache::ResourceEventHandler {
 public:
  Adapter(std::shared_ptr<EventHandler> handler, std::vector<Predicate> predicates, Queue& queue)
      : handler_(std::move(handler)), predicates_(std::move(predicates)), queue_(queue) {}

  void OnAdd(const api::ObjectPtr& obj, bool is_in_initial_list) override {
    CreateEvent e{obj, is_in_initial_list};
    if (PassCreate(predicates_, e)) handler_->Create(e, queue_);
  }
  void OnUpdate(const api::ObjectPtr& old_obj, const api::ObjectPtr& new_obj) override {
    UpdateEvent e{old_obj, new_obj};
    if (PassUpdate(predicates_, e)) handler_->Update(e, queue_);
  }
  void OnDelete(const api::ObjectPtr& obj) override {
    DeleteEvent e{obj, false};
    if (const cache::DeletedFinalStateUnknown* t = cache::AsTombstone(*obj)) {
      if (!t->Obj()) return;  // Nothing known about the object: no key to enqueue.
      e.object = t->Obj();
      e.delete_state_unknown = true;
    }
    if (PassDelete(predicates_, e)) handler_->Delete(e, queue_);
  }
  // Predicates are pure functions of the event; the handler decides.
  bool NonBlocking() const override { return handler_->NonBlocking(); }

 private:
  std::shared_ptr<EventHandler> handler_;
  std::vector<Predicate> predicates_;
  Queue& queue_;
};

}  // namespace

InformerSource::InformerSource(std::shared_ptr<cache::SharedIndexInformer> informer, Clock* clock)
    : informer_(std::move(informer)), clock_(clock ? *clock : RealClock::Get()) {}

InformerSource::~InformerSource() {
  std::lock_guard lock(mu_);
  for (const auto& r : registrations_) (void)informer_->RemoveEventHandler(r);
}

Status InformerSource::Start(std::stop_token, std::shared_ptr<EventHandler> handler,
                             std::vector<Predicate> predicates, Queue& queue) {
  auto reg = informer_->AddEventHandler(
      std::make_shared<Adapter>(std::move(handler), std::move(predicates), queue));
  if (!reg.ok()) return reg.error();
  std::lock_guard lock(mu_);
  registrations_.push_back(*reg);
  return OkStatus();
}

bool InformerSource::WaitForSync(std::stop_token stop) {
  std::vector<std::function<bool()>> synced = {[this] { return informer_->HasSynced(); }};
  {
    std::lock_guard lock(mu_);
    for (const auto& r : registrations_) synced.push_back([r] { return r->HasSynced(); });
  }
  return cache::WaitForCacheSync(stop, synced, clock_);
}

}  // namespace kcm::runtime
