// POST /v2/email/validate and the widget's: admitted (http/admission.hpp),
// decoded, handed to the validation pool, written when it answers.
#include "http/admission.hpp"
#include "http/codec/validation.hpp"
#include "http/embedded_text.hpp"
#include "http/handler_support.hpp"
#include "use_cases/accounts/batches.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;

namespace {

// Checks what the principal may ask for, then hands the request to a
// validation actor; the result is written from wherever it completes.
void run_validation(const call& c, const uc::principal& who,
                    core::expected<codec::validation_input> in, bool widget) {
  allow_admitted_origin(c, who);
  if (!in) {
    count_usage(c, who, {});
    return c.ex->fail(in.error_value());
  }
  actors::validation::request req;
  req.email = std::move(in->email);
  req.received = c.ex->arrived();
  req.timeout_ms = in->timeout_ms;
  using core::account::key_use;
  auto use = widget     ? key_use::widget_validation
             : in->smtp ? key_use::smtp_validation
                        : key_use::validation;
  if (auto refused = key_use_refusal(who, use)) {
    count_usage(c, who, std::move(req.email));
    return c.ex->fail(*refused);
  }
  if (auto refused = uc::smtp_refusal(who, in->smtp)) {
    count_usage(c, who, std::move(req.email));
    return c.ex->fail(*refused);
  }
  if (who.key) {
    const auto& cfg = who.key->config;
    req.toggles = {cfg.disposable, cfg.role_account, cfg.random_detection,
                   cfg.enrichment};
  }
  // A test key's sandbox: no DNS, no SMTP, no credit; the local part picks
  // the answer (core/validation/sandbox.hpp).
  req.sandbox = who.sandbox();
  // The probe costs one credit, reserved before it and given back when no
  // SMTP server answered (docs/smtp.md); 402 when the balance is short.
  req.smtp = in->smtp;
  if (req.smtp)
    req.organization_id = who.organization_id();
  auto answer = [](const call& c, const actors::validation::result& r) {
    if (r.refused)
      return c.ex->fail(*r.refused);
    c.ex->json(200, codec::validation_result_text(r));
  };
  // Most answers need no waiting: no callback to build for them, and the
  // address moves on into the usage record.
  if (actors::validation::result now;
      c.svc->validation.validate_now(req, now)) {
    count_usage(c, who, std::move(req.email));
    return answer(c, now);
  }
  count_usage(c, who, req.email);
  if (full(c.svc->validation.gauges().queued.load(std::memory_order_relaxed),
           c.svc->cfg.actors.validation_queue_limit)) {
    c.svc->shed.add(queue::validation);
    return c.ex->fail(overloaded(queue::validation));
  }
  // Nobody waits after the deadline: the probe ends before it, no credit is
  // taken or kept once the request was answered (issue #29).
  req.answered = c.ex->cancel_flag();
  req.deadline = c.ex->deadline();
  auto answered = req.answered;
  c.svc->validation.submit(
      {std::move(req), [c, answer, answered](actors::validation::result&& r) {
         // Answered already (its deadline, the server stopping): not
         // delivered, and its loop may run nothing more; settled here.
         if (answered->load(std::memory_order_acquire)) {
           if (r.settle_credit)
             r.settle_credit(false);
           return;
         }
         // On the request's home thread, where answering and the credit's
         // fate are decided together: delivered keeps it, else it goes back.
         c.ex->resume([c, answer, r = std::move(r)]() mutable {
           bool delivered = !c.ex->answered();
           if (r.settle_credit)
             r.settle_credit(delivered);
           if (delivered)
             answer(c, r);
         });
       }});
}

} // namespace

void handle_widget_validate(call c) {
  const auto& limits = c.svc->cfg.limits;
  admission a;
  a.c = std::move(c);
  a.refused = widget_refusal;
  a.run = [](const call& c, const uc::principal& who) {
    if (auto refused = widget_key_refusal(who))
      return c.ex->fail(*refused);
    run_validation(c, who, codec::widget_validation(c.req()), true);
  };
  const auto& req = a.c.req();
  if (auto device = device_id_of(req))
    a.check.device = actors::widget_scope{std::move(*device),
                                          limits.widget_device_per_minute,
                                          core::limits::minute};
  a.check.widget_ip = actors::widget_scope{
      req.client_ip, limits.widget_ip_per_minute, core::limits::minute};
  a.check.now = steady_millis();
  admit(a);
}

void handle_widget_script(call c) {
  c.ex->respond(response{200,
                         std::string{widget_script()},
                         "application/javascript; charset=utf-8",
                         {{"Cache-Control", "public, max-age=300"}}});
}

void handle_validate(call c) {
  // Built in place and passed down the chain by reference: nothing of it
  // is copied on the way (admission.hpp).
  admission a;
  a.c = std::move(c);
  a.refused = ip_refusal;
  a.run = [](const call& c, const uc::principal& who) {
    run_validation(c, who, codec::validation(c.req()), false);
  };
  a.check.ip = actors::ip_scope{a.c.req().client_ip, std::nullopt};
  a.check.now = steady_millis();
  admit(a);
}

} // namespace mailassay::http
