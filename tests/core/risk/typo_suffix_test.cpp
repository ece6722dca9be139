// Typo suggestions on examples written for issue #19 (docs/scoring.md,
// core/risk/typo.hpp): a major provider's name with a mistyped suffix gets
// its provider; real domains near a giant get nothing. The measured rates
// are asserted too: at least 95 % of the typos right, at most one
// suggestion over 50 legitimate domains (the targets).

#include "shipped_lists.hpp"

#include "core/risk/typo.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <iterator>
#include <string_view>

using namespace mailassay::core::risk;
using mailassay::tests::shipped_lists;

namespace {

struct row {
  std::string_view typed;
  std::string_view meant;
};

// Suffixes one key from .com (.cm, .om, .co, .cam) and from a country
// suffix (.co.uj, .dee, .rru), then the label and TLD typos of before.
constexpr row typos[] = {
    {"gmail.cm", "gmail.com"},
    {"gmail.om", "gmail.com"},
    {"gmail.co", "gmail.com"},
    {"yahoo.cm", "yahoo.com"},
    {"yahoo.co", "yahoo.com"},
    {"hotmail.co", "hotmail.com"},
    {"hotmail.cm", "hotmail.com"},
    {"outlook.om", "outlook.com"},
    {"icloud.co", "icloud.com"},
    {"aol.co", "aol.com"},
    {"yahoo.co.uj", "yahoo.co.uk"},
    {"hotmail.co.uj", "hotmail.co.uk"},
    {"yahoo.co.ik", "yahoo.co.uk"},
    {"btinternet.co", "btinternet.com"},
    {"gmail.con", "gmail.com"},
    {"gmail.cmo", "gmail.com"},
    {"gmail.comm", "gmail.com"},
    {"gmial.com", "gmail.com"},
    {"gmai.com", "gmail.com"},
    {"gmaill.com", "gmail.com"},
    {"gamil.com", "gmail.com"},
    {"gnail.com", "gmail.com"},
    {"hotmial.com", "hotmail.com"},
    {"hotmal.com", "hotmail.com"},
    {"homail.com", "hotmail.com"},
    {"yaho.com", "yahoo.com"},
    {"yahooo.com", "yahoo.com"},
    {"yhoo.com", "yahoo.com"},
    {"outlok.com", "outlook.com"},
    {"outllook.com", "outlook.com"},
    {"iclod.com", "icloud.com"},
    {"icoud.com", "icloud.com"},
    {"protonmial.com", "protonmail.com"},
    {"yandex.rru", "yandex.ru"},
    {"comcast.nte", "comcast.net"},
    {"verizon.nett", "verizon.net"},
    {"hotmail.co.ukk", "hotmail.co.uk"},
    {"live.comm", "live.com"},
    {"msn.ocm", "msn.com"},
    {"gmx.dee", "gmx.de"},
    {"googlemial.com", "googlemail.com"},
    {"sbcglobal.ner", "sbcglobal.net"},
    {"yahoo.frr", "yahoo.fr"},
    {"gmail.cam", "gmail.com"},
    {"outlook.cmo", "outlook.com"},
};

// Real domains: the giants themselves, their country domains (delegated
// suffixes: yahoo.co.id, hotmail.com.ar, gmx.at), providers one edit from
// a giant (gmx.com, me.com, mail.com, ymail.com), ISPs and companies.
constexpr std::string_view legitimate[] = {
    "gmx.com",
    "gmx.de",
    "gmx.net",
    "gmx.at",
    "gmx.ch",
    "gmx.fr",
    "me.com",
    "mac.com",
    "mail.com",
    "email.com",
    "ymail.com",
    "aol.com",
    "yahoo.co.jp",
    "yahoo.co.id",
    "yahoo.com.ar",
    "yahoo.com.mx",
    "yahoo.com.au",
    "yahoo.co.nz",
    "yahoo.cn",
    "yahoo.de",
    "yahoo.fr",
    "yahoo.se",
    "hotmail.com.ar",
    "hotmail.be",
    "hotmail.nl",
    "hotmail.se",
    "outlook.jp",
    "outlook.com.au",
    "live.jp",
    "live.nl",
    "live.be",
    "live.ca",
    "web.de",
    "t-online.de",
    "orange.fr",
    "free.fr",
    "laposte.net",
    "libero.it",
    "virgilio.it",
    "seznam.cz",
    "wp.pl",
    "o2.pl",
    "interia.pl",
    "mail.ru",
    "yandex.ru",
    "yandex.ua",
    "rambler.ru",
    "qq.com",
    "163.com",
    "126.com",
    "naver.com",
    "daum.net",
    "hanmail.net",
    "zoho.com",
    "zoho.eu",
    "fastmail.fm",
    "hey.com",
    "posteo.de",
    "mailbox.org",
    "protonmail.ch",
    "pm.me",
    "tutanota.de",
    "comcast.net",
    "cox.net",
    "charter.net",
    "verizon.net",
    "att.net",
    "earthlink.net",
    "juno.com",
    "btinternet.com",
    "sky.com",
    "virginmedia.com",
    "bigpond.com",
    "shaw.ca",
    "rogers.com",
    "icloud.com",
    "gmail.de",
    "mail.co",
    "gmail-support.com",
    "acme.co",
    "acme.om",
    "acme.cm",
    "acme.co.uk",
};

} // namespace

TEST_SUITE("core.risk.typo.suffix") {
  TEST_CASE("a provider's name with a mistyped suffix gets its provider") {
    const auto& l = shipped_lists();
    std::size_t right = 0;
    for (const auto& r : typos) {
      CAPTURE(r.typed);
      auto s = suggest_domain(l, r.typed);
      CHECK(s.value_or("") == r.meant);
      right += s.value_or("") == r.meant;
    }
    MESSAGE("typos right: " << right << " of " << std::size(typos));
    CHECK(right * 100 >= std::size(typos) * 95);
  }

  TEST_CASE("real domains near a giant get no suggestion") {
    const auto& l = shipped_lists();
    std::size_t suggested = 0;
    for (auto d : legitimate) {
      CAPTURE(d);
      auto s = suggest_domain(l, d);
      CHECK_FALSE(s.has_value());
      suggested += s.has_value();
    }
    CHECK(std::size(legitimate) >= 50);
    CHECK(suggested <= 1);
  }

  TEST_CASE("without the TLD list only the .com rule corrects a suffix") {
    // The country rule needs to know which TLDs are delegated; without
    // the list nothing is taken for a typo of a country suffix.
    lists empty;
    CHECK(suggest_domain(empty, "gmail.cm").value_or("") == "gmail.com");
    CHECK_FALSE(suggest_domain(empty, "yahoo.co.uj").has_value());
    CHECK_FALSE(suggest_domain(empty, "yahoo.co.id").has_value());
  }
}
