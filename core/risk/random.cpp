#include "core/risk/random.hpp"

#include "core/base/ascii.hpp"
#include "core/risk/text.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
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
constexpr double repetition_score = 0.9;
// A letter run whose summed log-likelihood ratio is at or above
// `model_clear` is a name; at `model_flag` it scores 0.5; the score grows
// linearly in between and beyond (capped at 1).
constexpr double model_clear = -8.0;
constexpr double model_flag = -15.0;
constexpr std::size_t min_hex = 12;
constexpr std::size_t min_base64 = 12;
constexpr std::size_t min_keyboard = 5;
// A token made wholly of one-row, one-direction walks: each walk at least
// this many keys (`qwe|asd`), and the token at least `min_walk_token`.
constexpr int min_walk_piece = 3;
constexpr std::size_t min_walk_token = 4;
constexpr std::size_t min_single_walk = 4;
// A chunk repeated: at least this many times, over at least this many
// characters (`xyzxyzxyz`, `abababab`); one character needs only four
// (`zzzz`).
constexpr std::size_t min_repeats = 3;
constexpr std::size_t min_repeated = 6;
constexpr std::size_t min_same = 4;
// A short token of letters and digits (`x7k9`, `3kq7tz`): at most this
// long, letter runs of at most two letters, three runs or more.
constexpr std::size_t min_short_token = 4;
constexpr std::size_t max_short_token = 16;
constexpr std::size_t max_short_letter_run = 2;
constexpr std::size_t min_model_run = 4;
constexpr std::size_t max_local = 64;

bool is_uuid(std::string_view s) noexcept {
  if (s.size() != 36)
    return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !is_ascii_hex(s[i]))
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
constexpr int row_step_of(char a, char b) noexcept {
  auto p = keys[a - 'a'];
  auto q = keys[b - 'a'];
  if (p.row != q.row)
    return 0;
  return q.x - p.x == 4 ? 1 : (p.x - q.x == 4 ? -1 : 0);
}

// row_step_of for every pair of symbols (26 = not a letter, always 0), so
// the token scan needs no branches for it.
constexpr std::array<std::int8_t, 27 * 27> make_row_steps() {
  std::array<std::int8_t, 27 * 27> steps{};
  for (int a = 0; a < 26; ++a)
    for (int b = 0; b < 26; ++b)
      steps[a * 27 + b] = static_cast<std::int8_t>(
          row_step_of(static_cast<char>('a' + a), static_cast<char>('a' + b)));
  return steps;
}

constexpr auto row_steps = make_row_steps();

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

// Two or more columns typed top to bottom (`qazwsx`, `edcrfv`).
bool column_walk(std::string_view run) noexcept {
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

// Keeps the highest score; a pattern detector wins a tie with the model,
// because its reason is the more telling one.
struct judge {
  random_verdict verdict;
  void offer(double score, random_reason reason) noexcept {
    if (score > verdict.score) {
      verdict.score = score;
      verdict.reason = reason;
    }
  }
  void pattern(double score, random_reason reason) noexcept {
    if (score >= verdict.score) {
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
    inner_upper += i > 0 && is_ascii_upper(token[i]);
    lower += is_ascii_lower(token[i]);
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
    if (!is_ascii_alpha(c)) {
      flush();
      continue;
    }
    if (is_ascii_upper(c))
      flush();
    chunk[n++] = ascii_lower(c);
  }
  flush();
  return sum < 0;
}

// Character classes for the token scan, one table load per character.
enum : std::uint8_t {
  digit_bit = 1,
  upper_bit = 2,
  hex_bit = 4,
  letter_bit = 8,
};

constexpr std::array<std::uint8_t, 256> make_classes() {
  std::array<std::uint8_t, 256> cls{};
  for (int c = '0'; c <= '9'; ++c)
    cls[c] = digit_bit | hex_bit;
  for (int c = 'A'; c <= 'Z'; ++c)
    cls[c] = letter_bit | upper_bit | (c <= 'F' ? hex_bit : 0);
  for (int c = 'a'; c <= 'z'; ++c)
    cls[c] = letter_bit | (c <= 'f' ? hex_bit : 0);
  return cls;
}

constexpr auto classes = make_classes();

// Scores one letter run (lower-case) with the model, and looks for column
// walks, which read as gibberish to the model and are checked only then.
void judge_run(const lists& l, std::string_view run, judge& j) noexcept {
  // Shorter runs are never judged: the model needs four letters and a
  // column walk six.
  if (run.size() < min_model_run)
    return;
  float reading = 0;
  if (l.model.trained()) {
    reading = best_reading(l, run);
    j.offer(model_score(reading), random_reason::unlikely_letters);
  }
  if ((reading < model_clear || !l.model.trained()) && column_walk(run))
    j.pattern(keyboard_score, random_reason::keyboard_walk);
}

// What the character pass learns about a token (a maximal run of letters
// and digits): the OR and AND of its character classes, which let the
// common tokens (letters only, no capitals) skip the digit and capital
// statistics altogether, and whether it holds a row walk.
struct token_facts {
  std::uint8_t any = 0;
  std::uint8_t all = 0xFF;
  bool row_walk = false;
  /// The longest one-row, one-direction walk in the token, in keys.
  int longest_walk = 1;
};

// Whether every key of a letter token lies on a one-row, one-direction walk
// of at least `min_walk_piece` keys, the walks two or more, or one of
// `min_single_walk` keys or more (`asdf`, `qweasd`, `jkljkl`, `ewqdsa`). A
// walk ends at a key that is no step from the one before, and turns into a
// new walk, sharing the turning key, where the direction reverses.
bool walk_cover(std::string_view lower) noexcept {
  if (lower.size() < min_walk_token)
    return false;
  unsigned key = lower[0] - 'a';
  int direction = 0;
  int stretch = 1;
  int walks = 1;
  int longest = 1;
  for (std::size_t i = 1; i < lower.size(); ++i) {
    unsigned next = lower[i] - 'a';
    int step = row_steps[key * 27 + next];
    key = next;
    if (step == 0 || (direction != 0 && step != direction)) {
      if (stretch < min_walk_piece)
        return false;
      ++walks;
      stretch = step == 0 ? 1 : 2;
    } else {
      ++stretch;
    }
    direction = step;
    longest = std::max(longest, stretch);
  }
  return stretch >= min_walk_piece &&
         (walks >= 2 || longest >= static_cast<int>(min_single_walk));
}

// Whether a letter token that `walk_cover` describes is a keyboard walk. A
// lone walk of four keys counts only from the end of a row, where a hand
// starts mashing (`asdf`, `qwer`, `zxcv`, `hjkl`, `poiu`): four keys from
// the middle of a row spell names (`trew`, `wert`). A token the name or
// word lists hold is never one.
bool walk_token(const lists& l, std::string_view lower) noexcept {
  auto edge = [](char c) {
    return c == 'q' || c == 'p' || c == 'a' || c == 'l' || c == 'z' || c == 'm';
  };
  if (lower.size() == min_single_walk && !edge(lower.front()) &&
      !edge(lower.back()))
    return false;
  return !known(l, lower);
}

// Whether `s` is one chunk repeated: `min_repeats` times or more over
// `min_repeated` characters, the last repetition possibly cut short
// (`abababa`), or one character `min_same` times (`zzzz`). The chunk's
// first character must come back at its period, so ordinary words leave
// after a comparison or two per candidate period.
bool repeated_chunk(std::string_view s) noexcept {
  const auto n = s.size();
  if (n < min_same)
    return false;
  for (std::size_t p = 1; p * min_repeats <= n; ++p) {
    if (s[p] != s[0] || (p > 1 && n < min_repeated))
      continue;
    std::size_t i = p + 1;
    while (i < n && s[i] == s[i - p])
      ++i;
    if (i == n)
      return true;
  }
  return false;
}

// Judges one token: first its letter runs, in order, then the token-wide
// patterns. `lower` is the token lower-cased.
void judge_token(const lists& l, std::string_view token, std::string_view lower,
                 const token_facts& t, judge& j) noexcept {
  const auto any = t.any;
  const auto all = t.all;
  std::size_t digits = 0;
  std::size_t switches = 0;
  std::size_t longest_letters = 0;
  if ((any & digit_bit) == 0) {
    judge_run(l, lower, j);
    // A token of walks has one of three keys at least (`longest_walk`);
    // walk_cover then stops at the first short walk, for names at once.
    if (t.longest_walk >= min_walk_piece && walk_cover(lower) &&
        walk_token(l, lower))
      j.pattern(keyboard_score, random_reason::keyboard_walk);
  } else {
    auto previous = classes[static_cast<unsigned char>(token[0])];
    for (std::size_t i = 0; i < lower.size();) {
      auto cls = classes[static_cast<unsigned char>(token[i])];
      if ((cls & digit_bit) != 0) {
        ++digits;
        switches += (cls ^ previous) & digit_bit;
        previous = cls;
        ++i;
        continue;
      }
      auto start = i;
      switches += (cls ^ previous) & digit_bit;
      while (++i < lower.size() &&
             (classes[static_cast<unsigned char>(token[i])] & digit_bit) == 0)
        ;
      previous = classes[static_cast<unsigned char>(token[i - 1])];
      longest_letters = std::max(longest_letters, i - start);
      judge_run(l, lower.substr(start, i - start), j);
    }
  }
  // Digits alone are phone and QQ numbers, never judged.
  if ((any & letter_bit) != 0 && repeated_chunk(lower))
    j.pattern(repetition_score, random_reason::repetition);
  // A keyboard walk is five or more keys in one row in one direction
  // (`asdfg`, `poiuy`); looser rules (any adjacent keys) flag names such as
  // `reese` and `tressa`, whose letters sit close together on the keyboard.
  if (t.row_walk)
    j.pattern(keyboard_score, random_reason::keyboard_walk);
  std::size_t letters = token.size() - digits;
  if ((all & hex_bit) != 0 && token.size() >= min_hex && digits >= 2 &&
      letters >= 2)
    j.pattern(hex_score, random_reason::hex);
  // Short machine tokens (`x7k9`, `b4kq`, `3kq7tz`): letters and digits
  // alternate in runs too short to spell anything. A letter run of three
  // or more (`me2you`, `john4u`) or a single switch (`maria1985`, `mj23`)
  // is how people add numbers to names.
  bool short_mix = switches >= 2 && letters >= 2 &&
                   longest_letters <= max_short_letter_run &&
                   token.size() >= min_short_token &&
                   token.size() <= max_short_token;
  if (switches >= 4 || short_mix)
    j.pattern(digit_mix_score, random_reason::digit_mix);
  else if (switches >= 2 && digits >= 8 && digits >= 2 * letters)
    j.pattern(digit_heavy_score, random_reason::digit_mix);
  // base64_like needs interior capitals; a capital in first place only
  // (`Anna`) cannot make a token base64.
  if ((any & upper_bit) != 0 && base64_like(l, token))
    j.pattern(base64_score, random_reason::base64);
}

// The key index of a byte for the row-walk tracking: 0-25 for a letter of
// either case, 26 for anything else (which breaks a walk).
constexpr std::array<std::uint8_t, 256> make_key_of() {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c)
    t[c] = 26;
  for (int c = 0; c < 26; ++c)
    t['a' + c] = t['A' + c] = static_cast<std::uint8_t>(c);
  return t;
}

constexpr auto key_of = make_key_of();

// One pass over the local part: splits it into tokens, lower-cases them,
// gathers their character classes and tracks row walks; the tokens are
// judged as they end. The per-character work is branch-free: the branches
// that remain are the token boundaries.
void scan(const lists& l, std::string_view local, judge& j) noexcept {
  std::array<char, max_local> buf; // written before read
  const char* s = local.data();
  const std::size_t n = local.size();
  std::size_t i = 0;
  while (i < n) {
    auto cls = classes[static_cast<unsigned char>(s[i])];
    if ((cls & (letter_bit | digit_bit)) == 0) {
      ++i;
      continue;
    }
    std::size_t start = i;
    token_facts t;
    unsigned key = 26;
    int direction = 0;
    int stretch = 1;
    int longest = 1;
    do {
      // upper_bit << 4 is 0x20, the ASCII lower-case bit.
      buf[i] = static_cast<char>(s[i] | ((cls & upper_bit) << 4));
      t.any |= cls;
      t.all &= cls;
      // The length of the current one-row, one-direction key sequence:
      // 1 after a non-step, 2 after a change of direction, else one more.
      unsigned next = key_of[static_cast<unsigned char>(s[i])];
      int step = row_steps[key * 27 + next];
      int moved = step != 0;
      int same = step == direction;
      stretch = 1 + moved * (1 + same * (stretch - 1));
      longest = longest > stretch ? longest : stretch;
      direction = step;
      key = next;
      if (++i == n)
        break;
      cls = classes[static_cast<unsigned char>(s[i])];
    } while ((cls & (letter_bit | digit_bit)) != 0);
    t.row_walk = longest >= static_cast<int>(min_keyboard);
    t.longest_walk = longest;
    judge_token(l, {s + start, i - start}, {buf.data() + start, i - start}, t,
                j);
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
    case random_reason::repetition: return "repetition";
  }
  return "none";
}

random_verdict random_local_part(const lists& l, std::string_view local_part) {
  local_part = detail::before(local_part, '+');
  local_part = local_part.substr(0, max_local);
  judge j;
  if (is_uuid(local_part))
    j.pattern(uuid_score, random_reason::uuid);
  else
    scan(l, local_part, j);
  j.verdict.is_random = j.verdict.score >= threshold;
  return j.verdict;
}

} // namespace mailassay::core::risk
