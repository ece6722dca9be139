#include "http/codec/keys.hpp"

#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;
namespace acc = core::account;

namespace {

void set_status(call c, acc::key_status status) {
  auto id = c.req().params.at("id");
  with_principal(
      c, true, [c, id, status](uc::account_env& env, const uc::principal& p) {
        reply(c, uc::set_key_status(env, p, id, status), 200, codec::api_key);
      });
}

} // namespace

void handle_create_key(call c) {
  // The answer carries the key's secret.
  c.ex->add_header("Cache-Control", "no-store");
  auto in = codec::new_key(c.req());
  with_principal(
      c, true,
      [c, in = std::move(in)](uc::account_env& env, const uc::principal& p) {
        if (!in)
          return c.ex->fail(in.error_value());
        reply(c, uc::create_key(env, p, *in), 201, codec::created_key);
      });
}

void handle_rate_limits(call c) {
  with_principal(c, true, [c](uc::account_env& env, const uc::principal& p) {
    auto defaults = uc::default_key_limits(env.cfg);
    reply(c, uc::list_keys(env, p), 200,
          [&](auto& keys) { return codec::key_rate_limits(defaults, keys); });
  });
}

void handle_list_keys(call c) {
  with_principal(c, true, [c](uc::account_env& env, const uc::principal& p) {
    reply(c, uc::list_keys(env, p), 200, codec::key_list);
  });
}

void handle_get_key(call c) {
  auto id = c.req().params.at("id");
  with_principal(c, true,
                 [c, id](uc::account_env& env, const uc::principal& p) {
                   reply(c, uc::get_key(env, p, id), 200, codec::api_key);
                 });
}

void handle_update_key(call c) {
  auto patch = codec::key_update(c.req());
  auto id = c.req().params.at("id");
  with_principal(c, true,
                 [c, id, patch = std::move(patch)](uc::account_env& env,
                                                   const uc::principal& p) {
                   if (!patch)
                     return c.ex->fail(patch.error_value());
                   reply(c, uc::update_key(env, p, id, *patch), 200,
                         codec::api_key);
                 });
}

void handle_delete_key(call c) {
  auto id = c.req().params.at("id");
  with_principal(c, true,
                 [c, id](uc::account_env& env, const uc::principal& p) {
                   reply_empty(c, uc::delete_key(env, p, id));
                 });
}

void handle_revoke_key(call c) {
  set_status(c, acc::key_status::revoked);
}

void handle_reactivate_key(call c) {
  set_status(c, acc::key_status::active);
}

} // namespace mailassay::http
