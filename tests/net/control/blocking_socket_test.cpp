#include "net/blocking_socket.hpp"

#include <doctest/doctest.h>

#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace mailassay::net;
using namespace std::chrono_literals;

namespace {

// A connected pair of stream sockets, closed at the end.
struct socket_pair {
  socket_pair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0); }
  ~socket_pair() {
    for (int f : fd)
      if (f >= 0)
        ::close(f);
  }
  void close_side(int i) {
    ::close(fd[i]);
    fd[i] = -1;
  }
  int fd[2] = {-1, -1};
};

} // namespace

TEST_SUITE("net.blocking_socket") {
  TEST_CASE("read_to_end reads all that was sent until the peer closes") {
    socket_pair p;
    // More than one read's worth and more than the socket buffer holds:
    // the writer blocks until the reader drains it.
    std::string big(1 << 20, 'x');
    big[12345] = 'y';
    std::thread writer{[&] {
      CHECK(send_all(p.fd[0], big));
      p.close_side(0);
    }};
    auto got = read_to_end(p.fd[1], 30s);
    writer.join();
    REQUIRE(got);
    CHECK(*got == big);
  }

  TEST_CASE("read_to_end gives up when the peer says nothing in time") {
    socket_pair p;
    CHECK(send_all(p.fd[0], "partial"));
    CHECK_FALSE(read_to_end(p.fd[1], 50ms));
  }

  TEST_CASE("send_all reports a peer that is gone, without SIGPIPE") {
    socket_pair p;
    p.close_side(1);
    CHECK_FALSE(send_all(p.fd[0], "hello"));
  }

  TEST_CASE("wait_for tells readable from not yet") {
    socket_pair p;
    CHECK_FALSE(wait_for(p.fd[1], POLLIN, 0));
    CHECK(send_all(p.fd[0], "a"));
    CHECK(wait_for(p.fd[1], POLLIN, 30000));
  }
}
