#pragma once

// JSON text: what every codec of http/codec/ writes with, the nlohmann
// way (text_of) and the direct way (json_writer) byte for byte alike.

#include "core/base/utf8.hpp"
#include "core/base/word_bytes.hpp"
#include "http/text_cursor.hpp"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace mailassay::http::codec {

using nlohmann::json;

/// Whether `s` is written between quotes as it is: no control character,
/// quote or backslash (what nlohmann escapes), and well-formed UTF-8 (which
/// nlohmann writes as it is, ensure_ascii off). The direct writers' fast
/// path; anything else goes through nlohmann. Eight bytes at a time
/// (`tests/http_unit/json_text_test.cpp` holds it to nlohmann's dump).
inline bool written_as_is(std::string_view s) {
  const char* p = s.data();
  std::size_t n = s.size();
  bool ascii = true;
  if (n < 8) {
    for (std::size_t i = 0; i < n; ++i) {
      auto c = static_cast<unsigned char>(p[i]);
      if (c < 0x20 || c == '"' || c == '\\')
        return false;
      ascii = ascii && c < 0x80;
    }
    return ascii || core::utf8_valid(s);
  }
  auto plain = [&ascii](std::uint64_t x) {
    ascii = ascii && !core::has_high_byte(x);
    return !core::has_byte_below(x, 0x20) && !core::has_byte(x, '"') &&
           !core::has_byte(x, '\\');
  };
  // Whole words, then the last eight bytes (overlapping the last word).
  for (std::size_t i = 0; i + 8 < n; i += 8)
    if (!plain(core::load_word(p + i)))
      return false;
  if (!plain(core::load_word(p + n - 8)))
    return false;
  return ascii || core::utf8_valid(s);
}

/// `j` as JSON text, bytes that are not UTF-8 (a path, a file name, a
/// server's reply quoted in it) written as U+FFFD instead of throwing.
std::string text_of(const json& j);

/// `v` as JSON, null when absent.
template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

/// Writes JSON text the way nlohmann's `dump()` does (no indentation,
/// ensure_ascii off, strict UTF-8): the direct writers' tool. The caller
/// writes object keys in sorted order, as nlohmann's `std::map` objects do.
class json_writer : public text_cursor {
public:
  /// Appends to `out`. With `scrub`, bytes that are not UTF-8 are written
  /// as U+FFFD, as text_of() writes them; without, they throw nlohmann's
  /// type_error, as dump() does. Most results fit in the first room made.
  explicit json_writer(std::string& out, bool scrub = false)
      : text_cursor(out, 1536), scrub_(scrub) {}

  /// Writes `s` as a JSON string.
  void text(std::string_view s) {
    if (!written_as_is(s)) {
      // Escapes and UTF-8 exactly as nlohmann does: rare on this path.
      raw(scrub_ ? text_of(json(std::string{s})) : json(std::string{s}).dump());
      return;
    }
    room(s.size() + 2);
    *at_++ = '"';
    std::memcpy(at_, s.data(), s.size());
    at_ += s.size();
    *at_++ = '"';
  }

  /// Writes `true` or `false`.
  void flag(bool b) {
    if (b)
      raw("true");
    else
      raw("false");
  }

  /// Writes `null`.
  void null() { raw("null"); }

  /// Writes `items` as an array of objects, `fields(item)` writing each
  /// object's members between its braces.
  template <class Items, class Fields>
  void objects(const Items& items, Fields fields) {
    raw("[");
    bool first = true;
    for (const auto& item : items) {
      raw(first ? "{" : ",{");
      first = false;
      fields(item);
      raw("}");
    }
    raw("]");
  }

  /// Writes `v` as nlohmann does (null when not finite).
  void number(double v) {
    if (!std::isfinite(v))
      return null();
    room(64);
    at_ = nlohmann::detail::to_chars(at_, at_ + 64, v);
  }

  /// Writes `std::round(v * 1000) / 1000` as number() would. Such a value
  /// below 10^12 prints as its thousandths with trailing zeros dropped (the
  /// shortest text that reads back as the same double, as nlohmann writes
  /// it); without nlohmann's Grisu, a fifth of the instructions.
  void thousandths(double v) {
    double x = std::round(v * 1000);
    if (!(x >= 0 && x < 1e15) || (x == 0 && std::signbit(x)))
      return number(x / 1000);
    auto k = static_cast<std::uint64_t>(x);
    room(24);
    at_ = std::to_chars(at_, end_, k / 1000).ptr;
    *at_++ = '.';
    auto frac = static_cast<unsigned>(k % 1000);
    char digits[3] = {static_cast<char>('0' + frac / 100),
                      static_cast<char>('0' + frac / 10 % 10),
                      static_cast<char>('0' + frac % 10)};
    std::size_t n = 3;
    while (n > 1 && digits[n - 1] == '0')
      --n;
    std::memcpy(at_, digits, n);
    at_ += n;
  }

  /// Writes `s`, or null when it is empty.
  void text_or_null(const std::string& s) {
    if (s.empty())
      null();
    else
      text(s);
  }

  /// Writes `s`, or null when it is absent.
  void text_or_null(const std::optional<std::string>& s) {
    if (s)
      text(*s);
    else
      null();
  }

  /// Writes `b`, or null when it is absent.
  void flag_or_null(const std::optional<bool>& b) {
    if (b)
      flag(*b);
    else
      null();
  }

  /// Writes `v`, or null when it is absent.
  void integer_or_null(const std::optional<std::int64_t>& v) {
    if (v)
      integer(*v);
    else
      null();
  }

private:
  bool scrub_;
};

} // namespace mailassay::http::codec
