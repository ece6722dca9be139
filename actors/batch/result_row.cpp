#include "actors/batch/result_row.hpp"

namespace mailassay::actors::batch {

core::batch::item_flags flags_of(const validation::result& r) {
  const auto& a = r.address;
  const auto& c = r.checks;
  core::batch::item_flags f;
  if (a.valid)
    f.normalized = a.normalized;
  if (r.route) {
    using core::dns::route_kind;
    f.mx = r.route->kind == route_kind::mx ||
           r.route->kind == route_kind::implicit_mx;
  }
  f.disposable = c.disposable;
  f.role = c.role_account;
  f.free = c.free_provider;
  if (c.random)
    f.random = c.random->is_random;
  f.catch_all = r.smtp.catch_all;
  f.smtp_checked = r.smtp.checked;
  if (c.suggested_domain)
    f.suggestion = a.local_part + "@" + *c.suggested_domain;
  if (r.route && r.route->provider)
    f.provider = *r.route->provider;
  return f;
}

core::batch::item item_from_result(std::int64_t seq, std::string email,
                                   const validation::result& r,
                                   const detail_writer& write) {
  core::batch::item it;
  it.seq = seq;
  it.email = std::move(email);
  it.done = true;
  it.status = r.verdict.state;
  it.reason = r.verdict.reason;
  it.score = r.verdict.score;
  it.credits = r.credits_used;
  it.detail = write(flags_of(r));
  return it;
}

} // namespace mailassay::actors::batch
