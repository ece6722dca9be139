#include "core/dns/route.hpp"

#include <algorithm>

namespace mailassay::core::dns {

namespace {

std::optional<std::uint32_t> min_ttl(std::optional<std::uint32_t> x,
                                     std::optional<std::uint32_t> y) {
  if (x && y)
    return std::min(*x, *y);
  return x ? x : y;
}

// c-ares expands the root name to "", zone files write it as ".".
bool is_root(std::string_view host) {
  return host.empty() || host == ".";
}

mail_route make(route_kind kind, rcode cause,
                std::optional<std::uint32_t> ttl) {
  mail_route r;
  r.kind = kind;
  r.cause = cause;
  r.ttl = ttl;
  return r;
}

} // namespace

std::string_view to_string(route_kind kind) {
  switch (kind) {
    case route_kind::mx: return "mx";
    case route_kind::implicit_mx: return "implicit_mx";
    case route_kind::null_mx: return "null_mx";
    case route_kind::no_mx: return "no_mx";
    case route_kind::invalid_domain: return "invalid_domain";
    case route_kind::dns_error: return "dns_error";
  }
  return "dns_error";
}

bool needs_address_lookup(const lookup_result& mx_answer) {
  return mx_answer.code == rcode::nodata ||
         (mx_answer.code == rcode::ok && mx_answer.mx.empty());
}

lookup_result merge_address_answers(const lookup_result& a,
                                    const lookup_result& aaaa) {
  lookup_result out;
  out.has_a = a.has_a || (a.code == rcode::ok && !a.addresses.empty());
  out.has_aaaa =
      aaaa.has_aaaa || (aaaa.code == rcode::ok && !aaaa.addresses.empty());
  for (const auto* part : {&a, &aaaa})
    if (part->code == rcode::ok)
      out.addresses.insert(out.addresses.end(), part->addresses.begin(),
                           part->addresses.end());
  if (!out.addresses.empty()) {
    out.code = rcode::ok;
    for (const auto* part : {&a, &aaaa})
      if (part->code == rcode::ok && !part->addresses.empty())
        out.ttl = min_ttl(out.ttl, part->ttl);
    return out;
  }
  if (is_failure(a.code) || is_failure(aaaa.code)) {
    out.code = is_failure(a.code) ? a.code : aaaa.code;
    return out;
  }
  out.code = a.code == rcode::nxdomain && aaaa.code == rcode::nxdomain
                 ? rcode::nxdomain
                 : rcode::nodata;
  out.ttl = min_ttl(a.ttl, aaaa.ttl);
  return out;
}

mail_route interpret(std::string_view domain, const lookup_result& mx_answer,
                     const std::optional<lookup_result>& address_answer) {
  if (mx_answer.code == rcode::nxdomain)
    return make(route_kind::invalid_domain, rcode::nxdomain, mx_answer.ttl);
  if (is_failure(mx_answer.code))
    return make(route_kind::dns_error, mx_answer.code, std::nullopt);
  if (!needs_address_lookup(mx_answer)) {
    // RFC 7505 §3: a null MX is the only MX of its domain.
    std::vector<mx_record> hosts;
    for (const auto& mx : mx_answer.mx) {
      if (is_root(mx.host))
        continue;
      auto host = normalize_name(mx.host);
      auto same = [&](const mx_record& r) { return r.host == host; };
      auto dup = std::find_if(hosts.begin(), hosts.end(), same);
      if (dup == hosts.end())
        hosts.push_back({std::move(host), mx.priority});
      else
        dup->priority = std::min(dup->priority, mx.priority);
    }
    if (hosts.empty())
      return make(route_kind::null_mx, rcode::ok, mx_answer.ttl);
    std::stable_sort(hosts.begin(), hosts.end(),
                     [](const mx_record& x, const mx_record& y) {
                       return x.priority < y.priority;
                     });
    auto r = make(route_kind::mx, rcode::ok, mx_answer.ttl);
    r.hosts = std::move(hosts);
    return r;
  }
  if (!address_answer)
    return make(route_kind::dns_error, rcode::other_error, std::nullopt);
  const auto& addr = *address_answer;
  if (addr.code == rcode::ok && !addr.addresses.empty()) {
    auto r = make(route_kind::implicit_mx, rcode::ok,
                  min_ttl(mx_answer.ttl, addr.ttl));
    r.hosts.push_back({normalize_name(domain), 0});
    r.addresses = addr.addresses;
    return r;
  }
  if (is_failure(addr.code))
    return make(route_kind::dns_error, addr.code, std::nullopt);
  return make(route_kind::no_mx, rcode::nodata,
              min_ttl(mx_answer.ttl, addr.ttl));
}

} // namespace mailassay::core::dns
