// /v2/webhooks (docs/webhooks.md): users only; owners and admins manage,
// members read.
#include "actors/webhooks/dispatcher.hpp"
#include "http/handler_support.hpp"
#include "http/webhook_codec.hpp"

#include <charconv>

namespace mailassay::http {

namespace uc = actors::webhooks;
namespace wc = webhook_codec;

namespace {

codec::json endpoint_list(const std::vector<core::webhooks::endpoint>& list) {
  auto items = codec::json::array();
  for (const auto& w : list)
    items.push_back(wc::endpoint(w));
  return codec::json{{"items", items}};
}

codec::json delivery_list(const std::vector<core::webhooks::delivery>& list) {
  auto items = codec::json::array();
  for (const auto& d : list)
    items.push_back(wc::delivery(d));
  return codec::json{{"items", items}};
}

} // namespace

void handle_create_webhook(call c) {
  // The answer carries the signing secret.
  c.ex->add_header("Cache-Control", "no-store");
  auto in = wc::new_endpoint(c.req());
  with_principal(
      c, true,
      [c, in = std::move(in)](uc::account_env& env, const uc::principal& p) {
        if (!in)
          return c.ex->fail(in.error_value());
        reply(c, uc::create_endpoint(env, p, *in), 201,
              wc::endpoint_with_secret);
      });
}

void handle_list_webhooks(call c) {
  with_principal(c, true, [c](uc::account_env& env, const uc::principal& p) {
    reply(c, uc::list_endpoints(env, p), 200, endpoint_list);
  });
}

void handle_get_webhook(call c) {
  auto id = c.req().params.at("id");
  with_principal(c, true,
                 [c, id](uc::account_env& env, const uc::principal& p) {
                   reply(c, uc::get_endpoint(env, p, id), 200, wc::endpoint);
                 });
}

void handle_update_webhook(call c) {
  auto patch = wc::endpoint_update(c.req());
  auto id = c.req().params.at("id");
  with_principal(c, true,
                 [c, id, patch = std::move(patch)](uc::account_env& env,
                                                   const uc::principal& p) {
                   if (!patch)
                     return c.ex->fail(patch.error_value());
                   reply(c, uc::update_endpoint(env, p, id, *patch), 200,
                         wc::endpoint);
                 });
}

void handle_delete_webhook(call c) {
  auto id = c.req().params.at("id");
  with_principal(c, true,
                 [c, id](uc::account_env& env, const uc::principal& p) {
                   reply_empty(c, uc::delete_endpoint(env, p, id));
                 });
}

void handle_rotate_webhook_secret(call c) {
  c.ex->add_header("Cache-Control", "no-store");
  auto id = c.req().params.at("id");
  with_principal(
      c, true, [c, id](uc::account_env& env, const uc::principal& p) {
        reply(c, uc::rotate_secret(env, p, id), 200, wc::endpoint_with_secret);
      });
}

void handle_test_webhook(call c) {
  auto id = c.req().params.at("id");
  with_principal(c, true,
                 [c, id](uc::account_env& env, const uc::principal& p) {
                   auto d = uc::send_test(env, p, id, env.now * 1000);
                   if (d && c.svc->webhooks)
                     c.svc->webhooks->wake();
                   reply(c, d, 202, wc::delivery);
                 });
}

void handle_webhook_deliveries(call c) {
  auto id = c.req().params.at("id");
  std::int64_t limit = 20;
  std::optional<core::error> bad;
  if (auto text = c.req().query_param("limit")) {
    auto [p, ec] =
        std::from_chars(text->data(), text->data() + text->size(), limit);
    if (ec != std::errc{} || p != text->data() + text->size() || limit < 1 ||
        limit > 100) {
      bad = core::make_error(core::errc::validation_failed, "");
      bad->details = {"limit must be an integer between 1 and 100"};
    }
  }
  with_principal(
      c, true,
      [c, id, limit, bad](uc::account_env& env, const uc::principal& p) {
        if (bad)
          return c.ex->fail(*bad);
        reply(c, uc::list_deliveries(env, p, id, limit), 200, delivery_list);
      });
}

} // namespace mailassay::http
