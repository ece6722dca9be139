#include "tests/support/redis_process.hpp"

#include "tests/support/server_process.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <netinet/in.h>
#include <signal.h>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace mailassay::testing {

std::string shared_redis_url() {
  const char* v = std::getenv("MAILASSAY_TEST_REDIS_URL");
  if (v && *v)
    return v;
  // Not given (a plain ctest run): one private server for this test
  // binary, started on first use and stopped when the binary exits.
  static std::unique_ptr<redis_process> own;
  if (!own)
    try {
      own = std::make_unique<redis_process>();
    } catch (const std::exception&) {
      return {};
    }
  return own->url();
}

bool require_shared_redis() {
  const char* skip = std::getenv("MAILASSAY_TEST_SKIP_REDIS");
  if (skip && std::string{skip} == "1") {
    MESSAGE("skipped: no Redis (MAILASSAY_TEST_SKIP_REDIS=1)");
    return false;
  }
  if (!shared_redis_url().empty())
    return true;
  FAIL("no Redis: MAILASSAY_TEST_REDIS_URL is not set and redis-server "
       "could not be started (scripts/lib/install-deps.sh "
       "scripts/lib/test-packages.txt), or set MAILASSAY_TEST_SKIP_REDIS=1 "
       "to skip the Redis cases");
  return false;
}

std::string redis_command(int port, const std::string& words) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return {};
  }
  // The inline protocol: one line of words.
  auto line = words + "\r\n";
  if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) < 0) {
    ::close(fd);
    return {};
  }
  std::string out;
  char buf[4096];
  // One reply: a line, or a bulk string's header and body.
  for (;;) {
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      break;
    out.append(buf, static_cast<std::size_t>(n));
    auto eol = out.find("\r\n");
    if (eol == std::string::npos)
      continue;
    if (out[0] != '$')
      break;
    auto len = std::stol(out.substr(1, eol - 1));
    if (len < 0 || out.size() >= eol + 2 + static_cast<std::size_t>(len) + 2)
      break;
  }
  ::close(fd);
  return out;
}

redis_process::redis_process() {
  dir_ = temp_dir("redis");
  port_ = free_port();
  start();
}

redis_process::~redis_process() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string redis_process::url() const {
  return "redis://127.0.0.1:" + std::to_string(port_) + "/0";
}

bool redis_process::answers() const {
  return redis_command(port_, "PING").rfind("+PONG", 0) == 0;
}

void redis_process::start() {
  if (pid_ > 0)
    return;
  auto port = std::to_string(port_);
  pid_ = ::fork();
  if (pid_ == 0) {
    std::vector<std::string> args{
        "redis-server", "--bind",    "127.0.0.1",        "--port", port,
        "--save",       "",          "--appendonly",     "no",     "--dir",
        dir_,           "--logfile", dir_ + "/redis.log"};
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execvp("redis-server", argv.data());
    ::_exit(127);
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    if (answers())
      return;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("redis-server exited at start (port " + port +
                               ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("redis-server did not answer on port " + port);
}

void redis_process::pause() {
  if (pid_ > 0)
    ::kill(pid_, SIGSTOP);
}

void redis_process::resume() {
  if (pid_ > 0)
    ::kill(pid_, SIGCONT);
}

void redis_process::stop() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGTERM);
  ::kill(pid_, SIGCONT); // a paused server gets its SIGTERM only then
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

} // namespace mailassay::testing
