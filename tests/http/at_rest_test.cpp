// Files at rest (docs/security.md): what `serve` creates on SQLite
// is private to its user whatever the umask, and a file left open to others
// is reported at start.
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <sys/stat.h>

using namespace mailassay::testing;

namespace {

// The permission bits of `path`; -1 when it does not exist.
int mode_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return -1;
  return static_cast<int>(st.st_mode & 07777);
}

// A folder of the test's own, removed at the end; `data` under it does not
// exist yet, so the server makes it.
struct scratch {
  std::string base = temp_dir("at-rest");
  std::string data = base + "/data";
  std::map<std::string, std::string> env() const {
    // SQLite whatever the suite's database: the files are the point.
    return {{"MAILASSAY_DATABASE_URL", "sqlite://" + data + "/mailassay.db"},
            {"MAILASSAY_WEBHOOKS_SECRET_KEY_FILE", data + "/webhooks.key"},
            // The key generated into the file, as on a first start.
            {"MAILASSAY_WEBHOOKS_SECRET_KEY", unset_variable}};
  }
  ~scratch() {
    std::error_code ec;
    std::filesystem::remove_all(base, ec);
  }
};

// Runs the server under the umask most shells have, which made the files
// 0644 before.
struct umask_022 {
  mode_t previous = ::umask(022);
  ~umask_022() { ::umask(previous); }
};

} // namespace

TEST_SUITE("api.at_rest") {
  TEST_CASE("serve on SQLite makes its data folder 0700 and the database, "
            "its -wal and -shm and the server key 0600, under umask 022") {
    scratch s;
    umask_022 mask;
    server_process srv{s.env()};
    api a{srv};
    a.signup("Modes", unique_email("modes"));
    CHECK(mode_of(s.data) == 0700);
    CHECK(mode_of(s.data + "/mailassay.db") == 0600);
    // WAL mode keeps both while a connection is open.
    CHECK(mode_of(s.data + "/mailassay.db-wal") == 0600);
    CHECK(mode_of(s.data + "/mailassay.db-shm") == 0600);
    CHECK(mode_of(s.data + "/webhooks.key") == 0600);
    CHECK(srv.log().find("file_open_to_others") == std::string::npos);
  }

  TEST_CASE("a database file or server key readable by others is reported "
            "in the log at start") {
    scratch s;
    { server_process first{s.env()}; }
    REQUIRE(::chmod((s.data + "/mailassay.db").c_str(), 0644) == 0);
    REQUIRE(::chmod((s.data + "/webhooks.key").c_str(), 0640) == 0);
    server_process srv{s.env()};
    auto log = srv.log();
    CHECK(log.find("\"file_open_to_others\"") != std::string::npos);
    CHECK(log.find(s.data + "/mailassay.db\"") != std::string::npos);
    CHECK(log.find("0644") != std::string::npos);
    CHECK(log.find(s.data + "/webhooks.key\"") != std::string::npos);
    CHECK(log.find("0640") != std::string::npos);
  }
}
