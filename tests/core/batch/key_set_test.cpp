#include "core/batch/key_set.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core::batch;
using namespace std::string_literals;

TEST_SUITE("core.batch") {
  TEST_CASE("key set inserts each key once, byte for byte") {
    struct step {
      std::string key;
      bool inserted;
    };
    const std::vector<step> steps{
        {"a@acme.io", true},
        {"a@acme.io", false},
        {"A@acme.io", true},
        {"a@acme.i", true},
        {"a@acme.io ", true},
        {"", true},
        {"", false},
        {"a@acme.i", false},
        {"b@acme.io", true},
        {"a\0b"s, true},
        {"a\0c"s, true},
        {"a\0b"s, false},
        {"\xC3\xA9@x.de", true},
        {"\xC3\xA9@x.de", false},
    };
    key_set set;
    std::size_t size = 0;
    for (const auto& s : steps) {
      CAPTURE(s.key);
      CHECK(set.insert(s.key) == s.inserted);
      CHECK(set.contains(s.key));
      size += s.inserted;
      CHECK(set.size() == size);
    }
    CHECK_FALSE(set.contains("c@acme.io"));
    CHECK_FALSE(key_set{}.contains(""));
  }

  TEST_CASE("key set keeps every key across growth") {
    key_set set;
    auto insert_all = [&] {
      int fresh = 0;
      for (int i = 0; i < 50000; ++i)
        fresh += set.insert("user" + std::to_string(i) + "@acme.io");
      return fresh;
    };
    CHECK(insert_all() == 50000);
    CHECK(set.size() == 50000);
    CHECK(insert_all() == 0);
    CHECK(set.size() == 50000);
    CHECK_FALSE(set.contains("user50000@acme.io"));
  }

  TEST_CASE("key set compares keys longer than 255 bytes in full") {
    key_set set;
    std::string a(300, 'a');
    std::string b = a;
    b.back() = 'b';
    CHECK(set.insert(a));
    CHECK(set.insert(b));
    CHECK_FALSE(set.insert(a));
    CHECK(set.contains(b));
  }
}
