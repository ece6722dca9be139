#include "shipped_lists.hpp"

#include "core/risk/random.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

using namespace mailassay::core::risk;
using mailassay::tests::read_risk_file;
using mailassay::tests::shipped_lists;

namespace {

// Splits a list into every fifth entry (held out) and the rest (training).
void split(const std::string& text, std::string& train,
           std::vector<std::string>& held_out) {
  std::size_t i = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    auto line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#')
      continue;
    if (i++ % 5 == 0) {
      held_out.push_back(line);
    } else {
      train += line;
      train += '\n';
    }
  }
}

} // namespace

TEST_SUITE("core.risk.random") {
  TEST_CASE("does not flag real names from any language") {
    const auto& l = shipped_lists();
    // Names with long consonant clusters, few vowels, initials and years,
    // from Slavic, Vietnamese, Chinese, Armenian, Welsh, Yoruba, Nordic,
    // Germanic, Celtic, Arabic, Indian, Turkish, Greek, Georgian, Hungarian,
    // Finnish, Korean, Japanese, Hawaiian, Basque and Dutch naming.
    constexpr std::string_view names[] = {"krzysztof.szczepanski",
                                          "nguyen.thi",
                                          "tkachenko",
                                          "mkrtchyan",
                                          "j.smith1987",
                                          "a.b.c",
                                          "xu.li",
                                          "schwarzkopf",
                                          "ng",
                                          "llewellyn",
                                          "oyelaran",
                                          "bjorn.strom",
                                          "wojciech.brzeczyszczykiewicz",
                                          "grzegorz.przybylski",
                                          "zbigniew",
                                          "szymon.chrzanowski",
                                          "dvorak",
                                          "vrchlicky",
                                          "strnad",
                                          "krk",
                                          "hrvoje.brkljacic",
                                          "zdravko",
                                          "tran.van.duc",
                                          "pham.thi.huong",
                                          "nguyen_van_anh",
                                          "zhang.wei",
                                          "zhou.xq",
                                          "qiu.xiaoming",
                                          "xie.jun",
                                          "ohanyan",
                                          "hovhannisyan",
                                          "gwynfor",
                                          "rhys.ap.gruffydd",
                                          "dafydd",
                                          "iorwerth",
                                          "oluwaseun",
                                          "chukwuemeka",
                                          "adebayo.ogunleye",
                                          "ngozi",
                                          "mbappe",
                                          "nkosazana",
                                          "sjostrand",
                                          "bjarne.stroustrup",
                                          "hjalmar",
                                          "ljungqvist",
                                          "thorsdottir",
                                          "siobhan.ni.bhriain",
                                          "caoimhe",
                                          "niamh",
                                          "aoife",
                                          "muhammad.abdulrahman",
                                          "al-khwarizmi",
                                          "srinivasan",
                                          "venkataraman",
                                          "subramanyam",
                                          "lakshmi1990",
                                          "yilmaz",
                                          "ozturk",
                                          "cagatay",
                                          "papadopoulos",
                                          "tsitsipas",
                                          "mamardashvili",
                                          "jghenti",
                                          "szekely",
                                          "gyorgy",
                                          "nyiregyhazi",
                                          "jarvinen",
                                          "hamalainen",
                                          "kim.minjun",
                                          "park.jiwoo",
                                          "takahashi",
                                          "tsuyoshi",
                                          "kalaniopua",
                                          "aitzol",
                                          "goikoetxea",
                                          "van.der.berg",
                                          "jsmith",
                                          "mjones",
                                          "jpmorgan",
                                          "kwright",
                                          "JohnSmith",
                                          "Mary.OBrien",
                                          "AnnaMariaDeLaCruz",
                                          "john.doe+newsletter",
                                          "m.mueller",
                                          "schroeder",
                                          "fitzgerald",
                                          "kowalczyk",
                                          "przemyslaw",
                                          "nowicki",
                                          "dzhokhar",
                                          "zhukov",
                                          "shcherbakov",
                                          "yevgeny",
                                          "khrushchev",
                                          "tchaikovsky",
                                          "hnatyshyn",
                                          "volodymyr",
                                          "olha.kravchuk",
                                          "mzwandile",
                                          "tshabalala",
                                          "nkrumah",
                                          "chidi",
                                          "uchenna",
                                          "li",
                                          "wu",
                                          "ho",
                                          "o",
                                          "bo.xu",
                                          "lu.ng"};
    for (auto name : names) {
      CAPTURE(name);
      auto v = random_local_part(l, name);
      CHECK_FALSE(v.is_random);
      CHECK(v.score < 0.5);
    }
  }

  TEST_CASE("flags machine-made and mashed local parts") {
    const auto& l = shipped_lists();
    constexpr std::string_view machine[] = {
        "xkq7zv9pw",
        "asdfghjkl",
        "qwertyuiop",
        "8f14e45fceea167a",
        "550e8400-e29b-41d4-a716-446655440000",
        "dGhpcyBpcyBiYXNl",
        "zxcvbnm123",
        "a8sd7f6as8d7f",
        "5d41402abc4b2a76b9719d911017c592",
        "e3b0c44298fc1c14",
        "9f86d081884c7d65",
        "c4ca4238a0b92382",
        "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        "aGVsbG8gd29ybGQh",
        "U29tZVJhbmRvbVRleHQ",
        "bWFpbGFzc2F5IHRlc3Q",
        "qwerty",
        "asdfgh",
        "zxcvbn",
        "qazwsxedc",
        "poiuytrewq",
        "lkjhgfdsa",
        "mnbvcxz",
        "xkcdqzpv",
        "bcdfghjklm",
        "zzqxjkvw",
        "wqxzrtplk",
        "jxqzvbnw",
        "q8w7e6r5t4",
        "a1b2c3d4e5",
        "x9y8z7w6",
        "user8f3k2j9d",
        "tmp4x8q2z7",
        "r4nd0m5tr1ng",
        "kxjwqzpr.vbnmx",
        "john.xkqzvpwj",
        "hjkhjkhjkl",
        "sdfsdfsdf",
        "x83719204k",
        "k29384756123q"};
    for (auto s : machine) {
      CAPTURE(s);
      auto v = random_local_part(l, s);
      CHECK(v.is_random);
      CHECK(v.score >= 0.5);
      CHECK(v.reason != random_reason::none);
    }
  }

  TEST_CASE("names the detector that fired") {
    const auto& l = shipped_lists();
    struct row {
      std::string_view local;
      random_reason reason;
    };
    constexpr row rows[] = {
        {"550e8400-e29b-41d4-a716-446655440000", random_reason::uuid},
        {"8f14e45fceea167a", random_reason::hex},
        {"dGhpcyBpcyBiYXNl", random_reason::base64},
        {"asdfghjkl", random_reason::keyboard_walk},
        {"a8sd7f6as8d7f", random_reason::digit_mix},
        {"xkcdqzpv", random_reason::unlikely_letters},
        {"maria", random_reason::none},
    };
    for (auto r : rows) {
      CAPTURE(r.local);
      CHECK(random_local_part(l, r.local).reason == r.reason);
    }
    CHECK(to_string(random_reason::keyboard_walk) == "keyboard_walk");
  }

  TEST_CASE("ignores the tag and digit-only local parts") {
    const auto& l = shipped_lists();
    CHECK_FALSE(random_local_part(l, "anna+x8f7q2z9k4").is_random);
    // QQ numbers and phone numbers are how millions of people sign up.
    CHECK_FALSE(random_local_part(l, "123456789").is_random);
    CHECK_FALSE(random_local_part(l, "15012345678").is_random);
    CHECK_FALSE(random_local_part(l, "").is_random);
  }

  TEST_CASE("does not flag names the model never saw") {
    // docs/random-detection.md: train on four fifths of the name and word
    // lists, judge the held-out fifth of the names.
    std::string first, last, words;
    std::vector<std::string> held_out;
    std::vector<std::string> unused;
    split(read_risk_file("first_names"), first, held_out);
    split(read_risk_file("last_names"), last, held_out);
    split(read_risk_file("common_words"), words, unused);
    list_texts t;
    t.first_names = first;
    t.last_names = last;
    t.common_words = words;
    auto l = lists_from_texts(t);
    std::size_t flagged = 0;
    double highest = 0;
    for (const auto& name : held_out) {
      auto v = random_local_part(l, name);
      flagged += v.is_random;
      highest = std::max(highest, v.score);
    }
    CHECK(held_out.size() > 15000);
    CHECK(flagged == 0);
    CHECK(highest < 0.3);
  }

  TEST_CASE("an untrained model judges only the pattern detectors") {
    lists empty;
    CHECK_FALSE(random_local_part(empty, "xkcdqzpv").is_random);
    CHECK(random_local_part(empty, "asdfghjkl").is_random);
    CHECK(random_local_part(empty, "8f14e45fceea167a").is_random);
  }
}
