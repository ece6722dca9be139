#include "core/webhooks/records.hpp"

namespace mailassay::core::webhooks {

std::string_view to_string(endpoint_status s) {
  return s == endpoint_status::active ? "active" : "disabled";
}

std::optional<endpoint_status> parse_endpoint_status(std::string_view s) {
  if (s == "active")
    return endpoint_status::active;
  if (s == "disabled")
    return endpoint_status::disabled;
  return std::nullopt;
}

std::string_view to_string(delivery_status s) {
  switch (s) {
    case delivery_status::pending: return "pending";
    case delivery_status::delivered: return "delivered";
    case delivery_status::failed: return "failed";
  }
  return "pending";
}

std::optional<delivery_status> parse_delivery_status(std::string_view s) {
  for (auto d : {delivery_status::pending, delivery_status::delivered,
                 delivery_status::failed})
    if (to_string(d) == s)
      return d;
  return std::nullopt;
}

} // namespace mailassay::core::webhooks
