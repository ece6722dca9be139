#include "actors/batch/result_row.hpp"

#include <nlohmann/json.hpp>

namespace mailassay::actors::batch {

using nlohmann::json;

namespace {

json or_null(const std::optional<bool>& v) {
  return v ? json(*v) : json(nullptr);
}

} // namespace

core::batch::item item_from_result(std::int64_t seq, std::string email,
                                   const validation::result& r) {
  core::batch::item it;
  it.seq = seq;
  it.email = std::move(email);
  it.done = true;
  it.status = r.verdict.state;
  it.reason = r.verdict.reason;
  it.score = r.verdict.score;
  it.credits = r.credits_used;
  const auto& a = r.address;
  const auto& c = r.checks;
  json d;
  d["normalized"] = a.valid ? json(a.normalized) : json(nullptr);
  if (r.route) {
    using core::dns::route_kind;
    d["mx"] = r.route->kind == route_kind::mx ||
              r.route->kind == route_kind::implicit_mx;
  } else {
    d["mx"] = nullptr;
  }
  d["disposable"] = or_null(c.disposable);
  d["role"] = or_null(c.role_account);
  d["free"] = c.free_provider;
  d["random"] = c.random ? json(c.random->is_random) : json(nullptr);
  d["catchAll"] = or_null(r.smtp.catch_all);
  d["smtpChecked"] = r.smtp.checked;
  d["suggestion"] = c.suggested_domain
                        ? json(a.local_part + "@" + *c.suggested_domain)
                        : json(nullptr);
  if (r.route && r.route->provider)
    d["provider"] = {
        {"name", r.route->provider->name},
        {"kind", core::provider::to_string(r.route->provider->kind)}};
  else
    d["provider"] = nullptr;
  it.detail = d.dump();
  return it;
}

} // namespace mailassay::actors::batch
