// Risk-signal throughput: every risk check (disposable, free provider,
// role, random, typo suggestion, first name) over 200000 deterministic
// generated local part/domain pairs on one core.
//
//   risk_bench [SOURCE_DIR]   (default: MAILASSAY_SOURCE_DIR, then the
//                              source tree the binary was built from)

#include "bench_support.hpp"
#include "risk_files.hpp"

#include "core/risk/risk.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifndef MAILASSAY_SOURCE_DIR
#define MAILASSAY_SOURCE_DIR "."
#endif

namespace risk = mailassay::core::risk;

namespace {

using mailassay::bench::entries;
using mailassay::bench::read_file;
using generator = mailassay::bench::xorshift;

constexpr std::size_t address_count = 200000;
constexpr int passes = 7;

struct address {
  std::string local;
  std::string domain;
};

std::vector<address> generate(const std::vector<std::string>& first,
                              const std::vector<std::string>& last,
                              const std::vector<std::string>& roles,
                              const std::vector<std::string>& free,
                              const std::vector<std::string>& disposable,
                              const std::vector<std::string>& words) {
  generator g;
  const std::vector<std::string> typos = {
      "gmial.com", "gmail.con",  "hotmial.com", "yaho.com",    "outlok.com",
      "gmai.com",  "yahooo.com", "icloud.cmo",  "example.nett"};
  const std::vector<std::string> tlds = {"com", "net", "org",  "de",    "co.uk",
                                         "io",  "fr",  "shop", "com.br"};
  auto random_string = [&](std::size_t n, bool digits) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) {
      auto r = g.below(digits ? 36 : 26);
      s.push_back(r < 26 ? static_cast<char>('a' + r)
                         : static_cast<char>('0' + r - 26));
    }
    return s;
  };
  std::vector<address> out;
  out.reserve(address_count);
  for (std::size_t i = 0; i < address_count; ++i) {
    address a;
    switch (g.below(10)) {
      case 0: a.local = g.pick(roles); break;
      case 1: a.local = random_string(6 + g.below(10), true); break;
      case 2:
        a.local = g.pick(first) + std::to_string(1950 + g.below(60));
        break;
      case 3: a.local = g.pick(first).substr(0, 1) + g.pick(last); break;
      case 4: a.local = g.pick(first) + "_" + g.pick(last); break;
      default: a.local = g.pick(first) + "." + g.pick(last); break;
    }
    if (g.below(20) == 0)
      a.local += "+news";
    switch (g.below(10)) {
      case 0: a.domain = g.pick(disposable); break;
      case 1: a.domain = g.pick(typos); break;
      case 2:
      case 3:
      case 4: a.domain = g.pick(free); break;
      default: a.domain = g.pick(words) + "." + g.pick(tlds); break;
    }
    out.push_back(std::move(a));
  }
  return out;
}

} // namespace

int main(int argc, char** argv) {
  auto root = mailassay::bench::source_root(argc, argv, MAILASSAY_SOURCE_DIR);
  auto files = mailassay::bench::risk_files::read(root);

  auto t0 = std::chrono::steady_clock::now();
  auto lists = risk::lists_from_texts(files.texts());
  std::chrono::duration<double> load = std::chrono::steady_clock::now() - t0;

  auto addresses =
      generate(entries(files.first_names), entries(files.last_names),
               entries(files.roles), entries(files.free_providers),
               entries(files.disposable), entries(files.common_words));

  std::size_t flagged = 0;
  auto all = mailassay::bench::best_seconds(passes, [&] {
    flagged = 0;
    for (const auto& a : addresses) {
      auto r = risk::assess(lists, a.local, a.domain, true);
      flagged += r.disposable + r.free_provider + r.role.has_value() +
                 r.random.is_random + r.suggestion.has_value() +
                 r.first_name.has_value();
    }
  });
  std::size_t flagged_checks = 0;
  auto checks = mailassay::bench::best_seconds(passes, [&] {
    flagged_checks = 0;
    for (const auto& a : addresses) {
      auto r = risk::assess(lists, a.local, a.domain, false);
      flagged_checks += r.disposable + r.free_provider + r.role.has_value() +
                        r.random.is_random + r.suggestion.has_value();
    }
  });
  std::size_t sink = 0;
  auto each = [&](const char* name, auto&& check) {
    auto s = mailassay::bench::best_seconds(passes, [&] {
      for (const auto& a : addresses)
        sink += check(a);
    });
    std::printf("  %-18s %7.1f ns/address\n", name, s * 1e9 / addresses.size());
  };
  std::printf("risk lists parsed and model trained in %.1f ms\n",
              load.count() * 1e3);
  std::printf("%zu addresses, all risk checks and enrichment: %.2f million "
              "addresses/s (%.1f ns/address, %zu signals raised)\n",
              addresses.size(), addresses.size() / all / 1e6,
              all * 1e9 / addresses.size(), flagged);
  std::printf("without the first-name enrichment: %.2f million addresses/s "
              "(%.1f ns/address)\n",
              addresses.size() / checks / 1e6, checks * 1e9 / addresses.size());
  std::printf("each check alone (own pass over the addresses):\n");
  each("is_disposable",
       [&](const address& a) { return risk::is_disposable(lists, a.domain); });
  each("is_free_provider", [&](const address& a) {
    return risk::is_free_provider(lists, a.domain);
  });
  each("role_of", [&](const address& a) {
    return risk::role_of(lists, a.local).has_value();
  });
  each("random_local_part", [&](const address& a) {
    return risk::random_local_part(lists, a.local).is_random;
  });
  each("suggest_domain", [&](const address& a) {
    return risk::suggest_domain(lists, a.domain).has_value();
  });
  each("first_name", [&](const address& a) {
    return risk::first_name(lists, a.local).has_value();
  });
  std::printf("signals raised per pass: %zu without enrichment\n",
              flagged_checks);
  return sink == 0 ? 1 : 0;
}
