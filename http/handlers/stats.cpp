// GET /v2/api-keys/{id}/stats: one key's usage (docs/usage-stats.md).
#include "core/usage/calendar.hpp"
#include "http/codec/reader.hpp"
#include "http/codec/usage.hpp"
#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;

void handle_key_stats(call c) {
  auto days = codec::integer_param(
      c.req(), "days", core::usage::default_window_days,
      core::usage::min_window_days, core::usage::max_window_days);
  auto id = c.req().params.at("id");
  if (!days) {
    // Credentials first, as everywhere: a stranger learns nothing.
    return with_principal(
        c, true,
        [c, e = days.error_value()](uc::account_env&, const uc::principal&) {
          c.ex->fail(e);
        });
  }
  // Counts still in the recorder's memory are written first, so the answer
  // includes the requests made just before.
  c.svc->usage.flush(actors::flush_done{[c, id,
                                         days = static_cast<int>(*days)](bool) {
    with_principal(
        c, true, [c, id, days](uc::account_env& env, const uc::principal& who) {
          reply(c, uc::usage_of_key(env, who, id, days), 200, codec::key_stats);
        });
  }});
}

} // namespace mailassay::http
