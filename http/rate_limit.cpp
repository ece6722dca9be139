#include "http/rate_limit.hpp"

#include "http/handler_support.hpp"
#include "http/services.hpp"
#include "os/coarse_clock.hpp"

#include <chrono>

namespace mailassay::http {

core::limits::millis steady_millis() {
  // The coarse clock is precise enough for windows of a minute and more.
  return std::chrono::duration_cast<core::limits::millis>(
      os::coarse_steady_now().time_since_epoch());
}

rate_headers headers_of(const actors::limit_decision& d) {
  return {d.limit, d.remaining, d.reset_seconds};
}

bool has_windows(const core::account::rate_limits& l) {
  auto on = [](const std::optional<std::int64_t>& v) { return v && *v > 0; };
  return on(l.per_minute) || on(l.per_hour) || on(l.per_day);
}

actors::key_scope key_scope_of(const core::account::api_key& key) {
  return actors::key_scope{key.id, key.limits};
}

std::optional<std::string> device_id_of(const request_view& req) {
  auto usable = [](std::string_view v) {
    if (v.empty() || v.size() > 128)
      return false;
    for (unsigned char ch : v)
      if (ch <= 0x20 || ch >= 0x7f)
        return false;
    return true;
  };
  if (auto h = req.header("X-Device-Id"))
    return usable(*h) ? std::optional<std::string>{*h} : std::nullopt;
  auto cookies = req.header("Cookie");
  if (!cookies)
    return std::nullopt;
  constexpr std::string_view name = "mailassay_device=";
  std::string_view rest = *cookies;
  while (!rest.empty()) {
    auto end = rest.find(';');
    auto pair = rest.substr(0, end);
    while (!pair.empty() && pair.front() == ' ')
      pair.remove_prefix(1);
    if (pair.substr(0, name.size()) == name) {
      auto value = pair.substr(name.size());
      return usable(value) ? std::optional<std::string>{value} : std::nullopt;
    }
    if (end == std::string_view::npos)
      break;
    rest.remove_prefix(end + 1);
  }
  return std::nullopt;
}

rate_headers unmetered_rate(const services& svc, const request_view& req,
                            const core::account::api_key* key) {
  const auto& limits = svc.cfg.limits;
  if (!limits.enabled)
    return {limits.ip_per_minute, limits.ip_per_minute, 0};
  actors::limit_check c;
  c.now = steady_millis();
  // Held here: a revoke on another thread may drop the cache's reference.
  std::shared_ptr<const core::account::api_key> held;
  if (!key) {
    auto who = cached_principal(svc, req);
    if (who && *who)
      held = (*who)->key;
    key = held.get();
  }
  if (key && has_windows(key->limits))
    c.key = key_scope_of(*key);
  else
    c.ip = actors::ip_scope{req.client_ip, std::nullopt};
  return headers_of(svc.limiter.peek(c));
}

} // namespace mailassay::http
