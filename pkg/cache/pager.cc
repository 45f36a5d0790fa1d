#include "pkg/cache/pager.h"

#include <iterator>

namespace kcm::cache {

Result<PagedList> ListAllPages(ListerWatcher& lw, api::ListOptions options, int64_t page_size,
                               std::stop_token stop, const ListItemFunc& on_item) {
  const api::ListOptions original = options;
  options.limit = page_size;
  Result<api::ObjectList> page = lw.List(options, on_item);
  if (!page.ok()) {
    return page.error();
  }
  PagedList out;
  out.items = std::move(page->items);
  out.resource_version = std::move(page->resource_version);
  std::string next = std::move(page->continue_token);
  while (!next.empty()) {
    out.paginated = true;
    if (stop.stop_requested()) {
      return Error::Local(errors::reason::kStopRequested, "list interrupted by stop");
    }
    // A continue token carries the snapshot; resourceVersion must not be sent alongside it.
    options.continue_token = std::move(next);
    options.resource_version.clear();
    options.resource_version_match.clear();
    page = lw.List(options, on_item);
    if (!page.ok()) {
      if (!errors::IsResourceExpired(page.error())) {
        return page.error();
      }
      api::ListOptions full = original;
      full.limit = 0;
      full.continue_token.clear();
      Result<api::ObjectList> all = lw.List(full, on_item);
      if (!all.ok()) {
        return all.error();
      }
      return PagedList{std::move(all->items), std::move(all->resource_version), true};
    }
    std::move(page->items.begin(), page->items.end(), std::back_inserter(out.items));
    out.resource_version = std::move(page->resource_version);
    next = std::move(page->continue_token);
  }
  return out;
}

}  // namespace kcm::cache
