#pragma once

// The line reader of the peers' text formats (a DNS zone, an SMTP peer
// script): words separated by blanks, `#` starts a comment, and an error
// names its line.

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::tests::peers {

/// One line of a script that holds at least one word.
struct script_line {
  /// Names the format in errors ("zone", "smtp peer script").
  std::string_view format;
  /// The line's number, from 1.
  std::size_t number = 0;
  /// Its words, the comment cut.
  std::vector<std::string> words;

  /// Throws std::runtime_error("<format> line <number>: <why>").
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error(std::string{format} + " line " +
                             std::to_string(number) + ": " + why);
  }

  /// `s` as a decimal number of at most `max_digits` digits and at most
  /// `max`; fails with "bad number '<s>'" otherwise.
  std::uint64_t decimal(const std::string& s, std::size_t max_digits,
                        std::uint64_t max = UINT64_MAX) const {
    if (s.empty() || s.size() > max_digits ||
        !std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::isdigit(c); }) ||
        std::stoull(s) > max)
      fail("bad number '" + s + "'");
    return std::stoull(s);
  }
};

/// Calls `each(const script_line&)` for every line of `text` with a word,
/// in order.
template <class F>
void for_each_script_line(std::string_view text, std::string_view format,
                          F&& each) {
  std::istringstream in{std::string{text}};
  std::string line;
  script_line current{format, 0, {}};
  while (std::getline(in, line)) {
    ++current.number;
    if (auto hash = line.find('#'); hash != std::string::npos)
      line.erase(hash);
    std::istringstream words{line};
    current.words.clear();
    for (std::string w; words >> w;)
      current.words.push_back(w);
    if (!current.words.empty())
      each(static_cast<const script_line&>(current));
  }
}

} // namespace mailassay::tests::peers
