#include <charconv>

#include "core/base/time_format.hpp"
#include "core/usage/calendar.hpp"
#include "core/usage/stats.hpp"
#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = actors::accounts;

namespace {

core::expected<int> days_param(const request_view& req) {
  auto text = req.query_param("days");
  if (!text)
    return core::usage::default_window_days;
  int v = 0;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc{} || p != text->data() + text->size()
      || v < core::usage::min_window_days
      || v > core::usage::max_window_days) {
    auto e = core::make_error(core::errc::validation_failed, "");
    e.details = {"days must be an integer between 1 and 365"};
    return e;
  }
  return v;
}

codec::json stats_json(const core::usage::key_stats& s) {
  auto days = codec::json::array();
  for (auto& d : s.requests_by_day)
    days.push_back({{"date", d.day},
                    {"requests", d.requests},
                    {"successful", d.successful},
                    {"credits", d.credits}});
  return {{"totalRequests", s.total_requests},
          {"successRate", s.success_rate},
          {"creditsConsumed", s.credits_consumed},
          {"topEmails", s.top_emails},
          {"requestsByDay", days}};
}

void answer_stats(call c, std::string id, int days) {
  with_principal(c, true, [c, id, days](uc::account_env& env,
                                        const uc::principal& who) {
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
          stats_json);
  });
}

} // namespace

void handle_key_stats(call c) {
  auto days = days_param(c.req());
  auto id = c.req().params.at("id");
  if (!days) {
    // Credentials first, as everywhere: a stranger learns nothing.
    return with_principal(c, true,
                          [c, e = days.error_value()](uc::account_env&,
                                                      const uc::principal&) {
                            c.ex->fail(e);
                          });
  }
  // Counts still in the recorder's memory are written first, so the answer
  // includes the requests made just before.
  c.svc->usage.flush(actors::flush_done{
    [c, id, days = *days](bool) { answer_stats(c, id, days); }});
}

} // namespace mailassay::http
