// ListPager: reads a whole LIST through a ListerWatcher page by page (upstream tools/pager). Not
// thread-safe by itself; each call is independent.
#pragma once

#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

#include "pkg/api/list_options.h"
#include "pkg/api/object.h"
#include "pkg/cache/listwatch.h"
#include "pkg/util/result.h"

namespace kcm::cache {

struct PagedList {
  std::vector<api::ObjectPtr> items;
  std::string resource_version;
  // The server answered with more than one page.
  bool paginated = false;
};

inline constexpr int64_t kDefaultPageSize = 500;

// Lists with limit = page_size (0 = unpaginated), following continue tokens; resourceVersion and
// resourceVersionMatch are sent with the first page only (the server refuses them alongside a
// continue token). A continue page answered 410 Expired (errors::IsResourceExpired) is followed
// by one unpaginated list at the original resourceVersion (behaviour 1.9; upstream's ListPager with
// FullListIfExpired), since the snapshot the continue token pointed into is gone; any other error,
// or an Expired first page, is returned. The one pager of the code base.
// on_item (may be empty) is passed to ListerWatcher::List for every page.
Result<PagedList> ListAllPages(ListerWatcher& lw, api::ListOptions options, int64_t page_size,
                               std::stop_token stop, const ListItemFunc& on_item = {});

}  // namespace kcm::cache
