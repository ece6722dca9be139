#include "core/base/ascii.hpp"
#include "security/api_key_secret.hpp"
#include "security/digest.hpp"
#include "security/jwt.hpp"
#include "security/jwt_keyring.hpp"
#include "security/password.hpp"
#include "security/random.hpp"
#include "use_cases/accounts/audit.hpp"
#include "use_cases/accounts/use_cases.hpp"

#include <algorithm>
#include <cctype>

namespace mailassay::use_cases::accounts {

namespace {

using core::errc;
using core::make_error;

// Issues an access token and a refresh token of `family` for `m`.
expected<session> open_session(account_env& env, const acc::member& m,
                               std::string family) {
  auto org = env.db.get_organization(m.organization_id);
  if (!org)
    return std::move(org).error_value();
  auto refresh = security::generate_refresh_token();
  acc::refresh_token row;
  row.id = security::new_id("rt");
  row.token_hash = refresh.hash;
  row.family_id = std::move(family);
  row.user_id = m.person.id;
  row.organization_id = m.organization_id;
  row.expires_at = env.now + env.cfg.auth.refresh_ttl_seconds;
  row.created_at = env.now;
  if (auto ok = env.db.insert_refresh_token(row); !ok)
    return std::move(ok).error_value();
  security::access_claims claims;
  claims.user_id = m.person.id;
  claims.organization_id = m.organization_id;
  claims.role = std::string{acc::to_string(m.member_role)};
  claims.token_id = security::new_id("at");
  claims.issued_at = env.now;
  claims.expires_at = env.now + env.cfg.auth.access_ttl_seconds;
  session s;
  s.person = m.person;
  s.org = std::move(*org);
  s.role = m.member_role;
  s.access_token = env.jwt.sign(claims);
  s.refresh_token = std::move(refresh.token);
  s.expires_in = env.cfg.auth.access_ttl_seconds;
  return s;
}

} // namespace

expected<session> signup(account_env& env, const signup_input& in) {
  if (!env.cfg.auth.signup_enabled)
    return make_error(errc::forbidden, "Sign-up is disabled on this server");
  acc::organization org{security::new_id("org"), in.organization_name, env.now};
  acc::user owner;
  owner.id = security::new_id("usr");
  owner.email = core::ascii_lower(in.email);
  owner.name = in.name;
  owner.password_hash = security::hash_password(in.password);
  owner.created_at = env.now;
  if (owner.password_hash.empty())
    return make_error(errc::internal, "password hashing failed");
  auto created = env.db.create_organization(
      org, owner, env.cfg.credits.signup_grant, env.now);
  if (!created) {
    if (created.error_value().code == errc::conflict)
      return make_error(errc::conflict,
                        "An account with this email already exists");
    return std::move(created).error_value();
  }
  acc::member m{owner, org.id, acc::role::owner};
  return open_session(env, m, security::new_id("fam"));
}

expected<session> login(account_env& env, const std::string& email,
                        const std::string& password) {
  auto m = env.db.find_member_by_email(core::ascii_lower(email));
  if (!m) {
    if (m.error_value().code != errc::not_found)
      return std::move(m).error_value();
    security::verify_dummy_password(password);
    return core::unauthorized();
  }
  if (!security::verify_password(password, m->person.password_hash)) {
    record_login_failure(env, *m);
    return core::unauthorized();
  }
  return open_session(env, *m, security::new_id("fam"));
}

expected<session> refresh(account_env& env, const std::string& token) {
  auto row = env.db.find_refresh_token(security::sha256_hex(token));
  if (!row) {
    if (row.error_value().code == errc::not_found)
      return core::unauthorized();
    return std::move(row).error_value();
  }
  if (row->revoked || row->expires_at <= env.now)
    return core::unauthorized();
  auto spent =
      row->spent ? expected<bool>{false} : env.db.spend_refresh_token(row->id);
  if (!spent)
    return std::move(spent).error_value();
  if (!*spent) {
    // A token presented twice was stolen or replayed: end the whole login.
    if (auto ok = env.db.revoke_token_family(row->family_id); !ok)
      return std::move(ok).error_value();
    return core::unauthorized();
  }
  auto m = env.db.find_member(row->user_id);
  if (!m) {
    if (m.error_value().code == errc::not_found)
      return core::unauthorized();
    return std::move(m).error_value();
  }
  return open_session(env, *m, row->family_id);
}

expected<unit> logout(account_env& env, const std::string& token) {
  auto row = env.db.find_refresh_token(security::sha256_hex(token));
  if (!row) {
    // Logging out twice is not an error.
    if (row.error_value().code == errc::not_found)
      return unit{};
    return std::move(row).error_value();
  }
  return env.db.revoke_token_family(row->family_id);
}

} // namespace mailassay::use_cases::accounts
