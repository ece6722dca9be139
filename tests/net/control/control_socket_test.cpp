#include "net/blocking_socket.hpp"
#include "net/control_socket.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

using namespace mailassay;
using namespace std::chrono_literals;

namespace {

std::string fresh_dir() {
  std::string tmpl = "/tmp/mailassay-control-XXXXXX";
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

// A client connected to `path` that has sent nothing.
int connect_idle(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, path.size());
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

} // namespace

TEST_SUITE("net.control_socket") {
  TEST_CASE("answers each command line on a socket only its user may open") {
    auto path = fresh_dir() + "/ctl.sock";
    auto l = net::control_listener::start(
        path, [](std::string_view cmd) { return "got " + std::string{cmd}; });
    REQUIRE(l.has_value());
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    auto a = net::control_request(path, "reload", 5000ms);
    REQUIRE(a.has_value());
    CHECK(*a == "got reload");
    auto b = net::control_request(path, "status", 5000ms);
    REQUIRE(b.has_value());
    CHECK(*b == "got status");
    (*l)->stop();
    // Stopped: the file is gone and nothing answers.
    CHECK(::stat(path.c_str(), &st) != 0);
    auto c = net::control_request(path, "reload", 5000ms);
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error_value().code == core::errc::unavailable);
  }

  TEST_CASE("replaces a socket file left by a process that is gone, never a "
            "live one or another kind of file") {
    auto dir = fresh_dir();
    auto path = dir + "/ctl.sock";
    {
      // A socket bound and closed without unlinking: what a killed server
      // leaves behind.
      int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      path.copy(a.sun_path, path.size());
      REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
      ::close(fd);
    }
    auto first =
        net::control_listener::start(path, [](auto) { return "first"; });
    REQUIRE(first.has_value());
    auto second =
        net::control_listener::start(path, [](auto) { return "second"; });
    REQUIRE_FALSE(second.has_value());
    CHECK(second.error_value().code == core::errc::conflict);
    CHECK(*net::control_request(path, "x", 5000ms) == "first");
    auto file = dir + "/plain";
    std::ofstream{file} << "keep me\n";
    auto third =
        net::control_listener::start(file, [](auto) { return "third"; });
    REQUIRE_FALSE(third.has_value());
    std::ifstream in{file};
    std::string kept;
    std::getline(in, kept);
    CHECK(kept == "keep me");
  }

  TEST_CASE("a client that sends nothing does not hold the channel") {
    auto path = fresh_dir() + "/ctl.sock";
    auto l = net::control_listener::start(
        path, [](std::string_view cmd) { return std::string{cmd}; });
    REQUIRE(l.has_value());
    int idle = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, path.size());
    REQUIRE(::connect(idle, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    // The silent client is given up after a second; this one is answered.
    auto r = net::control_request(path, "next", 10000ms);
    ::close(idle);
    REQUIRE(r.has_value());
    CHECK(*r == "next");
  }

  TEST_CASE("idle connections do not delay a command: it is answered well "
            "before they reach their read deadline, and they are closed "
            "unanswered once they do") {
    constexpr auto deadline = 500ms;
    constexpr int idle_clients = 20;
    auto path = fresh_dir() + "/ctl.sock";
    auto l = net::control_listener::start(
        path, [](std::string_view cmd) { return std::string{cmd}; }, deadline);
    REQUIRE(l.has_value());
    std::vector<int> idle;
    for (int i = 0; i < idle_clients; ++i)
      idle.push_back(connect_idle(path));
    auto started = std::chrono::steady_clock::now();
    auto r = net::control_request(path, "reload", 60s);
    auto took = std::chrono::steady_clock::now() - started;
    REQUIRE(r.has_value());
    CHECK(*r == "reload");
    // Served one after another, the idle ones would hold it for
    // idle_clients x deadline (10 s); side by side it does not wait for
    // even the first deadline, which 4 x leaves room for a busy machine.
    CHECK(took < 4 * deadline);
    for (int fd : idle) {
      auto answer = net::read_to_end(fd, 30s);
      REQUIRE(answer.has_value());
      CHECK(answer->empty());
      ::close(fd);
    }
  }
}
