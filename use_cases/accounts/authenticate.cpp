#include "core/account/credentials.hpp"
#include "security/digest.hpp"
#include "security/jwt.hpp"
#include "security/jwt_keyring.hpp"
#include "use_cases/accounts/key_cache.hpp"
#include "use_cases/accounts/use_cases.hpp"

#include <chrono>

namespace mailassay::use_cases::accounts {

namespace {

using core::errc;
using core::make_error;

// The rules a loaded key must pass: active, and used from an allowed
// origin when it is domain-restricted.
expected<principal> admit_key(std::shared_ptr<const acc::api_key> key,
                              const credentials& c) {
  if (key->status != acc::key_status::active)
    return core::unauthorized();
  if (!key->allowed_domains.empty()) {
    if (c.origin_host.empty())
      return core::unauthorized();
    bool allowed = false;
    for (auto& d : key->allowed_domains)
      allowed = allowed || acc::host_matches_domain(c.origin_host, d);
    if (!allowed)
      return make_error(errc::forbidden,
                        "This API key may not be used from this origin");
  }
  principal p;
  p.type = principal::kind::api_key;
  p.key = std::move(key);
  return p;
}

expected<principal> key_principal(account_env& env, const credentials& c) {
  auto hash = security::sha256_hex(c.bearer);
  auto key = env.keys.find(hash, env.now);
  if (!key) {
    auto since = env.keys.generation();
    auto row = env.db.find_api_key_by_hash(hash);
    if (!row) {
      if (row.error_value().code == errc::not_found)
        return core::unauthorized();
      return std::move(row).error_value();
    }
    env.keys.put(*row, env.now, since);
    key = std::make_shared<const acc::api_key>(std::move(*row));
  }
  return admit_key(std::move(key), c);
}

// Reads the deployment's signing keys again when a token names one this
// process does not hold: another process may have rotated them and the
// notification not arrived yet (or was lost while the listener was down).
void reload_keys_if_unknown(account_env& env, std::string_view token) {
  if (!env.jwt.names_unknown_key(token))
    return;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now().time_since_epoch())
                .count();
  if (!env.jwt.take_reload_turn(ms))
    return;
  auto rows = env.db.signing_keys();
  if (!rows)
    return;
  if (auto keys = signing_keys_of(*rows, env.cfg.webhooks.secret_key))
    env.jwt.replace(std::move(*keys));
}

expected<principal> user_principal(account_env& env, const credentials& c) {
  reload_keys_if_unknown(env, c.bearer);
  auto claims = env.jwt.verify(c.bearer, env.now);
  if (!claims)
    return core::unauthorized();
  // The role and membership come from storage, not the token: a removed or
  // demoted member loses rights at once.
  auto m = env.db.find_member(claims->user_id);
  if (!m) {
    if (m.error_value().code == errc::not_found)
      return core::unauthorized();
    return std::move(m).error_value();
  }
  if (m->organization_id != claims->organization_id)
    return core::unauthorized();
  principal p;
  p.type = principal::kind::user;
  p.user_organization_id = m->organization_id;
  p.user_id = m->person.id;
  p.role = m->member_role;
  return p;
}

} // namespace

expected<principal> authenticate(account_env& env, const credentials& c) {
  if (!c.has_authorization)
    return make_error(errc::no_authorization, "No authorization header");
  if (c.bearer.empty())
    return core::unauthorized();
  if (acc::classify_bearer(c.bearer) == acc::credential_kind::api_key)
    return key_principal(env, c);
  return user_principal(env, c);
}

std::optional<expected<principal>> authenticate_cached(const key_cache& keys,
                                                       const credentials& c,
                                                       std::int64_t now) {
  if (!c.has_authorization)
    return expected<principal>{
        make_error(errc::no_authorization, "No authorization header")};
  if (c.bearer.empty())
    return expected<principal>{core::unauthorized()};
  if (acc::classify_bearer(c.bearer) != acc::credential_kind::api_key)
    return std::nullopt;
  auto key = keys.find(security::sha256_hex_recent(c.bearer), now);
  if (!key)
    return std::nullopt;
  return admit_key(std::move(key), c);
}

expected<principal> authenticate_user(account_env& env, const credentials& c) {
  auto p = authenticate(env, c);
  if (p && p->type != principal::kind::user)
    return make_error(errc::forbidden,
                      "This endpoint requires a user access token (JWT), "
                      "not an API key");
  return p;
}

} // namespace mailassay::use_cases::accounts
