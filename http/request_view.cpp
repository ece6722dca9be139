#include "core/base/ascii.hpp"
#include "http/exchange.hpp"

namespace mailassay::http {

namespace {

// The bit of a header name in request_view::header_bits_, the same for
// every spelling of the name.
std::uint64_t header_bit(std::string_view name) {
  if (name.empty())
    return 1;
  auto fold = [](char c) { return static_cast<unsigned char>(c) | 0x20u; };
  return std::uint64_t{1} << ((name.size() * 7 + fold(name.front()) +
                               fold(name.back())) &
                              63);
}

} // namespace

void request_view::index_headers() {
  header_bits_ = 0;
  for (auto& h : headers)
    header_bits_ |= header_bit(h.first);
}

std::optional<std::string_view>
request_view::header(std::string_view name) const {
  if (!(header_bits_ & header_bit(name)))
    return std::nullopt;
  // Most clients send the canonical spelling the handlers ask for.
  for (auto& [k, v] : headers)
    if (k == name)
      return v;
  for (auto& [k, v] : headers)
    if (k.size() == name.size() && core::ascii_iequals(k, name))
      return v;
  return std::nullopt;
}

std::size_t request_view::header_count(std::string_view name) const {
  if (!(header_bits_ & header_bit(name)))
    return 0;
  std::size_t n = 0;
  for (auto& [k, v] : headers)
    n += k.size() == name.size() && core::ascii_iequals(k, name);
  return n;
}

std::optional<std::string>
request_view::query_param(std::string_view name) const {
  if (auto v = args.get(name))
    return std::string{*v};
  return std::nullopt;
}

} // namespace mailassay::http
