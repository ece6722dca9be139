#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "tests/support/http_client.hpp"
#include "tests/support/server_process.hpp"

namespace mailassay::testing {

using nlohmann::json;

/// Shortcuts for one running server.
struct api {
  server_process& srv;

  http_response call(const std::string& method, const std::string& path,
                     const std::string& token = "",
                     const std::string& body = "",
                     std::vector<std::pair<std::string, std::string>> extra
                     = {}) {
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

  /// Creates a key with `body`; returns the 201 body.
  json create_key(const std::string& token, json body = {{"name", "k"}}) {
    auto r = post("/v2/api-keys", body, token);
    if (r.status != 201)
      throw std::runtime_error("create key failed: " + r.body);
    return json::parse(r.body);
  }
};

/// A unique email for a test.
inline std::string unique_email(const std::string& tag) {
  static int n = 0;
  return tag + std::to_string(::getpid()) + "-" + std::to_string(++n)
         + "@example.org";
}

} // namespace mailassay::testing
