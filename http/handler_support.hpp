#pragma once

#include "http/codec/json_text.hpp"
#include "http/credentials.hpp"
#include "http/router.hpp"
#include "http/services.hpp"
#include "use_cases/accounts/use_cases.hpp"

#include <string>
#include <utility>

namespace mailassay::http {

/// Runs `f(account_env&)` on a storage worker; answers 503 when the database
/// cannot be opened or too many storage jobs wait already
/// (`actors.storage_queue_limit`), and skips requests already answered.
template <class F>
void with_storage(call c, F f) {
  // A full queue sheds the request at once (issue #29).
  if (full(c.svc->storage.gauges().queued.load(std::memory_order_relaxed),
           c.svc->cfg.actors.storage_queue_limit)) {
    c.svc->shed.add(queue::storage);
    return c.ex->fail(overloaded(queue::storage));
  }
  c.svc->storage.submit({[c, f = std::move(f)](actors::job_context& ctx) {
    if (c.ex->answered())
      return;
    if (!ctx.db)
      return c.ex->fail(ctx.open_error);
    auto env = ctx.env(c.svc->now());
    env.client_ip = c.req().client_ip;
    f(env);
  }});
}

/// Who a route admits.
enum class callers {
  users,      ///< Users only (JWT or cookie session).
  account,    ///< Users and API keys with account rights (not publishable).
  validation, ///< Any credential; the handler checks the key's use.
};

/// Authenticates on a storage worker the credentials `admitted` lets in,
/// then runs `f(account_env&, const principal&)`.
template <class F>
void with_caller(call c, callers admitted, F f) {
  auto creds = credentials_of(c.req());
  with_storage(c, [c, creds = std::move(creds), admitted,
                   f = std::move(f)](use_cases::accounts::account_env& env) {
    auto who = admitted == callers::users
                   ? use_cases::accounts::authenticate_user(env, creds)
                   : use_cases::accounts::authenticate(env, creds);
    if (!who)
      return c.ex->fail(who.error_value());
    if (admitted == callers::account)
      if (auto refused = key_use_refusal(*who, core::account::key_use::account))
        return c.ex->fail(*refused);
    f(env, *who);
  });
}

/// Authenticates (users only, or users and keys with account rights) on a
/// storage worker, then runs `f(account_env&, const principal&)`.
template <class F>
void with_principal(call c, bool users_only, F f) {
  with_caller(c, users_only ? callers::users : callers::account, std::move(f));
}

/// Answers `status` with `encode(value)`, or the error.
template <class T, class Encode>
void reply(const call& c, const core::expected<T>& r, int status,
           Encode encode) {
  if (!r)
    return c.ex->fail(r.error_value());
  c.ex->json(status, codec::text_of(encode(*r)));
}

/// Answers 204, or the error.
inline void reply_empty(const call& c, const core::expected<core::unit>& r) {
  if (!r)
    return c.ex->fail(r.error_value());
  c.ex->respond(response{204, {}, "application/json", {}});
}

/// For a user (not an API key): answers `status` with
/// `encode(run(env, principal, args...))`, or the error. `args` (a path id,
/// a value of the route) are copied into the storage job.
template <class Run, class Encode, class... Args>
void answer_user(call c, int status, Run run, Encode encode, Args... args) {
  with_principal(c, true,
                 [c, status, run, encode,
                  args...](use_cases::accounts::account_env& env,
                           const use_cases::accounts::principal& p) {
                   reply(c, run(env, p, args...), status, encode);
                 });
}

/// As `answer_user`, with `input` (a body or query value decoded before the
/// storage job) passed to `run` last. Input that did not decode is answered
/// only after the credentials pass: a stranger learns nothing from a 422.
template <class T, class Run, class Encode, class... Args>
void answer_user_with(call c, core::expected<T> input, int status, Run run,
                      Encode encode, Args... args) {
  with_principal(c, true,
                 [c, input = std::move(input), status, run, encode,
                  args...](use_cases::accounts::account_env& env,
                           const use_cases::accounts::principal& p) {
                   if (!input)
                     return c.ex->fail(input.error_value());
                   reply(c, run(env, p, args..., *input), status, encode);
                 });
}

/// For a user: answers 204 when `run(env, principal, args...)` succeeds
/// (a deletion), or the error.
template <class Run, class... Args>
void answer_user_empty(call c, Run run, Args... args) {
  with_principal(c, true,
                 [c, run, args...](use_cases::accounts::account_env& env,
                                   const use_cases::accounts::principal& p) {
                   reply_empty(c, run(env, p, args...));
                 });
}

// Handlers, one per endpoint, grouped by file.
void handle_health(call c);
void handle_status(call c);
void handle_metrics(call c);
void handle_openapi(call c);
void handle_docs(call c);
void handle_signup(call c);
void handle_login(call c);
void handle_refresh(call c);
void handle_logout(call c);
void handle_me(call c);
void handle_get_organization(call c);
void handle_update_organization(call c);
void handle_export_organization(call c);
void handle_delete_organization(call c);
void handle_list_members(call c);
void handle_audit_log(call c);
void handle_add_member(call c);
void handle_update_member(call c);
void handle_remove_member(call c);
void handle_create_key(call c);
void handle_list_keys(call c);
void handle_rate_limits(call c);
void handle_key_stats(call c);
void handle_get_key(call c);
void handle_update_key(call c);
void handle_delete_key(call c);
void handle_revoke_key(call c);
void handle_reactivate_key(call c);
void handle_balance(call c);
void handle_transactions(call c);
void handle_validate(call c);
void handle_widget_validate(call c);
void handle_widget_script(call c);
void handle_batch_upload(call c);
void handle_list_batches(call c);
void handle_get_batch(call c);
void handle_cancel_batch(call c);
void handle_delete_batch(call c);
void handle_batch_results(call c);
void handle_app_index(call c);
void handle_app_file(call c);
void handle_auth_options(call c);
void handle_organization_usage(call c);
void handle_create_webhook(call c);
void handle_list_webhooks(call c);
void handle_get_webhook(call c);
void handle_update_webhook(call c);
void handle_delete_webhook(call c);
void handle_rotate_webhook_secret(call c);
void handle_test_webhook(call c);
void handle_webhook_deliveries(call c);

} // namespace mailassay::http
