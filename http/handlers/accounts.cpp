#include "http/codec/accounts.hpp"

#include "http/auth_throttle.hpp"
#include "http/codec/organization_export.hpp"
#include "http/handler_support.hpp"
#include "http/session_cookie.hpp"
#include "http/text_pool.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;

namespace {

// What sign-up and login read before their throttle: the body, and whether
// the session goes into the cookie (`?session=cookie`).
template <class T>
struct session_request {
  T body;
  bool cookie;
};

// Never cached (the answer carries tokens); empty once a bad body or
// session mode has been answered.
template <class T>
std::optional<session_request<T>> read_session_request(call c,
                                                       core::expected<T> in) {
  c.ex->add_header("Cache-Control", "no-store");
  if (!in) {
    c.ex->fail(in.error_value());
    return std::nullopt;
  }
  auto cookie = session_cookie::mode(c);
  if (!cookie)
    return std::nullopt;
  return session_request<T>{std::move(*in), *cookie};
}

// Answers a new session in the form the request asked for.
void reply_session(const call& c, const core::expected<uc::session>& r,
                   int status, bool cookie) {
  if (cookie)
    return session_cookie::reply(c, r, status);
  reply(c, r, status, codec::session);
}

} // namespace

void handle_signup(call c) {
  auto in = read_session_request(c, codec::signup(c.req()));
  if (!in)
    return;
  admit_signup(c, [c, in = std::move(*in)] {
    with_storage(c, [c, in](uc::account_env& env) {
      reply_session(c, uc::signup(env, in.body), 201, in.cookie);
    });
  });
}

void handle_login(call c) {
  auto in = read_session_request(c, codec::login(c.req()));
  if (!in)
    return;
  auto email = in->body.first;
  admit_login(c, email,
              [c, in = std::move(*in)](const actors::window_scope& account) {
                with_storage(c, [c, in, account](uc::account_env& env) {
                  auto r = uc::login(env, in.body.first, in.body.second);
                  if (!r && r.error_value().code == core::errc::unauthorized)
                    login_failed(c, account);
                  reply_session(c, r, 200, in.cookie);
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
    if (auto refused = key_use_refusal(who, core::account::key_use::account))
      return c.ex->fail(*refused);
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

void handle_update_organization(call c) {
  answer_user_with(c, codec::organization_patch(c.req()), 200,
                   uc::set_batch_retention, codec::organization_view);
}

void handle_export_organization(call c) {
  c.ex->add_header("Cache-Control", "no-store");
  answer_user(c, 200, uc::export_organization, codec::organization_export);
}

void handle_delete_organization(call c) {
  with_principal(c, true,
                 [c, in = codec::erase_confirmation(c.req())](
                     uc::account_env& env, const uc::principal& who) {
                   if (!in)
                     return c.ex->fail(in.error_value());
                   auto stopped = uc::erase_organization(env, who, *in);
                   if (!stopped)
                     return c.ex->fail(stopped.error_value());
                   // Jobs this process runs stop at once (no-op otherwise).
                   if (c.svc->batches)
                     for (const auto& id : *stopped)
                       c.svc->batches->cancelled(id);
                   reply_empty(c, core::unit{});
                 });
}

void handle_list_members(call c) {
  answer_user(c, 200, uc::list_members, codec::members);
}

void handle_add_member(call c) {
  answer_user_with(c, codec::new_member(c.req()), 201, uc::add_member,
                   codec::member);
}

void handle_update_member(call c) {
  answer_user_with(c, codec::role_change(c.req()), 200, uc::change_member_role,
                   codec::member, c.req().params.at("userId"));
}

void handle_remove_member(call c) {
  answer_user_empty(c, uc::remove_member, c.req().params.at("userId"));
}

} // namespace mailassay::http
