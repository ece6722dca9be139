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

using namespace mailassay;
using namespace std::chrono_literals;

namespace {

std::string fresh_dir() {
  std::string tmpl = "/tmp/mailassay-control-XXXXXX";
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
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
}
