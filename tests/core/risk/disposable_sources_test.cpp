// Disposable domains on examples written for issue #19 (docs/risk-data.md):
// the forwarding and alias services people use as throwaway addresses
// (Firefox Relay, SimpleLogin, addy.io, 33mail, spamgourmet) are disposable
// through the broad upstream list (mailchecker); mailbox providers,
// universities and companies are not, whatever that list says.

#include "shipped_lists.hpp"

#include "core/risk/domain.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

using namespace mailassay::core::risk;
using mailassay::tests::read_risk_file;
using mailassay::tests::shipped_lists;

namespace {

// Alias and forwarding services first, then classic temporary inboxes.
constexpr std::string_view disposable[] = {
    "mozmail.com",       "relay.firefox.com", "simplelogin.com",
    "simplelogin.co",    "slmail.me",         "aleeas.com",
    "anonaddy.me",       "anonaddy.com",      "addy.io",
    "33mail.com",        "jdoe.33mail.com",   "spamgourmet.com",
    "spamgourmet.net",   "erine.email",       "sneakemail.com",
    "mailinator.com",    "eu.mailinator.com", "guerrillamail.com",
    "10minutemail.com",  "yopmail.com",       "temp-mail.org",
    "trashmail.com",     "maildrop.cc",       "getnada.com",
    "sharklasers.com",   "dispostable.com",   "mailnesia.com",
    "throwawaymail.com", "tempmail.plus",     "emailondeck.com",
};

// Long-lived mailboxes (free providers, paid providers, ISPs), real
// institutions a broad list names by mistake (nus.edu.sg, dr.com, tom.com)
// and companies.
constexpr std::string_view legitimate[] = {
    "gmail.com",      "outlook.com",    "hotmail.com",  "yahoo.com",
    "icloud.com",     "me.com",         "aol.com",      "protonmail.com",
    "proton.me",      "pm.me",          "tutanota.com", "fastmail.com",
    "hey.com",        "zoho.com",       "gmx.net",      "gmx.de",
    "web.de",         "mail.com",       "email.com",    "yandex.ru",
    "mail.ru",        "qq.com",         "163.com",      "naver.com",
    "orange.fr",      "free.fr",        "libero.it",    "t-online.de",
    "btinternet.com", "comcast.net",    "posteo.de",    "mailbox.org",
    "runbox.com",     "hushmail.com",   "tom.com",      "sina.com",
    "rediffmail.com", "seznam.cz",      "wp.pl",        "o2.pl",
    "ukr.net",        "abv.bg",         "inbox.lv",     "bluewin.ch",
    "telenet.be",     "ziggo.nl",       "shaw.ca",      "bigpond.com",
    "mit.edu",        "ox.ac.uk",       "nus.edu.sg",   "harvard.edu",
    "microsoft.com",  "apple.com",      "github.com",   "ibm.com",
    "siemens.de",     "bbc.co.uk",      "nytimes.com",  "gov.uk",
    "europa.eu",      "consultant.com", "dr.com",
};

} // namespace

TEST_SUITE("core.risk.disposable.sources") {
  TEST_CASE("alias services and temporary inboxes are disposable") {
    const auto& l = shipped_lists();
    std::size_t caught = 0;
    for (auto d : disposable) {
      CAPTURE(d);
      CHECK(is_disposable(l, d));
      caught += is_disposable(l, d);
    }
    MESSAGE("disposable caught: " << caught << " of " << std::size(disposable));
  }

  TEST_CASE("mailbox providers, institutions and companies are not") {
    const auto& l = shipped_lists();
    for (auto d : legitimate) {
      CAPTURE(d);
      CHECK_FALSE(is_disposable(l, d));
    }
    CHECK(std::size(legitimate) >= 50);
  }

  TEST_CASE("the shipped list credits its sources and keeps their rules") {
    auto text = read_risk_file("disposable");
    CHECK(text.find("disposable-email-domains-js and mailchecker") !=
          std::string::npos);
    // scripts/refresh-risk-data drops the broad list's entries under
    // academic and government names; the curated list names none either.
    std::size_t start = 0;
    std::size_t institutional = 0;
    while (start < text.size()) {
      auto end = text.find('\n', start);
      if (end == std::string::npos)
        end = text.size();
      std::string_view line{text.data() + start, end - start};
      start = end + 1;
      for (std::string_view suffix : {".edu", ".gov", ".mil", ".ac.uk"})
        if (line.size() > suffix.size() &&
            line.substr(line.size() - suffix.size()) == suffix)
          ++institutional;
    }
    CHECK(institutional == 0);
  }
}
