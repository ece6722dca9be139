// The per-thread pool of response buffers (http/text_pool.hpp).
#include "http/text_pool.hpp"

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

using namespace mailassay::http;

namespace {

// Empties this thread's pool.
void drain() {
  for (int i = 0; i < 100; ++i)
    text_pool::take();
}

std::string with_capacity(std::size_t n) {
  std::string s;
  s.reserve(n);
  s = "some text";
  return s;
}

} // namespace

TEST_SUITE("http.text_pool") {
  TEST_CASE("a buffer given back is taken again, empty, with its capacity") {
    drain();
    CHECK(text_pool::take().capacity() < 512);
    auto s = with_capacity(2048);
    const auto* storage = s.data();
    text_pool::give(std::move(s));
    auto again = text_pool::take();
    CHECK(again.empty());
    CHECK(again.capacity() >= 2048);
    CHECK(again.data() == storage);
    CHECK(text_pool::take().capacity() < 512); // it was the only one
  }

  TEST_CASE("small and very large buffers are not kept") {
    drain();
    text_pool::give(with_capacity(100));
    text_pool::give(with_capacity(1 << 20));
    CHECK(text_pool::take().capacity() < 512);
  }

  TEST_CASE("at most 32 buffers are kept per thread") {
    drain();
    for (int i = 0; i < 40; ++i)
      text_pool::give(with_capacity(1024));
    int kept = 0;
    while (text_pool::take().capacity() >= 1024)
      ++kept;
    CHECK(kept == 32);
  }

  TEST_CASE("a pooled response text goes back to the pool of the thread "
            "that lets go of it") {
    drain();
    auto s = with_capacity(4096);
    const auto* storage = s.data();
    {
      pooled_text t{std::move(s)};
      CHECK(t.size() == 9);
      CHECK(std::string(t.data(), t.size()) == "some text");
      // Another thread's pool does not see this thread's buffers.
      std::thread other{[] { CHECK(text_pool::take().capacity() < 512); }};
      other.join();
    }
    CHECK(text_pool::take().data() == storage);
  }
}
