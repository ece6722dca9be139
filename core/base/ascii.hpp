#pragma once

#include <string>
#include <string_view>

namespace mailassay::core {

/// Returns `s` with ASCII letters lower-cased (other bytes unchanged).
std::string ascii_lower(std::string_view s);

/// Compares two strings ignoring ASCII case.
bool ascii_iequals(std::string_view a, std::string_view b);

/// Returns `s` without the spaces and tabs at either end (HTTP's OWS, RFC
/// 9110 §5.6.3; the blanks around a CSV cell or a multipart header value).
/// Defined here so the request parsers on the hot path inline it.
constexpr std::string_view trim_blanks(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

} // namespace mailassay::core
