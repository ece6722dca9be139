#include "use_cases/webhooks/use_cases.hpp"

#include "core/webhooks/target_url.hpp"
#include "core/webhooks/url_redaction.hpp"
#include "security/random.hpp"
#include "security/secret_box.hpp"
#include "security/webhook_signing.hpp"
#include "use_cases/accounts/audit.hpp"

namespace mailassay::use_cases::webhooks {

namespace {

using core::errc;
using core::make_error;

expected<unit> check_manager(const principal& who) {
  if (!wh::may_manage(who.role))
    return make_error(errc::forbidden,
                      "Only owners and admins can manage webhooks");
  return unit{};
}

core::error unprocessable(std::string message) {
  auto e = make_error(errc::validation_failed, "");
  e.details = {std::move(message)};
  return e;
}

// The URL as it will be stored, or the 422 naming what is wrong with it.
expected<std::string> checked_url(const config::webhooks_settings& cfg,
                                  const std::string& url) {
  auto parsed = wh::parse_target_url(url);
  if (!parsed)
    return std::move(parsed).error_value();
  auto policy = core::smtp::target_policy::parse(cfg.allow_private_targets);
  if (!policy) // validated at start-up; kept safe anyway
    return make_error(errc::internal, policy.error_value().message);
  if (auto why = wh::refusal(*parsed, cfg.allow_http, *policy))
    return unprocessable(*why);
  if (auto why = wh::port_refusal(*parsed, cfg.allow_http, cfg.allowed_ports,
                                  cfg.allow_any_port))
    return unprocessable(*why);
  return url;
}

// A member reads the URL with its query values hidden: they often hold
// the receiver's token (docs/webhooks.md, "Roles").
wh::endpoint as_seen_by(const principal& who, wh::endpoint w) {
  if (!wh::may_manage(who.role))
    w.url = wh::redacted_url(w.url);
  return w;
}

} // namespace

expected<std::string> seal_secret(const config::webhooks_settings& cfg,
                                  const std::string& id,
                                  const std::string& secret) {
  auto key = security::secret_box_key_from_hex(cfg.secret_key);
  if (!key)
    return make_error(errc::internal, "webhooks.secret_key is not set");
  return security::seal(*key, secret, id);
}

expected<endpoint_with_secret> create_endpoint(account_env& env,
                                               const principal& who,
                                               const new_endpoint_input& in) {
  if (auto ok = check_manager(who); !ok)
    return std::move(ok).error_value();
  const auto& cfg = env.cfg.webhooks;
  auto url = checked_url(cfg, in.url);
  if (!url)
    return std::move(url).error_value();
  auto existing = env.db.list_webhooks(who.organization_id());
  if (!existing)
    return std::move(existing).error_value();
  if (static_cast<std::int64_t>(existing->size()) >= cfg.max_endpoints)
    return unprocessable("an organization may have at most " +
                         std::to_string(cfg.max_endpoints) + " webhooks");
  endpoint_with_secret out;
  auto& w = out.endpoint;
  w.id = security::new_id("whk");
  w.organization_id = who.organization_id();
  w.url = *url;
  w.description = in.description;
  w.events = in.events;
  w.status = wh::endpoint_status::active;
  w.credits_low_threshold =
      in.credits_low_threshold.value_or(cfg.credits_low_threshold);
  w.created_at = env.now;
  w.updated_at = env.now;
  out.secret = security::new_webhook_secret();
  auto sealed = seal_secret(cfg, w.id, out.secret);
  if (!sealed)
    return std::move(sealed).error_value();
  w.sealed_secret = std::move(*sealed);
  if (auto ok = env.db.insert_webhook(w); !ok)
    return std::move(ok).error_value();
  // The URL's query values may be tokens: the log keeps them hidden.
  accounts::record_audit(env, who, "webhook.created", w.id,
                         {{"url", wh::redacted_url(w.url)}});
  return out;
}

// Reads are one storage call scoped to the caller's organization, written
// out per resource by design (as the keys' in use_cases/accounts/keys.cpp).
expected<std::vector<wh::endpoint>> list_endpoints(account_env& env,
                                                   const principal& who) {
  auto list = env.db.list_webhooks(who.organization_id());
  if (list)
    for (auto& w : *list)
      w = as_seen_by(who, std::move(w));
  return list;
}

expected<wh::endpoint> get_endpoint(account_env& env, const principal& who,
                                    const std::string& id) {
  auto w = env.db.get_webhook(who.organization_id(), id);
  if (!w)
    return w;
  return as_seen_by(who, std::move(*w));
}

expected<wh::endpoint> update_endpoint(account_env& env, const principal& who,
                                       const std::string& id,
                                       const endpoint_patch& patch) {
  if (auto ok = check_manager(who); !ok)
    return std::move(ok).error_value();
  storage::webhook_update u;
  if (patch.url) {
    auto url = checked_url(env.cfg.webhooks, *patch.url);
    if (!url)
      return std::move(url).error_value();
    u.url = *url;
  }
  u.events = patch.events;
  u.description = patch.description;
  u.status = patch.status;
  u.credits_low_threshold = patch.credits_low_threshold;
  auto updated = env.db.update_webhook(who.organization_id(), id, u, env.now);
  if (updated) {
    auto fields = nlohmann::json::array();
    if (u.url)
      fields.push_back("url");
    if (u.events)
      fields.push_back("events");
    if (u.description)
      fields.push_back("description");
    if (u.status)
      fields.push_back("status");
    if (u.credits_low_threshold)
      fields.push_back("creditsLowThreshold");
    accounts::record_audit(env, who, "webhook.updated", id,
                           {{"fields", fields}});
  }
  return updated;
}

expected<unit> delete_endpoint(account_env& env, const principal& who,
                               const std::string& id) {
  if (auto ok = check_manager(who); !ok)
    return ok;
  auto deleted = env.db.delete_webhook(who.organization_id(), id);
  if (deleted)
    accounts::record_audit(env, who, "webhook.deleted", id);
  return deleted;
}

expected<endpoint_with_secret>
rotate_secret(account_env& env, const principal& who, const std::string& id) {
  if (auto ok = check_manager(who); !ok)
    return std::move(ok).error_value();
  const auto& cfg = env.cfg.webhooks;
  endpoint_with_secret out;
  out.secret = security::new_webhook_secret();
  auto sealed = seal_secret(cfg, id, out.secret);
  if (!sealed)
    return std::move(sealed).error_value();
  storage::webhook_update u;
  u.sealed_secret = std::move(*sealed);
  u.previous_secret_expires_at =
      cfg.rotation_grace_seconds > 0 ? env.now + cfg.rotation_grace_seconds : 0;
  auto updated = env.db.update_webhook(who.organization_id(), id, u, env.now);
  if (!updated)
    return std::move(updated).error_value();
  out.endpoint = std::move(*updated);
  accounts::record_audit(env, who, "webhook.secret_rotated", id);
  return out;
}

expected<wh::delivery> send_test(account_env& env, const principal& who,
                                 const std::string& id, std::int64_t now_ms) {
  if (auto ok = check_manager(who); !ok)
    return std::move(ok).error_value();
  const auto& cfg = env.cfg.webhooks;
  wh::ping_limits limits{cfg.test_per_endpoint, cfg.test_per_organization,
                         cfg.test_window_seconds * 1000,
                         cfg.max_pending_per_organization};
  return env.db.enqueue_webhook_ping(who.organization_id(), id, now_ms, limits);
}

expected<std::vector<wh::delivery>> list_deliveries(account_env& env,
                                                    const principal& who,
                                                    const std::string& id,
                                                    std::int64_t limit) {
  return env.db.list_webhook_deliveries(who.organization_id(), id, limit);
}

expected<event_subject> subject_of(storage::store& db, const wh::delivery& d) {
  event_subject out;
  switch (d.event) {
    case wh::event_type::batch_completed:
    case wh::event_type::batch_failed:
    case wh::event_type::batch_cancelled: {
      auto j = db.get_batch_job(d.organization_id, d.subject_id);
      if (!j && j.error_value().code != errc::not_found)
        return std::move(j).error_value();
      if (j)
        out.job = std::move(*j);
      break;
    }
    case wh::event_type::key_revoked: {
      auto k = db.get_api_key(d.organization_id, d.subject_id);
      if (!k && k.error_value().code != errc::not_found)
        return std::move(k).error_value();
      if (k)
        out.key = std::move(*k);
      break;
    }
    case wh::event_type::credits_low:
    case wh::event_type::ping: break;
  }
  return out;
}

} // namespace mailassay::use_cases::webhooks
