#include "core/account/records.hpp"

namespace mailassay::core::account {

std::string_view to_string(role r) {
  switch (r) {
    case role::owner: return "owner";
    case role::admin: return "admin";
    case role::member: return "member";
  }
  return "member";
}

std::optional<role> parse_role(std::string_view text) {
  if (text == "owner")
    return role::owner;
  if (text == "admin")
    return role::admin;
  if (text == "member")
    return role::member;
  return std::nullopt;
}

std::string_view to_string(key_status s) {
  return s == key_status::active ? "active" : "revoked";
}

std::string_view to_string(key_mode m) {
  return m == key_mode::test ? "test" : "live";
}

key_mode mode_of(const api_key& k) {
  return k.prefix.starts_with("svc_test_") ? key_mode::test : key_mode::live;
}

} // namespace mailassay::core::account
