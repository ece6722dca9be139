// Usage statistics (docs/usage-stats.md): GET /v2/api-keys/{id}/stats (one
// key) and GET /v2/usage (the organization over all its keys, the
// dashboard's overview).
#include "http/codec/usage.hpp"

#include "core/usage/calendar.hpp"
#include "http/codec/reader.hpp"
#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;

namespace {

// Runs `f(env, principal, days)` for a user once the usage counts still in
// the recorder's memory are written, so that the answer includes the
// requests made just before. `days` is the query's window, 1..365, default
// 30; a bad one is answered after the credentials, as everywhere: a
// stranger learns nothing.
template <class F>
void with_usage_window(call c, F f) {
  auto days = codec::integer_param(
      c.req(), "days", core::usage::default_window_days,
      core::usage::min_window_days, core::usage::max_window_days);
  c.svc->usage.flush(actors::flush_done{[c, days, f](bool) {
    with_principal(
        c, true, [c, days, f](uc::account_env& env, const uc::principal& who) {
          if (!days)
            return c.ex->fail(days.error_value());
          f(env, who, static_cast<int>(*days));
        });
  }});
}

} // namespace

void handle_key_stats(call c) {
  auto id = c.req().params.at("id");
  with_usage_window(
      c, [c, id](uc::account_env& env, const uc::principal& who, int days) {
        reply(c, uc::usage_of_key(env, who, id, days), 200, codec::key_stats);
      });
}

void handle_organization_usage(call c) {
  with_usage_window(
      c, [c](uc::account_env& env, const uc::principal& who, int days) {
        reply(c, uc::usage_of_organization(env, who, days), 200,
              codec::organization_usage);
      });
}

} // namespace mailassay::http
