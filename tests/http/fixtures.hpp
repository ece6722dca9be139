#pragma once

#include "tests/support/http_client.hpp"
#include "tests/support/pg_schema.hpp"
#include "tests/support/server_process.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <utility>

namespace mailassay::testing {

using nlohmann::json;

/// On PostgreSQL, a schema of the test's own for its servers (set in `env`
/// unless it names a database; `tag` starts its name): what a test leaves
/// behind (a queued job, a pending delivery to a receiver that is gone) is
/// never taken up by the servers of later tests or runs. Null on SQLite.
inline std::unique_ptr<pg_schema>
own_schema(std::map<std::string, std::string>& env, const std::string& tag) {
  auto* url = std::getenv("MAILASSAY_TEST_HTTP_DB_URL");
  if (url == nullptr || env.count("MAILASSAY_DATABASE_URL"))
    return nullptr;
  auto schema = std::make_unique<pg_schema>(url, tag);
  env["MAILASSAY_DATABASE_URL"] = schema->url();
  return schema;
}

/// A database that survives a restart of the test's server: a file in `dir`
/// on SQLite; on PostgreSQL the test's own schema (own_schema) already does.
inline std::map<std::string, std::string> durable_db(const std::string& dir) {
  if (std::getenv("MAILASSAY_TEST_HTTP_DB_URL"))
    return {};
  return {{"MAILASSAY_DATABASE_URL", "sqlite://" + dir + "/server.db"}};
}

/// A unique email for a test.
inline std::string unique_email(const std::string& tag) {
  static int n = 0;
  return tag + std::to_string(::getpid()) + "-" + std::to_string(++n) +
         "@example.org";
}

/// Whether the tests run against SQLite (the default), not PostgreSQL.
inline bool on_sqlite() {
  return std::getenv("MAILASSAY_TEST_HTTP_DB_URL") == nullptr;
}

/// Whether the SQLite database of `srv` (main file or its WAL) holds
/// `needle` anywhere in its bytes; false on PostgreSQL (no file of ours).
inline bool database_holds(const server_process& srv,
                           const std::string& needle) {
  for (auto suffix : {"", "-wal"}) {
    std::ifstream in{srv.dir() + "/test.db" + suffix, std::ios::binary};
    std::stringstream bytes;
    bytes << in.rdbuf();
    if (bytes.str().find(needle) != std::string::npos)
      return true;
  }
  return false;
}

/// Shortcuts for one running server.
struct api {
  server_process& srv;

  http_response
  call(const std::string& method, const std::string& path,
       const std::string& token = "", const std::string& body = "",
       std::vector<std::pair<std::string, std::string>> extra = {}) {
    if (!token.empty())
      extra.emplace_back("Authorization", "Bearer " + token);
    if (!body.empty())
      extra.emplace_back("Content-Type", "application/json");
    return http_request(srv.port(), method, path, extra, body);
  }

  http_response post(const std::string& path, const json& body,
                     const std::string& token = "") {
    return call("POST", path, token, body.dump());
  }

  /// Signs up a new organization; returns the 201 body.
  json signup(const std::string& org, const std::string& email) {
    auto r = post("/v2/auth/signup", {{"organizationName", org},
                                      {"email", email},
                                      {"password", "correct horse battery"}});
    if (r.status != 201)
      throw std::runtime_error("signup failed: " + r.body);
    return json::parse(r.body);
  }

  /// The value of one sample of GET /metrics (`name` with its labels, as
  /// written there, e.g. `mailassay_pool_done{pool="storage"}`); throws when
  /// the sample is missing.
  double metric(const std::string& name) {
    auto text = call("GET", "/metrics").body;
    auto at = text.find("\n" + name + " ");
    if (at == std::string::npos)
      throw std::runtime_error("no metric " + name + " in:\n" + text);
    return std::stod(text.substr(at + name.size() + 2));
  }

  /// Waits until no storage job runs or waits, and returns how many the
  /// pool has finished. A job's answer reaches the client before the pool
  /// counts it done, so a test reads the storage gauges from here on.
  double storage_settled() {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (metric("mailassay_pool_busy{pool=\"storage\"}") != 0 ||
           metric("mailassay_pool_queued{pool=\"storage\"}") != 0) {
      if (std::chrono::steady_clock::now() > until)
        throw std::runtime_error("the storage pool did not settle in 30 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return metric("mailassay_pool_done{pool=\"storage\"}");
  }

  /// Adds a member with `role` to the organization of `owner` (a token)
  /// and logs it in; returns its access token.
  std::string member_token(const std::string& owner,
                           const std::string& role = "member") {
    auto email = unique_email(role);
    auto added = post(
        "/v2/organization/members",
        {{"email", email}, {"password", "member password"}, {"role", role}},
        owner);
    if (added.status != 201)
      throw std::runtime_error("add member failed: " + added.body);
    auto login = post("/v2/auth/login",
                      {{"email", email}, {"password", "member password"}});
    if (login.status != 200)
      throw std::runtime_error("member login failed: " + login.body);
    return json::parse(login.body)["accessToken"].get<std::string>();
  }

  /// Creates a key with `body`; returns the 201 body.
  json create_key(const std::string& token, json body = {{"name", "k"}}) {
    auto r = post("/v2/api-keys", body, token);
    if (r.status != 201)
      throw std::runtime_error("create key failed: " + r.body);
    return json::parse(r.body);
  }
};

/// The environment of a server that probes SMTP servers on loopback (the
/// project's SMTP peer or a local MTA): DNS from `dns_server`, test domains
/// allowed, the shipped risk lists, a fixed sender identity, 127.0.0.0/8
/// allowed as SMTP targets on `smtp_port`, no per-IP limit in the way.
/// `extra` adds or overrides.
inline std::map<std::string, std::string>
smtp_server_env(const std::string& dns_server, const std::string& smtp_port,
                const std::map<std::string, std::string>& extra = {}) {
  std::map<std::string, std::string> env{
      {"MAILASSAY_DNS_SERVERS", dns_server},
      // The DNS peer always answers: a short time-out would only turn a
      // busy machine's slow answer into a DNS failure (and a refund).
      {"MAILASSAY_DNS_TIMEOUT_MS", "5000"},
      {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
      {"MAILASSAY_RISK_DATA_DIR",
       std::string{std::getenv("MAILASSAY_SOURCE_DIR")} + "/data/risk"},
      {"MAILASSAY_SMTP_HELO", "probe.example.io"},
      {"MAILASSAY_SMTP_MAIL_FROM", "verify@example.io"},
      {"MAILASSAY_SMTP_PORT", smtp_port},
      {"MAILASSAY_SMTP_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8"},
      {"MAILASSAY_LIMITS_IP_PER_MINUTE", "100000"}};
  for (auto& [k, v] : extra)
    env[k] = v;
  return env;
}

/// Signs up a new organization and creates an API key allowed to probe over
/// SMTP; returns its access token and the key.
inline std::pair<std::string, std::string>
smtp_account(api& a, const std::string& org) {
  auto jwt = a.signup(org, unique_email("s"))["accessToken"].get<std::string>();
  auto key =
      a.create_key(jwt, {{"name", "smtp"}, {"config", {{"smtp", true}}}})["key"]
          .get<std::string>();
  return {jwt, key};
}

} // namespace mailassay::testing
