// Free-check throughput: syntax (core::syntax::parse) and syntax followed by
// every free check a default key runs (core::validation::run_free_checks:
// disposable, free provider, role, random, typo; no enrichment) over 200000
// deterministic generated addresses on ~5000 distinct domains, on one core.
// Nothing is written to disk; the risk lists are the shipped data/risk/*.txt.
//
//   free_checks_bench [SOURCE_DIR]   (default: MAILASSAY_SOURCE_DIR, then
//                                     the source tree the binary was built
//                                     from)

#include "bench_support.hpp"
#include "risk_files.hpp"

#include "core/risk/domain.hpp"
#include "core/risk/lists.hpp"
#include "core/risk/local_part.hpp"
#include "core/risk/random.hpp"
#include "core/risk/typo.hpp"
#include "core/syntax/address.hpp"
#include "core/validation/free_checks.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#ifndef MAILASSAY_SOURCE_DIR
#define MAILASSAY_SOURCE_DIR "."
#endif

namespace risk = mailassay::core::risk;
namespace syntax = mailassay::core::syntax;
namespace validation = mailassay::core::validation;

namespace {

using mailassay::bench::best_seconds;
using mailassay::bench::entries;
using mailassay::bench::read_file;
using generator = mailassay::bench::xorshift;

constexpr std::size_t address_count = 200000;
constexpr std::size_t company_domains = 4200;
constexpr int passes = 7;
// The issue's target (#3, Performance): syntax + risk checks per second.
constexpr double target = 3.5e6;

// Names beyond the ASCII-folded lists: the local parts people in many
// languages really type (RFC 6531 addresses), and transliterations.
const std::vector<std::string> utf8_first = {
    "josé",   "françois", "søren",  "łukasz",  "jürgen", "zoë",   "андрей",
    "мария",  "дмитрий",  "ελένη",  "γιώργος", "张伟",   "李娜",  "王芳",
    "さくら", "ゆうき",   "민준",   "서연",    "محمد",   "فاطمة", "राहुल",
    "प्रिया",  "אברהם",    "nguyễn", "đức",     "çağla",  "şule",  "ömer"};
const std::vector<std::string> utf8_last = {
    "müller", "garcía", "øberg",   "kowalczyk", "иванов",   "петрова",
    "παππάς", "wang",   "tanaka",  "kim",       "haddad",   "şahin",
    "nguyễn", "yılmaz", "sánchez", "dvořák",    "lindqvist"};

// Domain typos of the kind users make, most of them on big providers.
const std::vector<std::string> typo_domains = {
    "gmial.com",      "gmail.con",    "gmai.com",       "gmaill.com",
    "gnail.com",      "gmail.co",     "gmail.cmo",      "hotmial.com",
    "hotmal.com",     "hotmail.con",  "yaho.com",       "yahooo.com",
    "yahoo.cm",       "outlok.com",   "outllook.com",   "iclod.com",
    "icloud.cmo",     "aol.con",      "comcast.nte",    "verizon.nett",
    "protonmal.com",  "yandex.rru",   "live.comm",      "msn.ocm",
    "gmx.dee",        "web.dd",       "hotmail.co.ukk", "outlook.fr.",
    "googlemial.com", "sbcglobal.ner"};

const std::vector<std::string> major_domains = {
    "gmail.com",      "yahoo.com",      "hotmail.com",   "outlook.com",
    "icloud.com",     "aol.com",        "live.com",      "msn.com",
    "googlemail.com", "protonmail.com", "proton.me",     "yandex.ru",
    "mail.ru",        "gmx.de",         "web.de",        "comcast.net",
    "verizon.net",    "att.net",        "sbcglobal.net", "me.com",
    "qq.com",         "163.com",        "naver.com",     "orange.fr",
    "free.fr",        "libero.it",      "t-online.de",   "yahoo.co.uk",
    "yahoo.fr",       "hotmail.co.uk",  "hotmail.fr",    "outlook.de",
    "btinternet.com", "wanadoo.fr",     "ymail.com",     "fastmail.com"};

// Internationalised domains: rare, and the expensive path (IDNA2008).
const std::vector<std::string> idn_domains = {
    "münchen.de",   "bücher.example.ch", "例え.jp",
    "пример.рф",    "españa.es",         "straße.de",
    "ñandú.com.ar", "xn--mnchen-3ya.de", "δοκιμή.gr",
    "中文.cn"};

// Random-looking local parts, the kind that sign-up bots and generators
// produce: uuids, hex, base64, keyboard mashes.
std::string machine_local(generator& g) {
  static constexpr std::string_view hex = "0123456789abcdef";
  static constexpr std::string_view b64 =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static const std::vector<std::string> walks = {
      "asdfgh", "qwerty123", "zxcvbn", "qazwsx", "poiuyt", "asdasd", "sdfghj"};
  std::string s;
  switch (g.below(5)) {
    case 0:
      for (int i = 0; i < 36; ++i)
        s += (i == 8 || i == 13 || i == 18 || i == 23) ? '-' : hex[g.below(16)];
      break;
    case 1:
      for (std::size_t i = 0, n = 12 + g.below(20); i < n; ++i)
        s += hex[g.below(16)];
      break;
    case 2:
      for (std::size_t i = 0, n = 10 + g.below(10); i < n; ++i)
        s += b64[g.below(b64.size())];
      break;
    case 3: s = g.pick(walks) + std::to_string(g.below(1000)); break;
    default:
      for (std::size_t i = 0, n = 6 + g.below(8); i < n; ++i)
        s += g.percent(30) ? static_cast<char>('0' + g.below(10))
                           : static_cast<char>('a' + g.below(26));
      break;
  }
  return s;
}

std::string capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z')
    s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

struct sources {
  std::vector<std::string> first, last, words, roles, free, disposable;
};

std::string person_local(generator& g, const sources& src) {
  bool utf8 = g.percent(4);
  const auto& first = utf8 ? g.pick(utf8_first) : g.pick(src.first);
  const auto& last = utf8 ? g.pick(utf8_last) : g.pick(src.last);
  auto year = [&] { return std::to_string(1950 + g.below(60)); };
  switch (g.below(12)) {
    case 0: return first + year();
    case 1: return first.substr(0, 1) + last;
    case 2: return first + "_" + last;
    case 3: return first + "-" + last;
    case 4: return capitalised(first) + "." + capitalised(last);
    case 5: return first + std::to_string(g.below(100));
    case 6: return first + last;
    case 7: return first + "." + last + year().substr(2);
    case 8: return capitalised(first) + capitalised(last);
    case 9: return first;
    default: return first + "." + last;
  }
}

// Addresses that fail the syntax check, as forms receive them.
std::string broken(generator& g, const std::string& local,
                   const std::string& domain) {
  switch (g.below(7)) {
    case 0: return local + domain; // missing @
    case 1: return local + "@@" + domain;
    case 2: return local + ".@" + domain;
    case 3: return local + " @" + domain;
    case 4: return local + "@" + domain + ".";
    case 5: return "John Smith <" + local + "@" + domain + ">";
    default: return local + "@" + domain.substr(0, domain.find('.'));
  }
}

struct corpus {
  std::vector<std::string> addresses;
  std::size_t distinct_domains = 0;
};

corpus generate(const sources& src) {
  generator g;
  // Company domains: a word, sometimes two or a subdomain, on a spread of
  // TLDs, ccTLDs and second-level public suffixes.
  static const std::vector<std::string> tlds = {
      "com", "com", "com", "net", "org",    "de",     "co.uk", "io",
      "fr",  "nl",  "it",  "es",  "com.br", "com.au", "co.jp", "ca",
      "ch",  "se",  "pl",  "ru",  "in",     "shop",   "dev",   "edu"};
  std::vector<std::string> companies;
  std::unordered_set<std::string> seen;
  while (companies.size() < company_domains) {
    std::string d = g.pick(src.words);
    if (g.percent(20))
      d += (g.percent(50) ? "-" : "") + g.pick(src.words);
    d += "." + g.pick(tlds);
    if (g.percent(8))
      d = (g.percent(50) ? "mail." : "corp.") + d;
    if (seen.insert(d).second)
      companies.push_back(d);
  }
  std::vector<std::string> free(
      src.free.begin(),
      src.free.begin() + std::min<std::size_t>(600, src.free.size()));
  std::vector<std::string> disposable;
  for (std::size_t i = 0; i < 600 && i < src.disposable.size(); ++i)
    disposable.push_back(src.disposable[g.below(src.disposable.size())]);
  // Disposable services hand out subdomains too (`x7.mailinator.com`).
  std::vector<std::string> disposable_subdomains;
  for (std::size_t i = 0; i < 100; ++i) {
    // Built by append: GCC 12 warns falsely (-Wrestrict) on this chain of
    // operator+.
    std::string d = "x";
    d.append(std::to_string(i)).append(".").append(g.pick(disposable));
    disposable_subdomains.push_back(std::move(d));
  }

  corpus out;
  out.addresses.reserve(address_count);
  std::unordered_set<std::string> domains;
  for (std::size_t i = 0; i < address_count; ++i) {
    std::string local;
    auto kind = g.below(100);
    if (kind < 7)
      local = g.pick(src.roles);
    else if (kind < 12)
      local = machine_local(g);
    else
      local = person_local(g, src);
    if (g.percent(4))
      local += "+" + g.pick(src.words);
    if (g.percent(3))
      for (auto& c : local)
        if (c >= 'a' && c <= 'z')
          c = static_cast<char>(c - 'a' + 'A');

    std::string domain;
    auto where = g.below(1000);
    if (where < 380)
      domain = major_domains[g.skewed(major_domains.size())];
    else if (where < 480)
      domain = g.pick(free);
    else if (where < 550)
      domain = g.pick(disposable);
    else if (where < 560)
      domain = g.pick(disposable_subdomains);
    else if (where < 580)
      domain = g.pick(typo_domains);
    else if (where < 585)
      domain = g.pick(idn_domains);
    else
      domain = companies[g.skewed(companies.size())];
    domains.insert(domain); // counted before the case is changed
    if (g.percent(2))
      for (auto& c : domain)
        if (c >= 'a' && c <= 'z')
          c = static_cast<char>(c - 'a' + 'A');

    if (g.percent(2))
      out.addresses.push_back(broken(g, local, domain));
    else
      out.addresses.push_back(local + "@" + domain);
  }
  out.distinct_domains = domains.size();
  return out;
}

} // namespace

int main(int argc, char** argv) {
  auto root = mailassay::bench::source_root(argc, argv, MAILASSAY_SOURCE_DIR);
  // MAILASSAY_BENCH_PASSES=1 for a profiler run (callgrind).
  int runs = passes;
  if (const char* p = std::getenv("MAILASSAY_BENCH_PASSES"))
    runs = std::max(1, std::atoi(p));
  auto files = mailassay::bench::risk_files::read(root);

  auto t0 = std::chrono::steady_clock::now();
  auto lists = risk::lists_from_texts(files.texts());
  std::chrono::duration<double> load = std::chrono::steady_clock::now() - t0;

  sources src{entries(files.first_names),    entries(files.last_names),
              entries(files.common_words),   entries(files.roles),
              entries(files.free_providers), entries(files.disposable)};
  auto data = generate(src);
  const auto& addresses = data.addresses;
  auto n = static_cast<double>(addresses.size());

  syntax::options opts;
  syntax::parsed_address parsed;
  std::size_t valid = 0;
  auto syntax_only = best_seconds(runs, [&] {
    valid = 0;
    for (const auto& a : addresses) {
      syntax::parse(a, opts, parsed);
      valid += parsed.valid;
    }
  });

  // One memo for this thread, as the validator keeps one per thread.
  validation::domain_memo memo;
  validation::toggles defaults; // disposable, role, random on; no enrichment
  std::size_t signals = 0;
  auto with_checks = best_seconds(runs, [&] {
    signals = 0;
    for (const auto& a : addresses) {
      syntax::parse(a, opts, parsed);
      auto c = validation::run_free_checks(lists, parsed, defaults, memo);
      signals += c.disposable.value_or(false) + c.free_provider +
                 c.role_account.value_or(false) +
                 (c.random && c.random->is_random) +
                 c.suggested_domain.has_value();
    }
  });

  validation::toggles enriched;
  enriched.enrichment = true;
  std::size_t names = 0;
  auto with_enrichment = best_seconds(runs, [&] {
    names = 0;
    for (const auto& a : addresses) {
      syntax::parse(a, opts, parsed);
      auto c = validation::run_free_checks(lists, parsed, enriched, memo);
      names += c.first_name.has_value();
    }
  });

  auto rate = [&](double s) { return n / s / 1e6; };
  auto ns = [&](double s) { return s * 1e9 / n; };
  std::printf("risk lists parsed and model trained in %.1f ms\n",
              load.count() * 1e3);
  std::printf("%zu addresses, %zu distinct domains, %zu valid; best of %d "
              "passes, thread CPU time, one core\n",
              addresses.size(), data.distinct_domains, valid, runs);
  std::printf("(a) syntax only:                   %6.2f million addresses/s "
              "(%5.1f ns/address)\n",
              rate(syntax_only), ns(syntax_only));
  std::printf("(b) syntax + free checks:          %6.2f million addresses/s "
              "(%5.1f ns/address, %zu signals raised)\n",
              rate(with_checks), ns(with_checks), signals);
  std::printf("    free checks alone, by difference: %.1f ns/address\n",
              ns(with_checks) - ns(syntax_only));
  std::printf("(c) (b) + first-name enrichment:   %6.2f million addresses/s "
              "(%5.1f ns/address, %zu first names)\n",
              rate(with_enrichment), ns(with_enrichment), names);
  // Where the time of (b) goes: each risk function alone over the parts
  // of the valid addresses (own pass, so each has the caches to itself).
  struct parts {
    std::string local, domain;
  };
  std::vector<parts> valid_parts;
  for (const auto& a : addresses) {
    syntax::parse(a, opts, parsed);
    if (parsed.valid && !parsed.ip_literal)
      valid_parts.push_back({parsed.local_part, parsed.ascii_domain});
  }
  std::size_t sink = 0;
  auto each = [&](const char* name, auto&& check) {
    auto s = best_seconds(runs, [&] {
      for (const auto& a : valid_parts)
        sink += check(a);
    });
    std::printf("    %-18s %6.1f ns/valid address\n", name,
                s * 1e9 / valid_parts.size());
  };
  std::printf("    each risk check alone:\n");
  each("is_disposable",
       [&](const parts& a) { return risk::is_disposable(lists, a.domain); });
  each("is_free_provider",
       [&](const parts& a) { return risk::is_free_provider(lists, a.domain); });
  each("role_of", [&](const parts& a) {
    return risk::role_of(lists, a.local).has_value();
  });
  each("random_local_part", [&](const parts& a) {
    return risk::random_local_part(lists, a.local).is_random;
  });
  each("suggest_domain", [&](const parts& a) {
    return risk::suggest_domain(lists, a.domain).has_value();
  });
  std::printf("(b) / target %.1f million/s: %.2f (%s)\n", target / 1e6,
              n / with_checks / target,
              n / with_checks >= target ? "met" : "NOT met");
  return valid == 0 || sink == 0 ? 1 : 0;
}
