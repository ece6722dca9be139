// GET /v2/usage: the organization's usage over all its keys (the
// dashboard's overview).
#include "core/usage/calendar.hpp"
#include "http/codec_usage.hpp"
#include "http/handler_support.hpp"

#include <charconv>

namespace mailassay::http {

namespace uc = actors::accounts;

namespace {

// `days`, 1..365, default 30 (as for one key's statistics).
std::optional<int> window_days(const request_view& req) {
  auto text = req.query_param("days");
  if (!text)
    return core::usage::default_window_days;
  int v = 0;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc{} || p != text->data() + text->size() ||
      v < core::usage::min_window_days || v > core::usage::max_window_days)
    return std::nullopt;
  return v;
}

} // namespace

void handle_organization_usage(call c) {
  auto days = window_days(c.req());
  // Counts still in the recorder's memory are written first, so the answer
  // includes the requests made just before (as for one key's statistics).
  c.svc->usage.flush(actors::flush_done{[c, days](bool) {
    with_principal(
        c, true, [c, days](uc::account_env& env, const uc::principal& who) {
          if (!days) {
            auto e = core::make_error(core::errc::validation_failed, "");
            e.details = {"days must be an integer between 1 and 365"};
            return c.ex->fail(e);
          }
          reply(c, uc::usage_of_organization(env, who, *days), 200,
                codec::organization_usage);
        });
  }});
}

} // namespace mailassay::http
