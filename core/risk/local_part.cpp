#include "core/risk/local_part.hpp"

#include "core/base/ascii.hpp"
#include "core/risk/text.hpp"

#include <array>

namespace mailassay::core::risk {

namespace {

constexpr std::size_t max_local = 64;

bool is_separator(char c) noexcept {
  return c == '.' || c == '_' || c == '-';
}

std::string_view without_tag(std::string_view local) noexcept {
  return detail::before(local, '+');
}

std::string_view without_digits(std::string_view token) noexcept {
  while (!token.empty() && is_ascii_digit(token.back()))
    token.remove_suffix(1);
  return token;
}

// A role word, or a role word followed by digits.
std::string_view role_token(const lists& l, std::string_view token) noexcept {
  if (auto r = l.roles.find(token); !r.empty())
    return r;
  auto base = without_digits(token);
  if (base.size() >= 2 && base.size() < token.size())
    return l.roles.find(base);
  return {};
}

// Table lookups instead of comparisons: one predictable load per byte.
constexpr std::array<bool, 256> make_ends_head() {
  std::array<bool, 256> t{};
  t['.'] = t['_'] = t['-'] = t['+'] = true;
  return t;
}
constexpr auto ends_head = make_ends_head();

constexpr std::array<unsigned char, 256> make_lower_of() {
  std::array<unsigned char, 256> t{};
  for (int c = 0; c < 256; ++c)
    t[c] = static_cast<unsigned char>(ascii_lower(static_cast<char>(c)));
  return t;
}
constexpr auto lower_of = make_lower_of();

// Whether the local part certainly names no role: its first token (up to
// the first separator or `+`), with or without trailing digits, is no role
// head. Every role entry starts with a head (`sales` for `sales.team`,
// `info` for `info2`), so this one lookup, on a lower-cased copy of the
// first token only, settles most local parts; `role_of` repeats the test
// in full for the rest.
bool no_role_head(const lists& l, std::string_view local_part) noexcept {
  std::array<char, max_local + 1> buf; // written before read
  auto limit = local_part.size() < buf.size() ? local_part.size() : buf.size();
  std::size_t head = 0;
  for (; head < limit; ++head) {
    auto c = static_cast<unsigned char>(local_part[head]);
    if (ends_head[c])
      break;
    buf[head] = static_cast<char>(lower_of[c]);
  }
  // Longer than any local part: role_of says no for its own reason.
  if (head > max_local)
    return true;
  std::string_view first_token{buf.data(), head};
  auto first_word = without_digits(first_token);
  return !l.role_heads.empty() && !first_word.empty() &&
         !l.role_heads.contains(first_token) &&
         (first_word.size() == first_token.size() ||
          !l.role_heads.contains(first_word));
}

} // namespace

std::optional<std::string_view> role_of(const lists& l,
                                        std::string_view local_part) {
  if (no_role_head(l, local_part))
    return std::nullopt;
  auto local = without_tag(local_part);
  if (local.empty() || local.size() > max_local)
    return std::nullopt;
  std::array<char, max_local> buf; // written before read
  std::size_t head = local.size();
  for (std::size_t i = 0; i < local.size(); ++i) {
    buf[i] = ascii_lower(local[i]);
    if (head == local.size() && is_separator(local[i]))
      head = i;
  }
  std::string_view lower{buf.data(), local.size()};
  // One lookup settles most local parts: every role entry starts with a
  // head (`sales` for `sales.team`, `info` for `info2`).
  auto first_token = lower.substr(0, head);
  auto first_word = without_digits(first_token);
  bool no_head = !l.role_heads.contains(first_token) &&
                 (first_word.size() == first_token.size() ||
                  first_word.empty() || !l.role_heads.contains(first_word));
  // A digit-only first token (`2024.info`) is skipped like the others.
  if (no_head && !first_word.empty() && !l.role_heads.empty())
    return std::nullopt;
  if (auto r = role_token(l, lower); !r.empty())
    return r;
  if (head == local.size())
    return std::nullopt;
  std::string_view first;
  std::size_t tokens = 0;
  for (std::size_t i = 0; i <= lower.size();) {
    auto end = i;
    while (end < lower.size() && !is_separator(lower[end]))
      ++end;
    auto token = lower.substr(i, end - i);
    i = end + 1;
    ++tokens;
    if (token.empty() || without_digits(token).empty())
      continue;
    auto r = role_token(l, token);
    if (r.empty())
      return std::nullopt;
    if (first.empty())
      first = r;
  }
  if (tokens >= 2 && !first.empty())
    return first;
  return std::nullopt;
}

std::optional<std::string> first_name(const lists& l,
                                      std::string_view local_part) {
  if (role_of(l, local_part))
    return std::nullopt;
  return detail::first_name_of_person(l, local_part);
}

std::optional<std::string>
detail::first_name_of_person(const lists& l, std::string_view local_part) {
  auto local = without_tag(local_part);
  if (local.empty() || local.size() > max_local)
    return std::nullopt;
  std::array<char, max_local> buf; // written before read
  std::size_t n = 0;
  std::size_t tokens = 0;
  bool initial_first = false;
  auto try_token = [&]() -> std::optional<std::string> {
    std::string_view token{buf.data(), n};
    n = 0;
    if (token.empty())
      return std::nullopt;
    // `j.smith`: the first name is the initial; `smith` is the family name.
    if (tokens++ == 0 && token.size() == 1)
      initial_first = true;
    if (initial_first || token.size() < 2 || !l.first_names.contains(token))
      return std::nullopt;
    std::string name{token};
    name[0] = static_cast<char>(name[0] - 'a' + 'A');
    return name;
  };
  for (std::size_t i = 0; i < local.size(); ++i) {
    char c = local[i];
    bool boundary = !is_ascii_alpha(c);
    bool camel = is_ascii_upper(c) && i > 0 && is_ascii_lower(local[i - 1]);
    if (boundary || camel)
      if (auto name = try_token())
        return name;
    if (!boundary)
      buf[n++] = ascii_lower(c);
  }
  return try_token();
}

} // namespace mailassay::core::risk
