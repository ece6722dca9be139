#include "app/app.hpp"
#include "core/validation/verdict.hpp"
#include "http/codec/validation.hpp"

#include <condition_variable>
#include <iomanip>
#include <iostream>
#include <mutex>

namespace mailassay::app {

namespace {

std::vector<std::string> read_inputs(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (auto& a : args) {
    if (a != "-") {
      out.push_back(a);
      continue;
    }
    for (std::string line; std::getline(std::cin, line);) {
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      if (!line.empty())
        out.push_back(line);
    }
  }
  return out;
}

void print_table(const std::vector<actors::validation::result>& results) {
  std::cout << std::left << std::setw(40) << "EMAIL" << std::setw(9) << "STATUS"
            << std::setw(6) << "SCORE" << std::setw(18) << "REASON"
            << "SUGGESTION\n";
  for (auto& r : results) {
    auto& s = r.checks.suggested_domain;
    std::cout << std::setw(40) << r.address.input << std::setw(9)
              << core::validation::to_string(r.verdict.state) << std::setw(6)
              << r.verdict.score << std::setw(18) << r.verdict.reason
              << (s ? r.address.local_part + "@" + *s : std::string{}) << "\n";
  }
}

} // namespace

int check(const config::settings& cfg, const std::vector<std::string>& args,
          bool table) {
  auto inputs = read_inputs(args);
  auto validator = validator_or_exit(cfg);
  std::vector<actors::validation::result> results(inputs.size());
  std::mutex mtx;
  std::condition_variable cv;
  std::size_t pending = 0;
  constexpr std::size_t window = 256;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    {
      std::unique_lock lock{mtx};
      cv.wait(lock, [&] { return pending < window; });
      ++pending;
    }
    actors::validation::request req;
    req.email = inputs[i];
    validator->validate(std::move(req), [&, i](actors::validation::result r) {
      std::lock_guard lock{mtx};
      results[i] = std::move(r);
      --pending;
      cv.notify_all();
    });
  }
  {
    std::unique_lock lock{mtx};
    cv.wait(lock, [&] { return pending == 0; });
  }
  if (table)
    print_table(results);
  else
    // An argument or input line that is not UTF-8 (it fails the syntax
    // check) is echoed with U+FFFD: a line for every address, no abort.
    for (auto& r : results)
      std::cout << http::codec::validation_result_text(
                       r, http::codec::bad_utf8::replace)
                << "\n";
  return 0;
}

} // namespace mailassay::app
