// What the z-pages' text forms share (upstream's statusz and flagz text serializers): the
// header naming the component and warning that the page is not machine-parseable, the
// separator between a name and its value — one of ":", ": ", "=", " " chosen at random per
// answer, upstream's way of keeping scripts off the text form — and HTML escaping of values.
// Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace kcm::server {

// "\n<component> <page>\nWarning: This endpoint is not meant to be machine parseable, ...\n".
std::string ZpageTextHeader(std::string_view component, std::string_view page);

std::string RandomZpageSeparator();

// Go's html.EscapeString: <, >, &, ' and " as entities.
std::string HtmlEscape(std::string_view s);

}  // namespace kcm::server
