// /v2/webhooks (docs/webhooks.md): users only; owners and admins manage,
// members read.
#include "http/codec/webhooks.hpp"

#include "actors/webhooks/dispatcher.hpp"
#include "http/codec/reader.hpp"
#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = use_cases::webhooks;
namespace wc = codec;

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
    reply(c, uc::list_endpoints(env, p), 200, wc::endpoint_list);
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
  auto limit = codec::integer_param(c.req(), "limit", 20, 1, 100);
  with_principal(c, true,
                 [c, id, limit](uc::account_env& env, const uc::principal& p) {
                   if (!limit)
                     return c.ex->fail(limit.error_value());
                   reply(c, uc::list_deliveries(env, p, id, *limit), 200,
                         wc::delivery_list);
                 });
}

} // namespace mailassay::http
