#include "config/settings.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <unistd.h>

using namespace mailassay::config;

namespace {

std::string write_temp(const std::string& text) {
  auto path = std::filesystem::temp_directory_path() /
              ("mailassay-config-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(path) << text;
  return path.string();
}

} // namespace

TEST_SUITE("config") {
  TEST_CASE("defaults match the documented values") {
    auto s = load(std::nullopt, {});
    REQUIRE(s.has_value());
    CHECK(s->http.port == 3000);
    CHECK(s->database.url == "sqlite://data/mailassay.db");
    CHECK(s->auth.signup_enabled);
    CHECK(s->credits.signup_grant == 100);
    CHECK(s->auth.access_ttl_seconds == 900);
    CHECK(s->http.max_body_bytes == 1048576);
  }
  TEST_CASE("environment variables override the file") {
    auto path = write_temp("# comment\n[http]\nport = 4000\naddress = "
                           "\"127.0.0.1\"\n[auth]\nsignup_enabled = false\n");
    auto s = load(path, {{"MAILASSAY_HTTP_PORT", "5000"},
                         {"MAILASSAY_CREDITS_SIGNUP_GRANT", "7"},
                         {"MAILASSAY_HTTP_TRUSTED_PROXIES", "10.0.0.1, ::1"}});
    REQUIRE(s.has_value());
    CHECK(s->http.port == 5000);
    CHECK(s->http.address == "127.0.0.1");
    CHECK_FALSE(s->auth.signup_enabled);
    CHECK(s->credits.signup_grant == 7);
    CHECK(s->http.trusted_proxies ==
          std::vector<std::string>{"10.0.0.1", "::1"});
  }
  TEST_CASE("bad values are refused with a message naming the key") {
    struct row {
      const char* name;
      const char* value;
      const char* fragment;
    };
    for (auto r : {row{"MAILASSAY_HTTP_PORT", "70000", "between"},
                   row{"MAILASSAY_HTTP_PORT", "abc", "integer"},
                   row{"MAILASSAY_AUTH_SIGNUP_ENABLED", "maybe", "true or"},
                   row{"MAILASSAY_DATABASE_URL", "mysql://x", "sqlite://"},
                   row{"MAILASSAY_AUTH_JWT_SECRET", "short", "32"},
                   row{"MAILASSAY_HTTP_PROT", "1", "unknown setting"}}) {
      CAPTURE(r.name);
      auto s = load(std::nullopt, {{r.name, r.value}});
      REQUIRE_FALSE(s.has_value());
      CHECK(s.error_value().message.find(r.name) != std::string::npos);
      CHECK(s.error_value().message.find(r.fragment) != std::string::npos);
    }
  }
  TEST_CASE("variables outside our sections are left to their owners") {
    CHECK(load(std::nullopt, {{"MAILASSAY_TEST_PG_URL", "x"}}).has_value());
  }
  TEST_CASE("file errors name the file, line and key") {
    auto path = write_temp("[http]\nport = 0\n");
    auto s = load(path, {});
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error_value().message.find(":2: http.port") != std::string::npos);
    auto unknown = load(write_temp("[http]\nfoo = 1\n"), {});
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error_value().message.find("unknown setting http.foo") !=
          std::string::npos);
    CHECK_FALSE(load(std::string{"/nonexistent/x.toml"}, {}).has_value());
  }
  TEST_CASE("what a reload applies: politeness, limits, log level, pacing; "
            "pool sizes take a restart") {
    std::map<std::string, bool> live;
    for (auto& d : describe())
      live[d.section + "." + d.key] = d.reloadable;
    CHECK(live.at("smtp.max_sessions_per_host"));
    CHECK(live.at("smtp.connections_per_second_per_host"));
    CHECK(live.at("limits.ip_per_minute"));
    CHECK(live.at("log.level"));
    CHECK(live.at("batch.rate_under_load"));
    CHECK_FALSE(live.at("http.io_threads"));
    CHECK_FALSE(live.at("actors.scheduler_threads"));
    CHECK_FALSE(live.at("actors.storage_workers"));
    CHECK_FALSE(live.at("validation.workers"));
    CHECK_FALSE(live.at("smtp.io_threads"));
    CHECK_FALSE(live.at("batch.max_jobs"));
    CHECK_FALSE(live.at("limits.enabled"));
    CHECK_FALSE(live.at("control.socket"));
    CHECK_FALSE(live.at("smtp.host_metrics_idle_seconds"));
  }
  TEST_CASE("changes lists what differs; values only for reloadable keys") {
    auto a = load(std::nullopt, {});
    auto b = load(std::nullopt, {{"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "7"},
                                 {"MAILASSAY_DATABASE_URL",
                                  "postgresql://u:secret@127.0.0.1:5432/db"}});
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    auto c = changes(*a, *b);
    REQUIRE(c.size() == 2);
    CHECK(c[0].name == "database.url");
    CHECK_FALSE(c[0].reloadable);
    CHECK(c[0].before.empty());
    CHECK(c[0].after.empty()); // never the password
    CHECK(c[1].name == "smtp.max_sessions_per_host");
    CHECK(c[1].reloadable);
    CHECK(c[1].before == "4");
    CHECK(c[1].after == "7");
    CHECK(changes(*a, *a).empty());
  }
  TEST_CASE("a reload copies exactly the reloadable settings") {
    auto live = load(std::nullopt, {});
    auto next =
        load(std::nullopt, {{"MAILASSAY_LIMITS_IP_PER_MINUTE", "70"},
                            {"MAILASSAY_LOG_LEVEL", "debug"},
                            {"MAILASSAY_BATCH_RATE_UNDER_LOAD", "400"},
                            {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "9"},
                            {"MAILASSAY_ACTORS_STORAGE_WORKERS", "7"},
                            {"MAILASSAY_LIMITS_ENABLED", "false"}});
    REQUIRE(live.has_value());
    REQUIRE(next.has_value());
    apply_reloadable(*live, *next);
    CHECK(live->limits.ip_per_minute.get() == 70);
    CHECK(live->log.level == "debug");
    CHECK(live->batch.rate_under_load.get() == 400);
    CHECK(live->smtp.max_sessions_per_host == 9);
    // Restart-only: kept.
    CHECK(live->actors.storage_workers == 4);
    CHECK(live->limits.enabled);
    // What is left to differ is exactly what takes a restart.
    for (auto& c : changes(*live, *next))
      CHECK_MESSAGE(!c.reloadable, c.name);
  }
  TEST_CASE("the file comes from --config, else MAILASSAY_CONFIG") {
    CHECK(file_of(std::string{"a.toml"}, {{"MAILASSAY_CONFIG", "b.toml"}}) ==
          "a.toml");
    CHECK(file_of(std::nullopt, {{"MAILASSAY_CONFIG", "b.toml"}}) == "b.toml");
    CHECK_FALSE(file_of(std::nullopt, {}).has_value());
  }
  TEST_CASE("every key is documented with its variable") {
    for (auto& d : describe()) {
      CHECK(d.env_name.rfind("MAILASSAY_", 0) == 0);
      CHECK_FALSE(d.description.empty());
    }
  }
}

TEST_SUITE("config.docs") {
  TEST_CASE("docs/configuration.md and the example file name every setting") {
    auto* root = std::getenv("MAILASSAY_SOURCE_DIR");
    REQUIRE(root != nullptr);
    auto read = [&](const std::string& rel) {
      std::ifstream in{std::string{root} + "/" + rel};
      return std::string{std::istreambuf_iterator<char>{in}, {}};
    };
    auto docs = read("docs/configuration.md");
    auto example = read("config/mailassay.example.toml");
    for (auto& d : describe()) {
      CHECK_MESSAGE(docs.find(d.env_name) != std::string::npos, d.env_name);
      bool in_example = example.find(d.key + " =") != std::string::npos;
      CHECK_MESSAGE(in_example, d.key);
    }
  }
  TEST_CASE("the example file loads as it is") {
    auto* root = std::getenv("MAILASSAY_SOURCE_DIR");
    REQUIRE(root != nullptr);
    auto s = load(std::string{root} + "/config/mailassay.example.toml", {});
    CHECK_MESSAGE(s.has_value(),
                  (s.has_value() ? "" : s.error_value().message));
  }
}
