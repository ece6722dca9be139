#pragma once

#include <string>
#include <sys/types.h>

namespace mailassay::testing {

/// The Redis server the tests share: $MAILASSAY_TEST_REDIS_URL (set by
/// scripts/test, from scripts/lib/test-redis.sh), else a private
/// redis-server started once for the test binary; "" when neither works.
std::string shared_redis_url();

/// Fails the current test when there is no Redis, and returns false
/// without failing when MAILASSAY_TEST_SKIP_REDIS=1 (skip the test).
bool require_shared_redis();

/// A private redis-server (Debian's binary) on a free loopback port, for
/// tests that stop and start Redis under a running service. No
/// persistence; stopped with SIGTERM on destruction.
class redis_process {
public:
  /// Starts it and waits until it answers PING.
  redis_process();
  ~redis_process();
  redis_process(const redis_process&) = delete;
  redis_process& operator=(const redis_process&) = delete;

  /// redis://127.0.0.1:<port>/0.
  std::string url() const;
  /// Its port (the same after `start`).
  int port() const { return port_; }
  /// Stops it (SIGTERM) and waits for it to exit.
  void stop();
  /// Starts it again on the same port; waits until it answers PING.
  void start();
  /// Freezes it (SIGSTOP): connections stay open, nothing is answered.
  void pause();
  /// Lets a paused server run again (SIGCONT).
  void resume();
  /// Whether it answers PING now.
  bool answers() const;

private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
};

/// Sends one command (space-separated words, no quoting) to the Redis at
/// 127.0.0.1:`port` and returns its reply as text ("" when none).
std::string redis_command(int port, const std::string& words);

} // namespace mailassay::testing
