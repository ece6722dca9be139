#include "config/risk_files.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace mailassay;

namespace {

std::string write_table(const std::string& text) {
  auto path = std::filesystem::temp_directory_path() /
              ("mailassay-providers-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path) << text;
  return path.string();
}

} // namespace

TEST_SUITE("config.provider_table") {
  TEST_CASE("reads providers.txt from the risk data folder by default") {
    const char* root = std::getenv("MAILASSAY_SOURCE_DIR");
    REQUIRE(root != nullptr);
    config::risk_settings cfg;
    cfg.data_dir = std::string{root} + "/data/risk";
    auto t = config::load_provider_table(cfg);
    REQUIRE_MESSAGE(t.has_value(),
                    (t.has_value() ? "" : t.error_value().message));
    REQUIRE((*t)->find("aspmx.l.google.com") != nullptr);
    CHECK((*t)->find("aspmx.l.google.com")->name == "google");
  }

  TEST_CASE("providers_file names the operator's own table") {
    auto path = write_table("prov.test google mailbox\n");
    config::risk_settings cfg;
    cfg.data_dir = "/nonexistent";
    cfg.providers_file = path;
    auto t = config::load_provider_table(cfg);
    std::filesystem::remove(path);
    REQUIRE(t.has_value());
    REQUIRE((*t)->find("mx1.prov.test") != nullptr);
    CHECK((*t)->find("mx1.prov.test")->name == "google");
    CHECK((*t)->find("aspmx.l.google.com") == nullptr);
  }

  TEST_CASE("a missing or malformed table is refused, naming file and line") {
    config::risk_settings cfg;
    cfg.providers_file = "/nonexistent/providers.txt";
    auto missing = config::load_provider_table(cfg);
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error_value().message.find("/nonexistent/providers.txt") !=
          std::string::npos);
    auto path = write_table("ok.test a mailbox\nbad.test b inbox\n");
    cfg.providers_file = path;
    auto bad = config::load_provider_table(cfg);
    std::filesystem::remove(path);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error_value().message.find("line 2") != std::string::npos);
    CHECK(bad.error_value().message.find(path) != std::string::npos);
  }
}
