#include "core/usage/stats.hpp"

#include "core/base/time_format.hpp"
#include "core/usage/calendar.hpp"
#include "http/codec/reader.hpp"
#include "http/codec/usage.hpp"
#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = actors::accounts;

namespace {

void answer_stats(call c, std::string id, int days) {
  with_principal(
      c, true, [c, id, days](uc::account_env& env, const uc::principal& who) {
        auto key = uc::get_key(env, who, id);
        if (!key)
          return c.ex->fail(key.error_value());
        auto today = core::utc_day(env.now);
        auto from = core::usage::window_start(today, days);
        if (!from)
          return c.ex->fail(from.error_value());
        auto rows = env.db.usage_between(id, *from, today);
        if (!rows)
          return c.ex->fail(rows.error_value());
        auto distinct = env.db.distinct_addresses(id, *from, today);
        if (!distinct)
          return c.ex->fail(distinct.error_value());
        std::vector<core::usage::day_counts> stored;
        for (auto& r : *rows)
          stored.push_back({r.day, r.requests, r.successful, r.credits});
        reply(c, core::usage::compute(stored, *distinct, today, days), 200,
              codec::key_stats);
      });
}

} // namespace

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
  c.svc->usage.flush(
      actors::flush_done{[c, id, days = static_cast<int>(*days)](bool) {
        answer_stats(c, id, days);
      }});
}

} // namespace mailassay::http
