#include "core/webhooks/url_redaction.hpp"

namespace mailassay::core::webhooks {

std::string redacted_url(std::string_view url) {
  auto q = url.find('?');
  if (q == std::string_view::npos)
    return std::string{url};
  // Stored URLs have no fragment (target_url refuses one); one is kept
  // out of the query anyway.
  auto end = url.find('#', q);
  auto query =
      url.substr(q + 1, end == std::string_view::npos ? std::string_view::npos
                                                      : end - q - 1);
  std::string out{url.substr(0, q + 1)};
  std::size_t start = 0;
  while (true) {
    auto amp = query.find('&', start);
    auto item = query.substr(start, amp == std::string_view::npos
                                        ? std::string_view::npos
                                        : amp - start);
    if (!item.empty()) {
      auto eq = item.find('=');
      out += eq == std::string_view::npos
                 ? std::string{"***"}
                 : std::string{item.substr(0, eq)} + "=***";
    }
    if (amp == std::string_view::npos)
      break;
    out += '&';
    start = amp + 1;
  }
  if (end != std::string_view::npos)
    out += url.substr(end);
  return out;
}

} // namespace mailassay::core::webhooks
