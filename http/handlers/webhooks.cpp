// /v2/webhooks (docs/webhooks.md): users only; owners and admins manage,
// members read. Most handlers are one answer_user* call naming the use case
// and the encoder: alike in shape with the keys' by design, as a route table
// is.
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
  answer_user_with(c, wc::new_endpoint(c.req()), 201, uc::create_endpoint,
                   wc::endpoint_with_secret);
}

void handle_list_webhooks(call c) {
  answer_user(c, 200, uc::list_endpoints, wc::endpoint_list);
}

void handle_get_webhook(call c) {
  answer_user(c, 200, uc::get_endpoint, wc::endpoint, c.req().params.at("id"));
}

void handle_update_webhook(call c) {
  answer_user_with(c, wc::endpoint_update(c.req()), 200, uc::update_endpoint,
                   wc::endpoint, c.req().params.at("id"));
}

void handle_delete_webhook(call c) {
  answer_user_empty(c, uc::delete_endpoint, c.req().params.at("id"));
}

void handle_rotate_webhook_secret(call c) {
  c.ex->add_header("Cache-Control", "no-store");
  answer_user(c, 200, uc::rotate_secret, wc::endpoint_with_secret,
              c.req().params.at("id"));
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
  answer_user_with(c, codec::integer_param(c.req(), "limit", 20, 1, 100), 200,
                   uc::list_deliveries, wc::delivery_list,
                   c.req().params.at("id"));
}

} // namespace mailassay::http
