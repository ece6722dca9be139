#include "core/risk/string_set.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace mailassay::core::risk;

TEST_SUITE("core.risk.string_set") {
  TEST_CASE("parses one entry per line, trimmed and lower-cased") {
    auto s = string_set::from_text("# header\n"
                                   "  Mailinator.COM \r\n"
                                   "\n"
                                   "guerrillamail.com # trailing comment\n"
                                   "mailinator.com\n"
                                   "last.example");
    CHECK(s.size() == 3);
    CHECK(s.contains("mailinator.com"));
    CHECK(s.contains("guerrillamail.com"));
    CHECK(s.contains("last.example"));
    CHECK_FALSE(s.contains("Mailinator.COM"));
    CHECK_FALSE(s.contains("# header"));
    CHECK_FALSE(s.contains(""));
    CHECK_FALSE(s.contains("mailinator.co"));
  }

  TEST_CASE("finds the stored copy of an entry") {
    auto s = string_set::from_text("info\nsales\n");
    std::string key = "sales";
    auto found = s.find(key);
    CHECK(found == "sales");
    CHECK(found.data() != key.data());
    CHECK(s.find("marketing").empty());
  }

  TEST_CASE("merges several texts into one set") {
    auto s = string_set::from_texts({"a.com\nb.com", "b.com\nc.com\n"});
    CHECK(s.size() == 3);
    CHECK(s.contains("c.com"));
  }

  TEST_CASE("an empty set contains nothing") {
    string_set s;
    CHECK(s.empty());
    CHECK_FALSE(s.contains("x"));
    CHECK(string_set::from_text("# only a comment\n\n").empty());
  }

  TEST_CASE("holds many entries and finds each of them") {
    // Appended piecewise: GCC 12 warns (-Wrestrict, a false positive) on
    // `"d" + std::to_string(i)`.
    auto name = [](int i) {
      std::string s{"d"};
      s += std::to_string(i);
      s += ".example";
      return s;
    };
    std::string text;
    for (int i = 0; i < 20000; ++i) {
      text += name(i);
      text += '\n';
    }
    auto s = string_set::from_text(text);
    CHECK(s.size() == 20000);
    bool all = true;
    for (int i = 0; i < 20000; ++i)
      all = all && s.contains(name(i));
    CHECK(all);
    CHECK_FALSE(s.contains(name(20000)));
  }
}
