#include "core/smtp/capabilities.hpp"

#include "core/base/ascii.hpp"

#include <string_view>

namespace mailassay::core::smtp {

capabilities parse_ehlo(const reply& r) {
  capabilities caps;
  if (r.code != 250 || r.lines.empty())
    return caps;
  caps.esmtp = true;
  std::string_view first = r.lines.front();
  caps.server_name = std::string{first.substr(0, first.find(' '))};
  for (std::size_t i = 1; i < r.lines.size(); ++i) {
    std::string_view line = r.lines[i];
    auto space = line.find(' ');
    std::string keyword{line.substr(0, space)};
    for (auto& c : keyword)
      c = ascii_upper(c);
    if (keyword.empty())
      continue;
    std::string_view param =
        space == std::string_view::npos ? "" : line.substr(space + 1);
    if (keyword == "STARTTLS")
      caps.starttls = true;
    else if (keyword == "SMTPUTF8")
      caps.smtputf8 = true;
    else if (keyword == "PIPELINING")
      caps.pipelining = true;
    else if (keyword == "ENHANCEDSTATUSCODES")
      caps.enhanced_status_codes = true;
    else if (keyword == "8BITMIME")
      caps.eightbitmime = true;
    else if (keyword == "SIZE") {
      std::uint64_t limit = 0;
      for (char c : param) {
        if (c < '0' || c > '9' || limit > (UINT64_MAX - 9) / 10) {
          limit = 0;
          break;
        }
        limit = limit * 10 + static_cast<std::uint64_t>(c - '0');
      }
      caps.size = limit;
    }
    caps.keywords.push_back(std::move(keyword));
  }
  return caps;
}

} // namespace mailassay::core::smtp
