#include "core/provider/table.hpp"

#include "core/base/ascii.hpp"

#include <algorithm>
#include <map>

namespace mailassay::core::provider {

namespace {

// RFC 1035 §2.3.4: a name is at most 255 octets on the wire, 253 as text.
constexpr std::size_t max_host = 253;

bool host_char(char c) {
  return is_ascii_lower(c) || is_ascii_digit(c) || c == '-' || c == '.';
}

bool name_char(char c) {
  return is_ascii_lower(c) || is_ascii_digit(c) || c == '-' || c == '_';
}

// Splits `line` at blanks into at most `n` words; returns how many.
std::size_t words(std::string_view line, std::string_view* out, std::size_t n) {
  std::size_t count = 0;
  while (!line.empty()) {
    auto start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos)
      break;
    line.remove_prefix(start);
    auto end = line.find_first_of(" \t");
    if (count == n)
      return n + 1;
    out[count++] = line.substr(0, end);
    line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  }
  return count;
}

error bad_line(std::size_t number, std::string_view why) {
  return make_error(errc::bad_request, "provider table line " +
                                           std::to_string(number) + ": " +
                                           std::string{why});
}

} // namespace

std::string_view to_string(provider_kind kind) {
  return kind == provider_kind::gateway ? "gateway" : "mailbox";
}

expected<table> table::parse(std::string_view text) {
  struct entry {
    std::string suffix;
    std::string name;
    std::size_t line = 0;
  };
  std::vector<entry> entries;
  std::map<std::string, provider_kind, std::less<>> kinds;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    line = trim_any(line.substr(0, line.find('#')), " \t\r");
    if (line.empty())
      continue;
    std::string_view w[3];
    if (words(line, w, 3) != 3)
      return bad_line(number, "expected: suffix provider kind");
    std::string suffix;
    for (char c : w[0])
      suffix.push_back(ascii_lower(c));
    if (suffix.size() > max_host || suffix.front() == '.' ||
        suffix.back() == '.' || suffix.find("..") != std::string::npos ||
        !std::all_of(suffix.begin(), suffix.end(), host_char))
      return bad_line(number, "bad host name suffix");
    if (w[1].size() > 15 || !std::all_of(w[1].begin(), w[1].end(), name_char))
      return bad_line(number, "bad provider name");
    provider_kind kind;
    if (w[2] == "mailbox")
      kind = provider_kind::mailbox;
    else if (w[2] == "gateway")
      kind = provider_kind::gateway;
    else
      return bad_line(number, "kind is mailbox or gateway");
    auto [it, fresh] = kinds.emplace(std::string{w[1]}, kind);
    if (!fresh && it->second != kind)
      return bad_line(number, "provider listed with two kinds");
    entries.push_back({std::move(suffix), std::string{w[1]}, number});
  }
  table t;
  for (const auto& [name, kind] : kinds) {
    t.providers_.push_back({name, kind});
    t.names_.push_back(name);
  }
  for (auto& e : entries) {
    auto index = static_cast<std::size_t>(
        std::lower_bound(t.names_.begin(), t.names_.end(), e.name) -
        t.names_.begin());
    if (!t.by_suffix_.emplace(std::move(e.suffix), index).second)
      return bad_line(e.line, "suffix listed twice");
  }
  return t;
}

const provider_ref* table::find(std::string_view host) const {
  if (!host.empty() && host.back() == '.')
    host.remove_suffix(1);
  if (host.empty() || host.size() > max_host || by_suffix_.empty())
    return nullptr;
  char buf[max_host];
  for (std::size_t i = 0; i < host.size(); ++i)
    buf[i] = ascii_lower(host[i]);
  std::string_view name{buf, host.size()};
  // Longest first: the whole name, then the name after each dot.
  for (std::size_t at = 0; at < name.size();) {
    auto hit = by_suffix_.find(name.substr(at));
    if (hit != by_suffix_.end())
      return &providers_[hit->second];
    auto dot = name.find('.', at);
    if (dot == std::string_view::npos)
      break;
    at = dot + 1;
  }
  return nullptr;
}

const provider_ref* table::named(std::string_view name) const {
  auto it = std::lower_bound(names_.begin(), names_.end(), name);
  if (it == names_.end() || *it != name)
    return nullptr;
  return &providers_[static_cast<std::size_t>(it - names_.begin())];
}

} // namespace mailassay::core::provider
