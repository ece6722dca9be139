#include "http/query.hpp"

#include "core/base/excerpt.hpp"
#include "core/base/percent.hpp"

#include <algorithm>

namespace mailassay::http {

namespace {

// Decodes one name or value into `out`; false when it cannot be read (a
// broken escape, or a control character, raw or encoded: no parameter
// needs one, and they would reach logs and stored fields).
bool decode(std::string_view in, std::string& out) {
  out.clear();
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '+') {
      c = ' ';
    } else if (c == '%') {
      if (in.size() - i < 3)
        return false;
      int hi = core::hex_digit_value(in[i + 1]);
      int lo = core::hex_digit_value(in[i + 2]);
      if (hi < 0 || lo < 0)
        return false;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      return false;
    out.push_back(c);
  }
  return true;
}

bool listed(std::string_view allowed, std::string_view name) {
  while (!allowed.empty()) {
    auto comma = allowed.find(',');
    if (allowed.substr(0, comma) == name)
      return true;
    if (comma == std::string_view::npos)
      break;
    allowed.remove_prefix(comma + 1);
  }
  return false;
}

} // namespace

core::expected<query_args> query_args::parse(std::string_view raw) {
  query_args out;
  std::string name;
  std::string value;
  while (!raw.empty()) {
    auto amp = raw.find('&');
    auto part = raw.substr(0, amp);
    raw.remove_prefix(amp == std::string_view::npos ? raw.size() : amp + 1);
    // "a=1&&b=2", a trailing "&": nothing there to read or to ignore.
    if (part.empty())
      continue;
    auto eq = part.find('=');
    auto raw_name = part.substr(0, eq);
    auto raw_value =
        eq == std::string_view::npos ? std::string_view{} : part.substr(eq + 1);
    if (!decode(raw_name, name))
      return core::make_error(core::errc::bad_request,
                              "Malformed query string: the name of parameter "
                              "'" +
                                  core::excerpt(raw_name) +
                                  "' is not valid percent-encoded text");
    if (name.empty())
      return core::make_error(core::errc::bad_request,
                              "Malformed query string: a parameter has no "
                              "name ('" +
                                  core::excerpt(part) + "')");
    if (!decode(raw_value, value))
      return core::make_error(core::errc::bad_request,
                              "Malformed query string: the value of "
                              "parameter '" +
                                  core::excerpt(name) +
                                  "' is not valid percent-encoded text");
    out.items_.emplace_back(name, value);
  }
  return out;
}

std::optional<std::string_view> query_args::get(std::string_view name) const {
  for (auto& [k, v] : items_)
    if (k == name)
      return std::string_view{v};
  return std::nullopt;
}

std::vector<std::string> query_args::problems(std::string_view allowed) const {
  std::vector<std::string> out;
  // Names shortened alike (core::excerpt) give one message, not two.
  auto add = [&out](std::string message) {
    if (std::find(out.begin(), out.end(), message) == out.end())
      out.push_back(std::move(message));
  };
  for (std::size_t i = 0; i < items_.size(); ++i) {
    const auto& name = items_[i].first;
    bool seen_before = std::any_of(
        items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(i),
        [&](const auto& p) { return p.first == name; });
    if (seen_before)
      continue;
    if (!listed(allowed, name)) {
      add("query parameter " + core::excerpt(name) + " should not exist");
      continue;
    }
    bool repeated = std::any_of(
        items_.begin() + static_cast<std::ptrdiff_t>(i) + 1, items_.end(),
        [&](const auto& p) { return p.first == name; });
    if (repeated)
      add("query parameter " + core::excerpt(name) +
          " must be given only once");
  }
  return out;
}

} // namespace mailassay::http
