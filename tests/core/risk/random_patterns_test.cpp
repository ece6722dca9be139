// Random detection on examples written for issue #19
// (docs/random-detection.md): keyboard mash made of a repeated chunk, row
// walks, short machine tokens of letters and digits, against names of many
// languages, initials and years. The measured rates are asserted too: at least
// 90 % of the mash caught, at most 2 of the people flagged (the issue's
// targets).

#include "shipped_lists.hpp"

#include "core/risk/random.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <iterator>
#include <string_view>

using namespace mailassay::core::risk;
using mailassay::tests::shipped_lists;

namespace {

struct mash_row {
  std::string_view local;
  random_reason reason;
};

// Mash, each with the detector that names it (the model wins when it is
// surer than a pattern: `xyzxyzxyz` reads as no language at all).
constexpr mash_row caught[] = {
    {"xyzxyzxyz", random_reason::unlikely_letters},
    {"abababab", random_reason::repetition},
    {"abcabcabc", random_reason::repetition},
    {"qweqweqwe", random_reason::repetition},
    {"lolololo", random_reason::repetition},
    {"hahahaha", random_reason::repetition},
    {"ababab", random_reason::repetition},
    {"zxzxzx", random_reason::unlikely_letters},
    {"jajajaja", random_reason::repetition},
    {"kekeke", random_reason::repetition},
    {"dadadada", random_reason::repetition},
    {"asdasdasd", random_reason::repetition},
    {"hehehe", random_reason::repetition},
    {"blablabla", random_reason::repetition},
    {"xoxoxo", random_reason::repetition},
    {"testtesttest", random_reason::repetition},
    {"aaaaaa", random_reason::repetition},
    {"zzzzzzz", random_reason::unlikely_letters},
    {"mmmmmm", random_reason::repetition},
    {"ioioio", random_reason::repetition},
    {"ujujuj", random_reason::repetition},
    {"fgfgfg", random_reason::unlikely_letters},
    {"tytyty", random_reason::repetition},
    {"bnmbnm", random_reason::keyboard_walk},
    {"asdf", random_reason::keyboard_walk},
    {"qwer", random_reason::keyboard_walk},
    {"zxcv", random_reason::keyboard_walk},
    {"hjkl", random_reason::keyboard_walk},
    {"uiop", random_reason::keyboard_walk},
    {"qwertz", random_reason::keyboard_walk},
    {"wxcvbn", random_reason::keyboard_walk},
    {"qsdfgh", random_reason::keyboard_walk},
    {"qweasdzxc", random_reason::unlikely_letters},
    {"qweasd", random_reason::keyboard_walk},
    {"asdzxc", random_reason::keyboard_walk},
    {"ewqdsa", random_reason::keyboard_walk},
    {"rewq", random_reason::keyboard_walk},
    {"fdsa", random_reason::keyboard_walk},
    {"lkjh", random_reason::keyboard_walk},
    {"poiu", random_reason::keyboard_walk},
    {"qwerasdf", random_reason::keyboard_walk},
    {"zxcvasdf", random_reason::keyboard_walk},
    {"asdfjkl", random_reason::keyboard_walk},
    {"jkljkl", random_reason::keyboard_walk},
    {"asdfasdf", random_reason::keyboard_walk},
    {"yxcvbnm", random_reason::unlikely_letters},
    {"qazxsw", random_reason::unlikely_letters},
    {"x7k9", random_reason::digit_mix},
    {"k3j8", random_reason::digit_mix},
    {"a1b2", random_reason::digit_mix},
    {"q2w3", random_reason::digit_mix},
    {"zk9x", random_reason::digit_mix},
    {"tx9q", random_reason::digit_mix},
    {"u8k2p", random_reason::digit_mix},
    {"4xk9", random_reason::digit_mix},
    {"j7h3", random_reason::digit_mix},
    {"b4kq", random_reason::digit_mix},
    {"9xq2", random_reason::digit_mix},
    {"xq7z", random_reason::digit_mix},
    {"h6g2t", random_reason::digit_mix},
    {"p9z8", random_reason::digit_mix},
    {"3kq7tz", random_reason::digit_mix},
    {"kq72x", random_reason::digit_mix},
    {"w9e8", random_reason::digit_mix},
    {"z1x2", random_reason::digit_mix},
    {"x7k9m", random_reason::digit_mix},
    {"qx5z", random_reason::digit_mix},
    {"vb8n", random_reason::digit_mix},
    {"k9zq", random_reason::digit_mix},
    {"7hx3k", random_reason::digit_mix},
    {"m2p7", random_reason::digit_mix},
};
// Known misses, kept so the rate below is honest: AZERTY rows are not
// modelled (`azer` and `lazer` are names), four keys from the middle of a
// row spell names (`trew`, `wert`), and `wasd` crosses rows.
constexpr std::string_view missed[] = {"azerty", "ghjk", "dfgh", "wasd"};

// People: Polish, Vietnamese, Yoruba, Hausa/Igbo, Chinese, Hungarian,
// Russian, Japanese, Nordic and Welsh names, initials, names with years,
// and doubled names (`lulu`, `xiaoxiao`) that a repetition rule must spare.
constexpr std::string_view people[] = {
    "grzegorz.brzeczek",
    "agnieszka.wojcik",
    "malgorzata.szczesniak",
    "przemek.zielinski",
    "zdzislaw.krol",
    "wladyslaw.szpilman",
    "jedrzej",
    "szczepan.mroz",
    "katarzyna.chmielewska",
    "wojtek.gwizdz",
    "nguyen.van.thanh",
    "tran.thi.ngoc",
    "pham.quoc.huy",
    "le.thu.trang",
    "hoang.minh.tuan",
    "vu.duc.nghia",
    "dang.thi.yen",
    "nguyenthuy",
    "ngoc.anh",
    "trinh.cong.son",
    "olufemi.adeyemi",
    "oluwatobiloba",
    "adewale",
    "folasade.ogunbiyi",
    "ayodeji",
    "olumide",
    "titilayo",
    "babatunde.fashola",
    "omotola",
    "ifeoluwa",
    "temitope.ajayi",
    "oladipupo",
    "j.k.rowling",
    "jrr.tolkien",
    "a.j.smith",
    "jfk",
    "mj",
    "tk.lee",
    "c.s.lewis",
    "ej",
    "maria1985",
    "tomasz.nowak1979",
    "nguyen2001",
    "ade1990",
    "kwame88",
    "ivan_1975",
    "li.na2003",
    "anna.k1999",
    "xiaoxiao",
    "tingting.wang",
    "jingjing.li",
    "weiwei",
    "kekoa",
    "nanami",
    "lulu",
    "coco",
    "mimi",
    "jojo",
    "dede",
    "keke",
    "bebe",
    "nana",
    "sasha.petrov",
    "dzmitry",
    "ksenia",
    "svetlana.kuznetsova",
    "mamadou.diallo",
    "aissatou",
    "kwabena",
    "nnamdi",
    "chinedu",
    "eszter",
    "gyula",
    "phuong",
    "quynh",
    "huynh",
    "duong",
    "thuy.tien",
    "xuan",
    "bui.thi.thu",
    "yuki.tanaka",
    "haruto",
    "sven.olsson",
    "aleksandr",
    "tjarda",
    "rhodri",
};

// People who add numbers: a year, a count, initials, a short word.
constexpr std::string_view people_with_digits[] = {
    "maria1985",   "tomasz.nowak1979",
    "nguyen2001",  "ade1990",
    "kwame88",     "ivan_1975",
    "li.na2003",   "anna.k1999",
    "me2you",      "john4u",
    "4ever",       "mj23",
    "lebron23",    "cr7",
    "tk421",       "b2b",
    "jdoe2",       "olu.2020",
    "tran99",      "bjorn.s1984",
    "k.kowalski7", "2pac",
    "blink182",    "ab12",
};

} // namespace

TEST_SUITE("core.risk.random.patterns") {
  TEST_CASE("catches repeated chunks, row walks and short machine tokens") {
    const auto& l = shipped_lists();
    for (const auto& r : caught) {
      CAPTURE(r.local);
      auto v = random_local_part(l, r.local);
      CHECK(v.is_random);
      CHECK(v.reason == r.reason);
    }
    for (auto s : missed) {
      CAPTURE(s);
      CHECK_FALSE(random_local_part(l, s).is_random);
    }
    auto total = std::size(caught) + std::size(missed);
    MESSAGE("mash caught: " << std::size(caught) << " of " << total);
    CHECK(std::size(caught) * 10 >= total * 9);
  }

  TEST_CASE("passes people of every language, with initials and years") {
    const auto& l = shipped_lists();
    std::size_t flagged = 0;
    for (auto s : people) {
      CAPTURE(s);
      auto v = random_local_part(l, s);
      CHECK_FALSE(v.is_random);
      flagged += v.is_random;
    }
    for (auto s : people_with_digits) {
      CAPTURE(s);
      auto v = random_local_part(l, s);
      CHECK_FALSE(v.is_random);
      flagged += v.is_random;
    }
    CHECK(std::size(people) >= 50);
    CHECK(flagged <= 2);
  }

  TEST_CASE("a chunk must come back three times, a letter four") {
    const auto& l = shipped_lists();
    struct row {
      std::string_view local;
      bool random;
    };
    constexpr row rows[] = {
        {"nana", false},  {"xiaoxiao", false}, {"bebe", false},
        {"nanana", true}, {"abcabcab", false}, {"zzz", false},
        {"zzzz", true},   {"ab.ab.ab", false}, {"abab1", false},
        {"x7x7x7", true}, {"121212", false},   {"qwe123qwe123qwe123", true},
    };
    for (const auto& r : rows) {
      CAPTURE(r.local);
      CHECK(random_local_part(l, r.local).is_random == r.random);
    }
  }

  TEST_CASE("a lone four-key walk counts only from the end of a row") {
    const auto& l = shipped_lists();
    struct row {
      std::string_view local;
      bool random;
    };
    constexpr row rows[] = {
        {"asdf", true},  {"vbnm", true},  {"mnbv", true},       {"poiu", true},
        {"trew", false}, {"wert", false}, {"erty", false},      {"sasa", false},
        {"asd", false},  {"jkl", false},  {"asdf.jones", true},
    };
    for (const auto& r : rows) {
      CAPTURE(r.local);
      CHECK(random_local_part(l, r.local).is_random == r.random);
    }
  }
}
