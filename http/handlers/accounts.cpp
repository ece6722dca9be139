#include "http/codec/accounts.hpp"

#include "http/auth_throttle.hpp"
#include "http/handler_support.hpp"
#include "http/session_cookie.hpp"
#include "http/text_pool.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;

void handle_signup(call c) {
  c.ex->add_header("Cache-Control", "no-store");
  auto in = codec::signup(c.req());
  if (!in)
    return c.ex->fail(in.error_value());
  auto cookie = session_cookie::mode(c);
  if (!cookie)
    return;
  admit_signup(c, [c, in = std::move(*in), cookie] {
    with_storage(c, [c, in, cookie](uc::account_env& env) {
      if (*cookie)
        return session_cookie::reply(c, uc::signup(env, in), 201);
      reply(c, uc::signup(env, in), 201, codec::session);
    });
  });
}

void handle_login(call c) {
  c.ex->add_header("Cache-Control", "no-store");
  auto in = codec::login(c.req());
  if (!in)
    return c.ex->fail(in.error_value());
  auto cookie = session_cookie::mode(c);
  if (!cookie)
    return;
  auto email = in->first;
  admit_login(
      c, email,
      [c, in = std::move(*in), cookie](const actors::window_scope& account) {
        with_storage(c, [c, in, account, cookie](uc::account_env& env) {
          auto r = uc::login(env, in.first, in.second);
          if (!r && r.error_value().code == core::errc::unauthorized)
            login_failed(c, account);
          if (*cookie)
            return session_cookie::reply(c, r, 200);
          reply(c, r, 200, codec::session);
        });
      });
}

void handle_refresh(call c) {
  c.ex->add_header("Cache-Control", "no-store");
  if (c.req().body.empty())
    return session_cookie::refresh(c);
  auto token = codec::refresh_token(c.req());
  if (!token)
    return c.ex->fail(token.error_value());
  with_storage(c, [c, token = std::move(*token)](uc::account_env& env) {
    reply(c, uc::refresh(env, token), 200, codec::token_pair);
  });
}

void handle_logout(call c) {
  if (c.req().body.empty())
    return session_cookie::logout(c);
  auto token = codec::refresh_token(c.req());
  if (!token)
    return c.ex->fail(token.error_value());
  with_storage(c, [c, token = std::move(*token)](uc::account_env& env) {
    reply_empty(c, uc::logout(env, token));
  });
}

void handle_me(call c) {
  // An API key in the key cache whose organization is cached too (after its
  // first `me`) is answered here, without a storage job: the cheapest
  // authenticated request, which integrations use to check a key.
  if (auto cached = cached_principal(*c.svc, c.req())) {
    if (!*cached)
      return c.ex->fail(cached->error_value());
    const auto& who = **cached;
    if (auto org = c.svc->keys.find_organization(who.organization_id())) {
      c.ex->set_rate_key(who.key);
      auto body = text_pool::take();
      codec::write_key_me(body, *who.key, *org);
      return c.ex->json(200, std::move(body));
    }
  }
  with_principal(c, false, [c](uc::account_env& env, const uc::principal& p) {
    reply(c, uc::me(env, p), 200, codec::me);
  });
}

void handle_get_organization(call c) {
  with_principal(c, false, [c](uc::account_env& env, const uc::principal& p) {
    reply(c, uc::organization(env, p), 200, codec::organization_view);
  });
}

void handle_list_members(call c) {
  with_principal(c, true, [c](uc::account_env& env, const uc::principal& p) {
    reply(c, uc::list_members(env, p), 200, codec::members);
  });
}

void handle_add_member(call c) {
  auto in = codec::new_member(c.req());
  with_principal(
      c, true,
      [c, in = std::move(in)](uc::account_env& env, const uc::principal& p) {
        if (!in)
          return c.ex->fail(in.error_value());
        reply(c, uc::add_member(env, p, *in), 201, codec::member);
      });
}

void handle_update_member(call c) {
  auto r = codec::role_change(c.req());
  auto id = c.req().params.at("userId");
  with_principal(
      c, true,
      [c, r = std::move(r), id](uc::account_env& env, const uc::principal& p) {
        if (!r)
          return c.ex->fail(r.error_value());
        reply(c, uc::change_member_role(env, p, id, *r), 200, codec::member);
      });
}

void handle_remove_member(call c) {
  auto id = c.req().params.at("userId");
  with_principal(c, true,
                 [c, id](uc::account_env& env, const uc::principal& p) {
                   reply_empty(c, uc::remove_member(env, p, id));
                 });
}

} // namespace mailassay::http
