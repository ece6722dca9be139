// /v2/api-keys (docs/api.md): users only; owners and admins manage, members
// read. Most handlers are one answer_user* call naming the use case and the
// encoder: alike in shape with the webhooks' by design, as a route table is.
#include "http/codec/keys.hpp"

#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;
namespace acc = core::account;

namespace {

void set_status(call c, acc::key_status status) {
  answer_user(c, 200, uc::set_key_status, codec::api_key,
              c.req().params.at("id"), status);
}

} // namespace

void handle_create_key(call c) {
  // The answer carries the key's secret.
  c.ex->add_header("Cache-Control", "no-store");
  answer_user_with(c, codec::new_key(c.req()), 201, uc::create_key,
                   codec::created_key);
}

void handle_rate_limits(call c) {
  with_principal(c, true, [c](uc::account_env& env, const uc::principal& p) {
    auto defaults = uc::default_key_limits(env.cfg);
    reply(c, uc::list_keys(env, p), 200,
          [&](auto& keys) { return codec::key_rate_limits(defaults, keys); });
  });
}

void handle_list_keys(call c) {
  answer_user(c, 200, uc::list_keys, codec::key_list);
}

void handle_get_key(call c) {
  answer_user(c, 200, uc::get_key, codec::api_key, c.req().params.at("id"));
}

void handle_update_key(call c) {
  answer_user_with(c, codec::key_update(c.req()), 200, uc::update_key,
                   codec::api_key, c.req().params.at("id"));
}

void handle_delete_key(call c) {
  answer_user_empty(c, uc::delete_key, c.req().params.at("id"));
}

void handle_revoke_key(call c) {
  set_status(c, acc::key_status::revoked);
}

void handle_reactivate_key(call c) {
  set_status(c, acc::key_status::active);
}

} // namespace mailassay::http
