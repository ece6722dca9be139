#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = actors::accounts;

namespace {

// Checks what the principal may ask for, then hands the request to a
// validation actor; the result is written from wherever it completes.
void run_validation(call c, const uc::principal& who,
                    const core::expected<codec::validation_input>& in) {
  if (!in)
    return c.ex->fail(in.error_value());
  actors::validation::request req;
  req.email = in->email;
  req.timeout_ms = in->timeout_ms;
  if (who.key) {
    const auto& cfg = who.key->config;
    if (in->smtp && !cfg.smtp)
      return c.ex->fail(core::make_error(
        core::errc::forbidden,
        "SMTP verification is not enabled for this API key (config.smtp)"));
    req.toggles = {cfg.disposable, cfg.role_account, cfg.random_detection,
                   cfg.enrichment};
  }
  // Until SMTP probing lands the request is accepted and reported with
  // smtp.checked false, and no credit is charged.
  req.smtp = false;
  c.svc->validation.submit({std::move(req), [c](actors::validation::result r) {
                              c.ex->json(200,
                                         codec::validation_result(r).dump());
                            }});
}

} // namespace

void handle_validate(call c) {
  auto in = codec::validation(c.req());
  auto creds = credentials_of(c.req());
  // Hot path: an API key already in the cache needs no storage at all.
  if (auto cached = uc::authenticate_cached(c.svc->keys, creds, c.svc->now())) {
    if (!*cached)
      return c.ex->fail(cached->error_value());
    return run_validation(c, **cached, in);
  }
  with_principal(c, false,
                 [c, in = std::move(in)](uc::account_env&,
                                         const uc::principal& who) {
                   run_validation(c, who, in);
                 });
}

} // namespace mailassay::http
