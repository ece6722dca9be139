#include "core/webhooks/signature.hpp"

#include <charconv>

namespace mailassay::core::webhooks {

std::string signed_content(std::int64_t t, std::string_view body) {
  std::string out = std::to_string(t);
  out.reserve(out.size() + 1 + body.size());
  out += '.';
  out += body;
  return out;
}

std::string signature_header(std::int64_t t,
                             std::span<const std::string> hex_signatures) {
  std::string out = "t=" + std::to_string(t);
  for (const auto& s : hex_signatures)
    out += ",v1=" + s;
  return out;
}

std::optional<signature_fields> parse_signature_header(std::string_view value) {
  signature_fields out;
  bool has_t = false;
  while (!value.empty()) {
    auto comma = value.find(',');
    auto item = value.substr(0, comma);
    while (!item.empty() && item.front() == ' ')
      item.remove_prefix(1);
    auto eq = item.find('=');
    if (eq != std::string_view::npos) {
      auto key = item.substr(0, eq);
      auto val = item.substr(eq + 1);
      if (key == "t") {
        auto [p, ec] =
            std::from_chars(val.data(), val.data() + val.size(), out.t);
        has_t =
            ec == std::errc{} && p == val.data() + val.size() && !val.empty();
      } else if (key == "v1" && !val.empty()) {
        out.v1.emplace_back(val);
      }
    }
    if (comma == std::string_view::npos)
      break;
    value.remove_prefix(comma + 1);
  }
  if (!has_t || out.v1.empty())
    return std::nullopt;
  return out;
}

} // namespace mailassay::core::webhooks
