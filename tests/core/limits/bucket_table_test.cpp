#include "core/limits/bucket_table.hpp"
#include "core/limits/multi_window.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <string_view>

using namespace mailassay::core::limits;
using namespace std::chrono_literals;

namespace {

const millis t0{5'000'000};
const window_spec per_minute_100{100, 60s};

std::string key_of(int i) {
  std::string key = "k";
  key += std::to_string(i);
  return key;
}

token_bucket& take_for(bucket_table<std::string>& table, const std::string& key,
                       millis now) {
  auto& b = table.find_or_insert(
      key, now, [&] { return token_bucket(per_minute_100, now); });
  b.take(now);
  return b;
}

// Hashes a key given as a string or a view alike.
struct view_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>{}(s);
  }
};

} // namespace

TEST_SUITE("core.limits.bucket_table") {
  TEST_CASE("a table with a transparent hash looks keys up by view") {
    bucket_table<std::string, token_bucket, view_hash, std::equal_to<>> table(
        10);
    std::string id = "key-1234";
    std::string_view view = id;
    auto& b = table.find_or_insert(
        view, t0, [&] { return token_bucket(per_minute_100, t0); });
    b.take(t0, 40);
    // The table holds its own copy of the key: the viewed text can go.
    id.assign("something-else");
    CHECK(table.find(std::string_view{"key-1234"}) == &b);
    CHECK(table.peek(std::string_view{"key-1234"}) == &b);
    CHECK(table.find(std::string_view{"something-else"}) == nullptr);
    CHECK(table.size() == 1);
    CHECK(table.erase(std::string_view{"key-1234"}));
    CHECK(table.size() == 0);
  }

  TEST_CASE("a flood of 100000 distinct keys stays within the bound") {
    bucket_table<std::string> table(1000);
    for (int i = 0; i < 100000; ++i) {
      take_for(table, key_of(i), t0);
      REQUIRE(table.size() <= 1000);
    }
    CHECK(table.size() == 1000);
    CHECK(table.evictions() == 99000);
  }

  TEST_CASE("evicts full buckets before busy ones") {
    bucket_table<std::string> table(3);
    take_for(table, "busy-old", t0).take(t0, 49);
    take_for(table, "idle", t0);
    take_for(table, "busy-new", t0 + 1s).take(t0 + 1s, 49);
    table.find("idle"); // most recently used, yet full again by t0 + 2s
    take_for(table, "newcomer", t0 + 2s);
    CHECK(table.size() == 3);
    CHECK(table.find("busy-old") != nullptr);
    CHECK(table.find("busy-new") != nullptr);
    CHECK(table.find("idle") == nullptr);
    CHECK(table.evictions() == 1);
    CHECK(table.active_evictions() == 0);
  }

  TEST_CASE("without full buckets, evicts the least recently used") {
    bucket_table<std::string> table(2);
    take_for(table, "a", t0);
    take_for(table, "b", t0);
    take_for(table, "a", t0); // a is now the most recent
    take_for(table, "c", t0);
    CHECK(table.find("a") != nullptr);
    CHECK(table.find("b") == nullptr);
    CHECK(table.find("c") != nullptr);
    CHECK(table.active_evictions() == 1);
  }

  TEST_CASE("sweep removes every full bucket and keeps the rest") {
    bucket_table<std::string> table(100);
    for (int i = 0; i < 50; ++i)
      take_for(table, key_of(i), t0);
    auto& heavy = *table.find(key_of(7));
    heavy.take(t0, 99);
    CHECK(table.sweep(t0 + 599ms) == 0);
    CHECK(table.sweep(t0 + 600ms) == 49);
    CHECK(table.size() == 1);
    CHECK(table.find(key_of(7)) != nullptr);
    CHECK(table.sweep(t0 + 60s) == 1);
    CHECK(table.size() == 0);
    CHECK(table.swept() == 50);
  }

  TEST_CASE("holds multi-window buckets too") {
    bucket_table<std::string, multi_window> table(10);
    auto& w = table.find_or_insert("key-1", t0, [] {
      return multi_window(key_windows(2, std::nullopt, std::nullopt), t0);
    });
    w.take(t0);
    CHECK(table.sweep(t0 + 29s) == 0);
    CHECK(table.sweep(t0 + 30s) == 1);
  }

  TEST_CASE("changes counts inserts and removals, not lookups") {
    bucket_table<std::string> table(2);
    take_for(table, "a", t0);
    take_for(table, "b", t0);
    CHECK(table.changes() == 2);
    // Finding a bucket, taking from it, peeking: nothing the figures show.
    take_for(table, "a", t0);
    table.find("b");
    table.peek("a");
    CHECK_FALSE(table.erase("absent"));
    CHECK(table.changes() == 2);
    take_for(table, "c", t0); // evicts one: an insert and a removal
    CHECK(table.evictions() == 1);
    CHECK(table.changes() == 4);
    CHECK(table.erase("c"));
    CHECK(table.changes() == 5);
    CHECK(table.sweep(t0 + 60s) == 1);
    CHECK(table.changes() == 6);
  }

  TEST_CASE("erase forgets a key") {
    bucket_table<std::string> table(4);
    take_for(table, "x", t0);
    CHECK(table.erase("x"));
    CHECK_FALSE(table.erase("x"));
    CHECK(table.size() == 0);
  }

  TEST_CASE("peek reads a bucket without making it recently used") {
    bucket_table<std::string> table(2);
    take_for(table, "old", t0);
    take_for(table, "new", t0);
    REQUIRE(table.peek("old") != nullptr);
    CHECK(table.peek("old")->available(t0) == 99);
    CHECK(table.peek("missing") == nullptr);
    // "old" is still the least recently used: the next insert drops it.
    take_for(table, "third", t0);
    CHECK(table.peek("old") == nullptr);
    CHECK(table.peek("new") != nullptr);
  }

  TEST_CASE("a sweep in steps visits each entry once and survives entries "
            "used or dropped between steps") {
    bucket_table<std::string> table(1000);
    for (int i = 0; i < 100; ++i)
      take_for(table, key_of(i), t0);
    // k0 is the least recently used; one step examines k0..k9.
    CHECK_FALSE(table.sweep_some(t0 + 1s, 10));
    CHECK(table.size() == 90);
    // Between steps: the next entry to examine is used (moves to the most
    // recently used end, still ahead of the pass), another is erased, a new
    // one is inserted.
    take_for(table, key_of(10), t0 + 1s);
    CHECK(table.erase(key_of(11)));
    take_for(table, "late", t0 + 1s);
    std::size_t steps = 0;
    while (!table.sweep_some(t0 + 1s, 10))
      ++steps;
    CHECK(steps == 8);
    // 88 + the two used during the pass were examined; those two are kept.
    CHECK(table.size() == 2);
    CHECK(table.find(key_of(10)) != nullptr);
    CHECK(table.find("late") != nullptr);
    CHECK(table.swept() == 98);
    // A new pass starts from the least recently used end again.
    CHECK(table.sweep_some(t0 + 2s, 10));
    CHECK(table.size() == 0);
  }
}
