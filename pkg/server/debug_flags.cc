#include "pkg/server/debug_flags.h"

#include "pkg/server/zpage_text.h"

namespace kcm::server {
namespace {

// upstream's writePlainText: the message and a newline, Content-Type text/plain.
Response PlainText(int code, const std::string& text) {
  return Response{code, "text/plain", text + "\n", {}};
}

}  // namespace

Handler NewDebugFlagHandler(FlagSetter setter) {
  return [setter = std::move(setter)](const Request& request) {
    if (request.method != "PUT") return PlainText(406, "unsupported http method");
    auto message = setter(request.body);
    if (!message.ok()) return PlainText(400, message.error().message);
    return PlainText(200, *message);
  };
}

Handler NewDebugFlagsIndexHandler(std::vector<std::string> names) {
  std::string page =
      "<html>\n<head>\n<title>/debug/flags/</title>\n</head>\n<body>\n/debug/flags/<br>\n<br>\n"
      "flags:<br>\n<table>\n";
  for (const auto& name : names) page += "<tr>" + HtmlEscape(name) + "<br>\n";
  page += "</table>\n<br>\nfull flags configurable<br>\n</body>\n</html>\n";
  return [page = std::move(page)](const Request&) {
    return Response{200, "text/html; charset=utf-8", page, {}};
  };
}

}  // namespace kcm::server
