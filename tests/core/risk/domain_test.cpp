#include "shipped_lists.hpp"

#include "core/risk/domain.hpp"

#include <doctest/doctest.h>

#include <string_view>

using namespace mailassay::core::risk;
using mailassay::tests::read_risk_file;
using mailassay::tests::shipped_lists;

namespace {

lists small_lists() {
  list_texts t;
  t.disposable = "mailinator.com\n"
                 "throwaway.example.org\n"
                 "dynv6.net\n"
                 "gmx.com\n"
                 "trap.gmail.com\n";
  t.disposable_allow = "gmx.com\nkeep.mailinator.com\ngmail.com\n";
  t.free_providers = "gmail.com\nmailinator.com\nyahoo.co.uk\n";
  t.extra_disposable = "operator-temp.example\n";
  t.extra_free_providers = "isp.example\nthrowaway.example.org\n";
  return lists_from_texts(t);
}

} // namespace

TEST_SUITE("core.risk.domain") {
  TEST_CASE("matches disposable domains, their subdomains and parents") {
    auto l = small_lists();
    struct row {
      std::string_view domain;
      bool disposable;
    };
    constexpr row rows[] = {
        {"mailinator.com", true},
        {"mailinator.com.", true},
        {"eu.mailinator.com", true},
        {"a.b.c.mailinator.com", true},
        {"throwaway.example.org", true},
        {"x.throwaway.example.org", true},
        {"example.org", false},
        {"notmailinator.com", false},
        {"mailinator.co", false},
        {"com", false},
        {"", false},
        {"operator-temp.example", true},
        {"in.operator-temp.example", true},
        // dynv6.net is a public suffix: its subdomains belong to other
        // registrants, so only the listed name itself is disposable.
        {"dynv6.net", true},
        {"someone.dynv6.net", false},
    };
    for (auto r : rows) {
      CAPTURE(r.domain);
      CHECK(is_disposable(l, r.domain) == r.disposable);
    }
  }

  TEST_CASE("the allowlist wins over the disposable list") {
    auto l = small_lists();
    CHECK_FALSE(is_disposable(l, "gmx.com"));
    CHECK_FALSE(is_disposable(l, "keep.mailinator.com"));
    CHECK_FALSE(is_disposable(l, "in.keep.mailinator.com"));
    CHECK(is_disposable(l, "other.mailinator.com"));
    // A listed subdomain of an allowlisted provider stays allowed.
    CHECK_FALSE(is_disposable(l, "trap.gmail.com"));
  }

  TEST_CASE("free providers never include disposable domains") {
    auto l = small_lists();
    CHECK(is_free_provider(l, "gmail.com"));
    CHECK(is_free_provider(l, "yahoo.co.uk"));
    CHECK(is_free_provider(l, "isp.example"));
    CHECK_FALSE(is_free_provider(l, "mailinator.com"));
    CHECK_FALSE(is_free_provider(l, "throwaway.example.org"));
    CHECK_FALSE(is_free_provider(l, "mail.gmail.com"));
    CHECK_FALSE(is_free_provider(l, "example.com"));
  }

  TEST_CASE("the shipped lists classify well-known domains") {
    const auto& l = shipped_lists();
    struct row {
      std::string_view domain;
      bool disposable;
      bool free;
    };
    constexpr row rows[] = {
        {"mailinator.com", true, false},   {"guerrillamail.com", true, false},
        {"10minutemail.com", true, false}, {"yopmail.com", true, false},
        {"temp-mail.org", true, false},    {"sub.mailinator.com", true, false},
        {"gmail.com", false, true},        {"yahoo.com", false, true},
        {"outlook.com", false, true},      {"hotmail.com", false, true},
        {"gmx.com", false, true},          {"proton.me", false, true},
        {"web.de", false, true},           {"example.com", false, false},
        {"mit.edu", false, false},
    };
    for (auto r : rows) {
      CAPTURE(r.domain);
      CHECK(is_disposable(l, r.domain) == r.disposable);
      CHECK(is_free_provider(l, r.domain) == r.free);
    }
  }

  TEST_CASE("no shipped free provider is disposable") {
    const auto& l = shipped_lists();
    std::size_t overlap = 0;
    l.free_providers.for_each(
        [&](std::string_view d) { overlap += l.disposable.contains(d); });
    CHECK(overlap == 0);
    CHECK(l.free_providers.size() > 1000);
    CHECK(l.disposable.size() > 5000);
  }

  TEST_CASE("knows every delegated TLD, new gTLDs and ccTLDs") {
    const auto& l = shipped_lists();
    for (auto tld : {"com", "cn", "shop", "co", "io", "me", "app", "uk",
                     "xn--p1ai", "museum"}) {
      CAPTURE(tld);
      CHECK(is_known_tld(l, tld));
    }
    for (auto tld : {"con", "cmo", "ocm", "comm", "nett"}) {
      CAPTURE(tld);
      CHECK_FALSE(is_known_tld(l, tld));
    }
  }

  TEST_CASE("every shipped data file is sorted, lower-case and unique") {
    for (auto name :
         {"disposable", "disposable_allow", "free_providers", "roles", "tlds",
          "first_names", "last_names", "common_words"}) {
      CAPTURE(name);
      auto text = read_risk_file(name);
      std::string_view rest = text;
      std::string_view previous;
      bool ordered = true;
      bool lower = true;
      while (!rest.empty()) {
        auto end = rest.find('\n');
        auto line = rest.substr(0, end);
        rest.remove_prefix(end == std::string_view::npos ? rest.size()
                                                         : end + 1);
        if (line.empty() || line.front() == '#')
          continue;
        ordered = ordered && previous < line;
        for (char c : line)
          lower = lower && !(c >= 'A' && c <= 'Z') && c != ' ';
        previous = line;
      }
      CHECK(ordered);
      CHECK(lower);
    }
  }
}
