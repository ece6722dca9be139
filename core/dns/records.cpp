#include "core/dns/records.hpp"

#include "core/base/ascii.hpp"
namespace mailassay::core::dns {

std::string_view to_string(rcode code) {
  switch (code) {
    case rcode::ok: return "ok";
    case rcode::nxdomain: return "nxdomain";
    case rcode::nodata: return "nodata";
    case rcode::servfail: return "servfail";
    case rcode::timeout: return "timeout";
    case rcode::refused: return "refused";
    case rcode::other_error: return "other_error";
  }
  return "other_error";
}

bool is_failure(rcode code) {
  return code == rcode::servfail || code == rcode::timeout ||
         code == rcode::refused || code == rcode::other_error;
}

std::string normalize_name(std::string_view name) {
  while (name.size() > 1 && name.back() == '.')
    name.remove_suffix(1);
  return ascii_lower(name);
}

} // namespace mailassay::core::dns
