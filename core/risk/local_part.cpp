#include "core/risk/local_part.hpp"

#include "core/risk/text.hpp"

#include <array>

namespace mailassay::core::risk {

namespace {

constexpr std::size_t max_local = 64;

bool is_separator(char c) noexcept {
  return c == '.' || c == '_' || c == '-';
}
bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}
bool is_upper(char c) noexcept {
  return c >= 'A' && c <= 'Z';
}
bool is_lower(char c) noexcept {
  return c >= 'a' && c <= 'z';
}
char to_lower(char c) noexcept {
  return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string_view without_tag(std::string_view local) noexcept {
  return detail::before(local, '+');
}

std::string_view without_digits(std::string_view token) noexcept {
  while (!token.empty() && is_digit(token.back()))
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

} // namespace

std::optional<std::string_view> role_of(const lists& l,
                                        std::string_view local_part) {
  auto local = without_tag(local_part);
  if (local.empty() || local.size() > max_local)
    return std::nullopt;
  std::array<char, max_local> buf; // written before read
  std::size_t head = local.size();
  for (std::size_t i = 0; i < local.size(); ++i) {
    buf[i] = to_lower(local[i]);
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
    bool boundary = !is_lower(c) && !is_upper(c);
    bool camel = is_upper(c) && i > 0 && is_lower(local[i - 1]);
    if (boundary || camel)
      if (auto name = try_token())
        return name;
    if (!boundary)
      buf[n++] = to_lower(c);
  }
  return try_token();
}

} // namespace mailassay::core::risk
