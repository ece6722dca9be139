#include "core/smtp/host_limits.hpp"

#include <algorithm>
#include <charconv>

namespace mailassay::core::smtp {

budget_limits host_limits_config::limits_of(std::string_view key) const {
  budget_limits l{max_sessions, connections_per_second};
  if (overrides.empty())
    return l;
  auto it = overrides.find(key);
  if (it == overrides.end())
    return l;
  if (it->second.max_sessions)
    l.max_sessions = *it->second.max_sessions;
  if (it->second.connections_per_second)
    l.connections_per_second = *it->second.connections_per_second;
  return l;
}

std::string budget_key(std::string_view host,
                       const provider::table* providers) {
  if (providers)
    if (auto* p = providers->find(host))
      return "provider:" + p->name;
  return std::string{host};
}

namespace {

// Reads a whole decimal number in [0, 10000], as the per-host settings.
template <class T>
bool read_count(std::string_view text, std::optional<T>& out) {
  if (text.empty())
    return true;
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || v < T{0} ||
      v > T{10000})
    return false;
  out = v;
  return true;
}

} // namespace

expected<std::map<std::string, budget_override, std::less<>>>
parse_provider_limits(const std::vector<std::string>& entries) {
  std::map<std::string, budget_override, std::less<>> out;
  for (const auto& e : entries) {
    auto bad = [&] {
      return make_error(errc::bad_request,
                        "bad provider limit '" + e +
                            "' (expected "
                            "name=sessions[/per_second[/rcpts_per_session]])");
    };
    auto eq = e.find('=');
    if (eq == std::string::npos || eq == 0)
      return bad();
    std::string_view name{e.data(), eq};
    std::string_view rest{e.data() + eq + 1, e.size() - eq - 1};
    std::vector<std::string_view> parts;
    for (auto slash = rest.find('/');; slash = rest.find('/')) {
      parts.push_back(rest.substr(0, slash));
      if (slash == std::string_view::npos)
        break;
      rest.remove_prefix(slash + 1);
    }
    budget_override o;
    if (parts.size() > 3 || !read_count(parts[0], o.max_sessions) ||
        (parts.size() > 1 && !read_count(parts[1], o.connections_per_second)) ||
        (parts.size() > 2 && !read_count(parts[2], o.max_rcpts_per_session)))
      return bad();
    // A trailing '/' with nothing after it is a typo, not a default.
    if (parts.size() > 1 && parts.back().empty())
      return bad();
    if (o.max_rcpts_per_session == std::size_t{0})
      return bad();
    if (!o.max_sessions && !o.connections_per_second &&
        !o.max_rcpts_per_session)
      return bad();
    if (!out.emplace("provider:" + std::string{name}, o).second)
      return make_error(errc::bad_request, "provider limit for '" +
                                               std::string{name} +
                                               "' given twice");
  }
  return out;
}

std::size_t rcpts_per_session(
    std::string_view host, const provider::table* providers,
    const std::map<std::string, budget_override, std::less<>>& overrides,
    std::size_t per_host) {
  auto it = overrides.find(budget_key(host, providers));
  return it != overrides.end() && it->second.max_rcpts_per_session
             ? *it->second.max_rcpts_per_session
             : per_host;
}

std::vector<std::string> unknown_providers(
    const std::map<std::string, budget_override, std::less<>>& overrides,
    const provider::table& known) {
  constexpr std::string_view prefix = "provider:";
  std::vector<std::string> out;
  for (const auto& [key, o] : overrides) {
    auto name = std::string_view{key}.substr(prefix.size());
    const auto& names = known.names();
    if (!std::binary_search(names.begin(), names.end(), name))
      out.emplace_back(name);
  }
  return out;
}

host_limits::host_limits(host_limits_config config)
    : config_(std::move(config)) {}

bool host_limits::idle(const entry& e, limits::millis now) const {
  return e.open == 0 && (!e.bucket || e.bucket->is_full(now));
}

admission host_limits::try_open(std::string_view host, limits::millis now) {
  if (hosts_.size() >= sweep_at_) {
    sweep(now);
    sweep_at_ = std::max<std::size_t>(1024, hosts_.size() * 2);
  }
  auto& e = hosts_[std::string{host}];
  auto l = config_.limits_of(host);
  if (l.max_sessions > 0 && e.open >= l.max_sessions) {
    admission full;
    full.full = true;
    return full;
  }
  if (l.connections_per_second > 0) {
    if (!e.bucket)
      e.bucket.emplace(
          limits::window_spec{l.connections_per_second, limits::millis{1000}},
          now);
    if (!e.bucket->take(now).allowed) {
      // One token refills in 1000/limit ms.
      auto per_token =
          (1000 + l.connections_per_second - 1) / l.connections_per_second;
      admission later;
      later.retry_at = now + limits::millis{per_token};
      return later;
    }
  }
  ++e.open;
  admission granted;
  granted.granted = true;
  return granted;
}

void host_limits::close(std::string_view host, limits::millis now) {
  auto it = hosts_.find(std::string{host});
  if (it == hosts_.end())
    return;
  if (it->second.open > 0)
    --it->second.open;
  if (idle(it->second, now))
    hosts_.erase(it);
}

void host_limits::reconfigure(const host_limits_config& config,
                              limits::millis now) {
  config_ = config;
  for (auto& [host, e] : hosts_) {
    if (!e.bucket)
      continue;
    auto l = config_.limits_of(host);
    if (l.connections_per_second > 0)
      e.bucket->reshape(
          limits::window_spec{l.connections_per_second, limits::millis{1000}},
          now);
    else
      e.bucket.reset();
  }
}

std::size_t host_limits::open_sessions(std::string_view host) const {
  auto it = hosts_.find(std::string{host});
  return it == hosts_.end() ? 0 : it->second.open;
}

void host_limits::sweep(limits::millis now) {
  std::erase_if(hosts_, [&](const auto& kv) { return idle(kv.second, now); });
}

} // namespace mailassay::core::smtp
