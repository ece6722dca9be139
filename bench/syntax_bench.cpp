// Throughput of core::syntax::parse over 200000 deterministically generated
// addresses (~5000 domains, a realistic mix of shapes plus a few invalid,
// IDN, quoted and literal ones). Prints addresses/s on one thread.
//
//   syntax_bench [passes]
#include "bench_support.hpp"

#include "core/syntax/address.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace mailassay::core::syntax;

using rng = mailassay::bench::splitmix;

constexpr std::string_view first_names[] = {
    "john",  "maria", "wei",   "olga",      "ahmed",     "sophie",
    "lukas", "aiko",  "pedro", "fatma",     "ngozi",     "james",
    "anna",  "li",    "jose",  "priya",     "mkrtchyan", "zbigniew",
    "kwame", "ines",  "yuki",  "oleksandr", "chloe"};
constexpr std::string_view last_names[] = {
    "smith",  "garcia", "wang",    "ivanova", "hassan", "martin",   "muller",
    "tanaka", "silva",  "yilmaz",  "okafor",  "brown",  "kowalski", "nguyen",
    "lopez",  "patel",  "schmidt", "dubois",  "rossi"};
constexpr std::string_view providers[] = {
    "gmail.com",  "yahoo.com", "outlook.com", "hotmail.com",
    "icloud.com", "aol.com",   "gmx.de",      "web.de",
    "mail.ru",    "yandex.ru", "qq.com",      "proton.me"};
constexpr std::string_view tlds[] = {"com", "net", "org", "de",     "co.uk",
                                     "fr",  "io",  "nl",  "com.br", "jp"};
constexpr std::string_view words[] = {
    "acme",  "global", "tech", "data",  "north", "blue",  "river", "stone",
    "cloud", "media",  "labs", "works", "prime", "green", "solar", "metro"};
constexpr std::string_view odd[] = {"john..doe@acme.com",
                                    "john doe@acme.com",
                                    "@acme.com",
                                    "john@acme",
                                    "john@acme..com",
                                    "John <john@acme.com>",
                                    "\"j.doe\"@acme.com",
                                    "jose@[192.0.2.1]",
                                    "pele@b\xc3\xbc"
                                    "cher.de",
                                    "a@xn--bcher-kva.de",
                                    "j\xc3\xb6rg@m\xc3\xbcnchen.de",
                                    "a@\xef\xbd\x85xample.com",
                                    "x@domain.test",
                                    "a@xn--zz.com"};

std::vector<std::string> make_domains(rng& r, std::size_t n) {
  std::vector<std::string> out(std::begin(providers), std::end(providers));
  while (out.size() < n) {
    std::string d{r.pick(words)};
    d += r.below(2) ? "-" : "";
    d += r.pick(words);
    if (r.below(4) == 0)
      d = "mail." + d;
    d += '.';
    d += r.pick(tlds);
    out.push_back(std::move(d));
  }
  return out;
}

std::string make_address(rng& r, const std::vector<std::string>& domains) {
  if (r.below(100) < 3)
    return std::string{r.pick(odd)};
  std::string a;
  auto first = r.pick(first_names);
  auto last = r.pick(last_names);
  switch (r.below(6)) {
    case 0: a.append(first).append(".").append(last); break;
    case 1: a.append(first).append("_").append(last); break;
    case 2:
      a.append(first.substr(0, 1)).append(last);
      a += std::to_string(r.below(100));
      break;
    case 3: a.append(first).append(std::to_string(1950 + r.below(60))); break;
    case 4: a.append(first).append(".").append(last).append("+news"); break;
    default: a.append(last).append("-").append(first); break;
  }
  a += '@';
  // Half of real traffic goes to a handful of big providers.
  if (r.below(2) == 0)
    a += domains[r.below(std::size(providers))];
  else
    a += domains[r.below(domains.size())];
  if (r.below(10) == 0)
    std::transform(a.begin(), a.end(), a.begin(), [](char c) {
      return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c;
    });
  return a;
}

} // namespace

int main(int argc, char** argv) {
  int passes = argc > 1 ? std::atoi(argv[1]) : 10;
  rng r{42};
  auto domains = make_domains(r, 5000);
  std::vector<std::string> addresses;
  addresses.reserve(200000);
  while (addresses.size() < 200000)
    addresses.push_back(make_address(r, domains));

  options opts;
  parsed_address out;
  std::size_t valid = 0;
  double best_reuse = 0;
  double best_fresh = 0;
  using clock = std::chrono::steady_clock;
  for (int p = 0; p < passes; ++p) {
    valid = 0;
    auto t0 = clock::now();
    for (const auto& a : addresses) {
      parse(a, opts, out);
      valid += out.valid;
    }
    auto t1 = clock::now();
    std::size_t fresh_valid = 0;
    for (const auto& a : addresses)
      fresh_valid += parse(a, opts).valid;
    auto t2 = clock::now();
    if (fresh_valid != valid)
      return 1;
    auto rate = [&](auto d) {
      return addresses.size() / std::chrono::duration<double>(d).count();
    };
    best_reuse = std::max(best_reuse, rate(t1 - t0));
    best_fresh = std::max(best_fresh, rate(t2 - t1));
  }
  std::printf("addresses=%zu valid=%zu passes=%d\n", addresses.size(), valid,
              passes);
  std::printf("parse(reused result): %.2f M addresses/s (%.0f ns each)\n",
              best_reuse / 1e6, 1e9 / best_reuse);
  std::printf("parse(new result):    %.2f M addresses/s (%.0f ns each)\n",
              best_fresh / 1e6, 1e9 / best_fresh);
}
