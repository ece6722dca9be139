#include "core/account/permissions.hpp"
#include "security/api_key_secret.hpp"
#include "security/random.hpp"
#include "storage/notify.hpp"
#include "use_cases/accounts/audit.hpp"
#include "use_cases/accounts/change_echo.hpp"
#include "use_cases/accounts/key_cache.hpp"
#include "use_cases/accounts/key_changes.hpp"
#include "use_cases/accounts/use_cases.hpp"

namespace mailassay::use_cases::accounts {

namespace {

using core::errc;
using core::make_error;

// Applies `u` to the organization's key `key_id` and settles the change
// (every process forgets the old key before the answer).
expected<acc::api_key> change_key(account_env& env, const principal& who,
                                  const std::string& key_id,
                                  const storage::api_key_update& u) {
  auto mark = echo_mark(env);
  auto updated =
      env.db.update_api_key(who.organization_id(), key_id, u, env.now);
  if (updated)
    settle_key_change(env, updated->key_hash, mark);
  return updated;
}

expected<unit> check_manager(const principal& who, const char* what) {
  if (!acc::may_manage_keys(who.role))
    return make_error(errc::forbidden,
                      std::string{"Only owners and admins can "} + what);
  return unit{};
}

} // namespace

std::uint64_t echo_mark(const account_env& env) {
  return env.echo ? env.echo->mark() : 0;
}

// How long a key change waits for the other processes' acknowledgements:
// long enough for a process starved of CPU (a busy machine answers in well
// under 1 s, but not always), short enough that a hung one does not hold
// key changes for long.
constexpr std::chrono::milliseconds key_change_ack_limit{3000};

void settle_key_change(account_env& env, const std::string& key_hash,
                       std::uint64_t mark) {
  env.keys.erase(key_hash);
  if (!env.echo)
    return;
  // Unknown (the query failed): the own echo only, as before.
  auto listening = env.db.listening_processes();
  std::int64_t processes = listening ? *listening : 0;
  env.echo->await(
      storage::encode_change({storage::change_kind::api_key, key_hash}), mark,
      processes, key_change_ack_limit);
}

expected<created_key> create_key(account_env& env, const principal& who,
                                 const new_key_input& in) {
  if (auto ok = check_manager(who, "create API keys"); !ok)
    return std::move(ok).error_value();
  auto secret = security::generate_api_key(in.test);
  acc::api_key key;
  key.id = security::new_id("key");
  key.organization_id = who.organization_id();
  key.name = in.name;
  key.key_hash = secret.hash;
  key.prefix = secret.prefix;
  key.allowed_domains = in.allowed_domains;
  key.config = in.config;
  key.limits = in.limits ? *in.limits : default_key_limits(env.cfg);
  key.status = acc::key_status::active;
  key.created_at = env.now;
  key.updated_at = env.now;
  if (auto ok = env.db.insert_api_key(key); !ok)
    return std::move(ok).error_value();
  record_audit(env, who, "api_key.created", key.id,
               {{"name", key.name},
                {"mode", in.test ? "test" : "live"},
                {"prefix", key.prefix}});
  return created_key{std::move(key), std::move(secret.key)};
}

acc::rate_limits default_key_limits(const config::settings& cfg) {
  auto limit = [](std::int64_t n) {
    return n > 0 ? std::optional<std::int64_t>{n} : std::nullopt;
  };
  return {limit(cfg.limits.key_per_minute), limit(cfg.limits.key_per_hour),
          limit(cfg.limits.key_per_day)};
}

// Reads are one storage call scoped to the caller's organization, written
// out per resource by design (use_cases/webhooks has the same two for
// endpoints): a shared template would hide which storage call runs.
expected<std::vector<acc::api_key>> list_keys(account_env& env,
                                              const principal& who) {
  return env.db.list_api_keys(who.organization_id());
}

expected<acc::api_key> get_key(account_env& env, const principal& who,
                               const std::string& key_id) {
  return env.db.get_api_key(who.organization_id(), key_id);
}

expected<acc::api_key> update_key(account_env& env, const principal& who,
                                  const std::string& key_id,
                                  const key_patch& patch) {
  if (auto ok = check_manager(who, "change API keys"); !ok)
    return std::move(ok).error_value();
  auto u = patch.fields;
  if (patch.config) {
    auto current = env.db.get_api_key(who.organization_id(), key_id);
    if (!current)
      return current;
    auto c = current->config;
    auto& p = *patch.config;
    c.smtp = p.smtp.value_or(c.smtp);
    c.disposable = p.disposable.value_or(c.disposable);
    c.role_account = p.role_account.value_or(c.role_account);
    c.enrichment = p.enrichment.value_or(c.enrichment);
    c.random_detection = p.random_detection.value_or(c.random_detection);
    u.config = c;
  }
  auto changed = change_key(env, who, key_id, u);
  if (changed) {
    auto fields = nlohmann::json::array();
    if (u.name)
      fields.push_back("name");
    if (u.allowed_domains)
      fields.push_back("allowedDomains");
    if (u.config)
      fields.push_back("config");
    if (u.limits)
      fields.push_back("rateLimits");
    record_audit(env, who, "api_key.updated", key_id, {{"fields", fields}});
  }
  return changed;
}

expected<acc::api_key> set_key_status(account_env& env, const principal& who,
                                      const std::string& key_id,
                                      acc::key_status status) {
  if (auto ok = check_manager(who, status == acc::key_status::active
                                       ? "reactivate API keys"
                                       : "revoke API keys");
      !ok)
    return std::move(ok).error_value();
  storage::api_key_update u;
  u.status = status;
  auto changed = change_key(env, who, key_id, u);
  if (changed)
    record_audit(env, who,
                 status == acc::key_status::active ? "api_key.reactivated"
                                                   : "api_key.revoked",
                 key_id, {{"name", changed->name}});
  return changed;
}

expected<unit> delete_key(account_env& env, const principal& who,
                          const std::string& key_id) {
  if (auto ok = check_manager(who, "delete API keys"); !ok)
    return ok;
  auto key = env.db.get_api_key(who.organization_id(), key_id);
  if (!key)
    return std::move(key).error_value();
  auto mark = echo_mark(env);
  auto ok = env.db.delete_api_key(who.organization_id(), key_id);
  if (ok) {
    settle_key_change(env, key->key_hash, mark);
    record_audit(env, who, "api_key.deleted", key_id, {{"name", key->name}});
  }
  return ok;
}

expected<acc::credit_balance> balance(account_env& env, const principal& who) {
  return env.db.get_balance(who.organization_id());
}

expected<std::vector<acc::credit_entry>> transactions(account_env& env,
                                                      const principal& who,
                                                      std::int64_t limit,
                                                      std::int64_t before_id) {
  return env.db.list_credit_entries(who.organization_id(), limit, before_id);
}

} // namespace mailassay::use_cases::accounts
