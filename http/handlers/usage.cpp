// GET /v2/usage: the organization's usage over all its keys (the
// dashboard's overview).
#include "http/codec/usage.hpp"

#include "core/usage/calendar.hpp"
#include "http/codec/reader.hpp"
#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;

void handle_organization_usage(call c) {
  // `days`, 1..365, default 30 (as for one key's statistics).
  auto days = codec::integer_param(
      c.req(), "days", core::usage::default_window_days,
      core::usage::min_window_days, core::usage::max_window_days);
  // Counts still in the recorder's memory are written first, so the answer
  // includes the requests made just before (as for one key's statistics).
  c.svc->usage.flush(actors::flush_done{[c, days](bool) {
    with_principal(
        c, true, [c, days](uc::account_env& env, const uc::principal& who) {
          if (!days)
            return c.ex->fail(days.error_value());
          reply(c, uc::usage_of_organization(env, who, static_cast<int>(*days)),
                200, codec::organization_usage);
        });
  }});
}

} // namespace mailassay::http
