// Per-provider politeness settings (issue #30, docs/smtp.md): a limit for a
// provider the table does not know is refused at start and at reload.
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

#include <fstream>

using namespace mailassay::testing;

TEST_SUITE("app.provider_limits") {
  TEST_CASE("smtp.provider_limits naming an unknown provider or malformed "
            "stops the start with a clear message") {
    std::string out;
    CHECK(run_binary({"serve"},
                     {{"MAILASSAY_SMTP_PROVIDER_LIMITS", "google=2,gogle=1"}},
                     out) == 2);
    CHECK_MESSAGE(out.find("names a provider the provider table does not "
                           "know: gogle") != std::string::npos,
                  out);
    CHECK(out.find("google") != std::string::npos); // among the known
    CHECK(run_binary({"serve"},
                     {{"MAILASSAY_SMTP_PROVIDER_LIMITS", "google=lots"}},
                     out) == 2);
    CHECK_MESSAGE(
        out.find("bad provider limit 'google=lots'") != std::string::npos, out);
  }

  TEST_CASE("a reload applies known per-provider limits and refuses an "
            "unknown provider, keeping the old") {
    auto dir = temp_dir("provider-limits-reload");
    auto file = dir + "/mailassay.toml";
    auto write = [&](const std::string& text) {
      std::ofstream{file, std::ios::trunc} << text;
    };
    write("[smtp]\nprovider_limits = \"google=2\"\n");
    server_process srv{{{"MAILASSAY_CONFIG", file}}};
    auto socket = srv.dir() + "/control.sock";
    auto reload = [&](std::string& out) {
      return run_binary({"admin", "reload", "--socket", socket}, {}, out);
    };
    std::string out;
    write("[smtp]\nprovider_limits = \"google=2,nosuchprovider=1\"\n");
    CHECK(reload(out) == 1);
    CHECK_MESSAGE(
        out.find("does not know: nosuchprovider") != std::string::npos, out);
    CHECK(out.find("every setting kept as it was") != std::string::npos);
    write("[smtp]\nprovider_limits = \"google=3/5,yahoo=1\"\n");
    REQUIRE_MESSAGE(reload(out) == 0, out);
    CHECK_MESSAGE(out.find("smtp.provider_limits") != std::string::npos, out);
  }
}
