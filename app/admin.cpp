#include "app/app.hpp"
#include "core/base/ascii.hpp"
#include "core/base/time_format.hpp"
#include "security/password.hpp"
#include "security/random.hpp"
#include "storage/store.hpp"
#include "use_cases/accounts/use_cases.hpp"

#include <nlohmann/json.hpp>

#include <iomanip>
#include <iostream>

namespace mailassay::app {

namespace {

std::unique_ptr<storage::store> open_or_exit(const config::settings& cfg) {
  auto db = storage::open_store(cfg.database.url);
  if (!db) {
    std::cerr << "mailassay: cannot open the database: "
              << db.error_value().message << "\n";
    std::exit(1);
  }
  return std::move(*db);
}

} // namespace

int admin_create_org(const config::settings& cfg, const std::string& name,
                     const std::string& email, const std::string& password,
                     std::optional<std::int64_t> credits) {
  if (password.size() < 8) {
    std::cerr << "mailassay: the password must have at least 8 characters\n";
    return 2;
  }
  security::init_crypto();
  auto db = open_or_exit(cfg);
  auto now = unix_now();
  core::account::organization org{security::new_id("org"), name, now};
  core::account::user owner;
  owner.id = security::new_id("usr");
  owner.email = core::ascii_lower(email);
  owner.password_hash = security::hash_password(password);
  owner.created_at = now;
  auto ok = db->create_organization(
      org, owner, credits.value_or(cfg.credits.signup_grant), now);
  if (!ok) {
    std::cerr << "mailassay: " << ok.error_value().message << "\n";
    return 1;
  }
  std::cout << nlohmann::json{{"organizationId", org.id},
                              {"name", org.name},
                              {"ownerId", owner.id},
                              {"ownerEmail", owner.email}}
                   .dump()
            << "\n";
  return 0;
}

int admin_grant_credits(const config::settings& cfg, const std::string& org,
                        std::int64_t amount, const std::string& reason) {
  if (amount <= 0) {
    std::cerr << "mailassay: the amount must be a positive integer\n";
    return 2;
  }
  auto db = open_or_exit(cfg);
  auto now = unix_now();
  auto b = db->add_credits(org, amount, "grant", reason, now);
  if (!b) {
    std::cerr << "mailassay: " << b.error_value().message << "\n";
    return 1;
  }
  // The operator at the server granted them (docs/privacy.md, "Audit log").
  core::account::audit_entry e;
  e.organization_id = org;
  e.at = now;
  e.action = "credits.granted";
  e.actor_type = core::account::audit_actor::operator_cli;
  e.actor_id = "cli";
  e.target = org;
  e.details = nlohmann::json{{"amount", amount}, {"reason", reason}}.dump();
  if (auto ok = db->record_audit(e); !ok)
    std::cerr << "mailassay: the credits were granted, but the audit log "
                 "did not record it: "
              << ok.error_value().message << "\n";
  std::cout << nlohmann::json{{"organizationId", b->organization_id},
                              {"balance", b->balance},
                              {"consumed", b->consumed}}
                   .dump()
            << "\n";
  return 0;
}

int admin_list_orgs(const config::settings& cfg, bool json) {
  auto db = open_or_exit(cfg);
  auto orgs = db->list_organizations();
  if (!orgs) {
    std::cerr << "mailassay: " << orgs.error_value().message << "\n";
    return 1;
  }
  if (json) {
    for (auto& o : *orgs)
      std::cout << nlohmann::json{{"id", o.org.id},
                                  {"name", o.org.name},
                                  {"members", o.members},
                                  {"balance", o.balance},
                                  {"createdAt",
                                   core::iso8601(o.org.created_at)}}
                       .dump()
                << "\n";
    return 0;
  }
  std::cout << std::left << std::setw(26) << "ID" << std::setw(30) << "NAME"
            << std::setw(9) << "MEMBERS" << std::setw(12) << "BALANCE"
            << "CREATED\n";
  for (auto& o : *orgs)
    std::cout << std::setw(26) << o.org.id << std::setw(30) << o.org.name
              << std::setw(9) << o.members << std::setw(12) << o.balance
              << core::iso8601(o.org.created_at) << "\n";
  return 0;
}

int admin_rotate_jwt_key(const config::settings& cfg, bool drop_old) {
  if (!cfg.auth.jwt_secret.empty()) {
    std::cerr << "mailassay: auth.jwt_secret is configured: it signs every "
                 "token and the database's keys are not used; change the "
                 "setting instead\n";
    return 2;
  }
  security::init_crypto();
  auto db = open_or_exit(cfg);
  // Retired keys verify what they signed until it expires, plus the grace
  // a process that has not heard of the rotation yet may add.
  auto keep = cfg.auth.access_ttl_seconds + security::retired_grace_seconds;
  // The new key is sealed with the server key every process opens it with.
  auto kid = use_cases::accounts::rotate_signing_key(
      *db, webhook_key_or_exit(cfg), keep, drop_old);
  if (!kid) {
    std::cerr << "mailassay: " << kid.error_value().message << "\n";
    return 1;
  }
  std::cout << nlohmann::json{{"kid", *kid}, {"droppedOld", drop_old}}.dump()
            << "\n";
  return 0;
}

} // namespace mailassay::app
