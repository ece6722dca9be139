#include "core/risk/random.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>

namespace mailassay::core::risk {

namespace {

// Weights and thresholds; docs/random-detection.md gives the reasoning.
constexpr double threshold = 0.5;
constexpr double uuid_score = 1.0;
constexpr double hex_score = 1.0;
constexpr double base64_score = 1.0;
constexpr double keyboard_score = 0.9;
constexpr double digit_mix_score = 0.9;
constexpr double digit_heavy_score = 0.8;
// A letter run whose summed log-likelihood ratio is at or above
// `model_clear` is a name; at `model_flag` it scores 0.5; the score grows
// linearly in between and beyond (capped at 1).
constexpr double model_clear = -8.0;
constexpr double model_flag = -15.0;
constexpr std::size_t min_hex = 12;
constexpr std::size_t min_base64 = 12;
constexpr std::size_t min_keyboard = 5;
constexpr std::size_t min_model_run = 4;
constexpr std::size_t max_local = 64;

bool is_lower(char c) noexcept { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) noexcept { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_alnum(char c) noexcept {
  return is_lower(c) || is_upper(c) || is_digit(c);
}
char to_lower(char c) noexcept {
  return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}
bool is_hex(char c) noexcept {
  c = to_lower(c);
  return is_digit(c) || (c >= 'a' && c <= 'f');
}

bool is_uuid(std::string_view s) noexcept {
  if (s.size() != 36)
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !is_hex(s[i]))
      return false;
  }
  return true;
}

// QWERTY key positions in quarter-key units; rows are staggered the way
// the physical keyboard is (a is a quarter key right of q, z three).
struct key_pos {
  int row = -1;
  int x = 0;
};

constexpr std::array<key_pos, 26> make_keys() {
  std::array<key_pos, 26> keys{};
  const char* rows[] = {"qwertyuiop", "asdfghjkl", "zxcvbnm"};
  const int offset[] = {0, 1, 3};
  for (int r = 0; r < 3; ++r)
    for (int i = 0; rows[r][i] != '\0'; ++i)
      keys[rows[r][i] - 'a'] = key_pos{r, offset[r] + 4 * i};
  return keys;
}

constexpr auto keys = make_keys();

// Two keys side by side in one row; +1 rightwards, -1 leftwards, else 0.
int row_step(char a, char b) noexcept {
  auto p = keys[a - 'a'];
  auto q = keys[b - 'a'];
  if (p.row != q.row)
    return 0;
  return q.x - p.x == 4 ? 1 : (p.x - q.x == 4 ? -1 : 0);
}

// Three keys straight down (or up) one column: `qaz`, `wsx`, `edc`.
bool column(std::string_view k) noexcept {
  auto a = keys[k[0] - 'a'];
  auto b = keys[k[1] - 'a'];
  auto c = keys[k[2] - 'a'];
  bool down = a.row == 0 && b.row == 1 && c.row == 2 && b.x - a.x == 1 &&
              c.x - b.x == 2;
  bool up = a.row == 2 && b.row == 1 && c.row == 0 && a.x - b.x == 2 &&
            b.x - c.x == 1;
  return down || up;
}

// A walk is five or more keys in a row in one direction (`asdfg`,
// `poiuy`), or two or more columns (`qazwsx`). Looser rules (any adjacent
// keys) flag names such as `reese` and `tressa`: letters typed by the left
// hand sit close together in ordinary words too.
bool keyboard_walk(std::string_view run) noexcept {
  if (run.size() < min_keyboard)
    return false;
  std::size_t stretch = 1;
  int direction = 0;
  for (std::size_t i = 1; i < run.size(); ++i) {
    int step = row_step(run[i - 1], run[i]);
    stretch = step != 0 && step == direction ? stretch + 1 : (step ? 2 : 1);
    direction = step;
    if (stretch >= min_keyboard)
      return true;
  }
  if (run.size() < 6)
    return false;
  std::size_t columns = 0;
  for (std::size_t i = 0; i + 3 <= run.size();)
    if (column(run.substr(i, 3))) {
      ++columns;
      i += 3;
    } else {
      ++i;
    }
  return columns >= 2;
}

double model_score(float sum) noexcept {
  double s = (model_clear - sum) / (model_clear - model_flag) * threshold;
  return std::clamp(s, 0.0, 1.0);
}

bool known(const lists& l, std::string_view run) noexcept {
  return l.first_names.contains(run) || l.known_words.contains(run);
}

// The best (least random) reading of a letter run: itself, or without one
// or two leading initials (`jsmith`, `jpmorgan`) or a trailing one
// (`smithj`). A known name or word in any reading clears the run.
float best_reading(const lists& l, std::string_view run) noexcept {
  // Most runs read as names outright: one pass, no lookups.
  float best = l.model.score(run);
  if (best >= model_clear)
    return best;
  std::array<std::string_view, 3> readings{run.substr(1), {}, {}};
  std::size_t count = 1;
  if (run.size() >= 5)
    readings[count++] = run.substr(2);
  readings[count++] = run.substr(0, run.size() - 1);
  for (std::size_t i = 0; i < count; ++i)
    best = std::max(best, l.model.score(readings[i]));
  if (best >= model_clear)
    return best;
  // The lists are consulted only when the model has doubts.
  if (known(l, run))
    return 0;
  for (std::size_t i = 0; i < count; ++i)
    if (readings[i].size() >= 3 && known(l, readings[i]))
      return 0;
  return best;
}

struct judge {
  random_verdict verdict;
  void offer(double score, random_reason reason) noexcept {
    if (score > verdict.score) {
      verdict.score = score;
      verdict.reason = reason;
    }
  }
};

// A mixed-case token is base64-like when it has many interior capitals and
// its CamelCase chunks do not read as words (`AnnaMariaDeLaCruz` does).
bool base64_like(const lists& l, std::string_view token) noexcept {
  if (token.size() < min_base64)
    return false;
  std::size_t inner_upper = 0;
  std::size_t lower = 0;
  for (std::size_t i = 0; i < token.size(); ++i) {
    inner_upper += i > 0 && is_upper(token[i]);
    lower += is_lower(token[i]);
  }
  if (inner_upper < 3 || lower < 3 || inner_upper * 5 < token.size())
    return false;
  std::array<char, max_local> chunk; // written before read
  std::size_t n = 0;
  float sum = 0;
  auto flush = [&] {
    if (n > 0)
      sum += l.model.score({chunk.data(), n});
    n = 0;
  };
  for (char c : token) {
    if (!is_lower(c) && !is_upper(c)) {
      flush();
      continue;
    }
    if (is_upper(c))
      flush();
    chunk[n++] = to_lower(c);
  }
  flush();
  return sum < 0;
}

void judge_token(const lists& l, std::string_view token, judge& j) noexcept {
  std::array<char, max_local> buf; // written before read
  std::size_t letters = 0;
  std::size_t digits = 0;
  std::size_t switches = 0;
  bool hex = true;
  bool mixed_case = false;
  for (std::size_t i = 0; i < token.size(); ++i) {
    char c = token[i];
    buf[i] = to_lower(c);
    hex = hex && is_hex(c);
    mixed_case = mixed_case || (i > 0 && is_upper(c));
    if (is_digit(c))
      ++digits;
    else
      ++letters;
    if (i > 0 && is_digit(c) != is_digit(token[i - 1]))
      ++switches;
  }
  std::string_view lower{buf.data(), token.size()};
  if (hex && token.size() >= min_hex && digits >= 2 && letters >= 2)
    j.offer(hex_score, random_reason::hex);
  if (switches >= 4)
    j.offer(digit_mix_score, random_reason::digit_mix);
  else if (switches >= 2 && digits >= 8 && digits >= 2 * letters)
    j.offer(digit_heavy_score, random_reason::digit_mix);
  if (mixed_case && base64_like(l, token))
    j.offer(base64_score, random_reason::base64);
  for (std::size_t i = 0; i < lower.size();) {
    if (!is_lower(lower[i])) {
      ++i;
      continue;
    }
    auto end = i;
    while (end < lower.size() && is_lower(lower[end]))
      ++end;
    auto run = lower.substr(i, end - i);
    i = end;
    if (keyboard_walk(run))
      j.offer(keyboard_score, random_reason::keyboard_walk);
    if (run.size() >= min_model_run && l.model.trained())
      j.offer(model_score(best_reading(l, run)),
              random_reason::unlikely_letters);
  }
}

} // namespace

std::string_view to_string(random_reason reason) noexcept {
  switch (reason) {
    case random_reason::none: return "none";
    case random_reason::uuid: return "uuid";
    case random_reason::hex: return "hex";
    case random_reason::base64: return "base64";
    case random_reason::keyboard_walk: return "keyboard_walk";
    case random_reason::digit_mix: return "digit_mix";
    case random_reason::unlikely_letters: return "unlikely_letters";
  }
  return "none";
}

random_verdict random_local_part(const lists& l, std::string_view local_part) {
  local_part = local_part.substr(0, local_part.find('+'));
  local_part = local_part.substr(0, max_local);
  judge j;
  if (is_uuid(local_part)) {
    j.offer(uuid_score, random_reason::uuid);
  } else {
    for (std::size_t i = 0; i < local_part.size();) {
      if (!is_alnum(local_part[i])) {
        ++i;
        continue;
      }
      auto end = i;
      while (end < local_part.size() && is_alnum(local_part[end]))
        ++end;
      judge_token(l, local_part.substr(i, end - i), j);
      i = end;
    }
  }
  j.verdict.is_random = j.verdict.score >= threshold;
  return j.verdict;
}

} // namespace mailassay::core::risk
