#pragma once

#include "core/risk/lists.hpp"

#include <string_view>

namespace mailassay::core::risk {

/// Which detector judged a local part random.
enum class random_reason {
  none,             ///< nothing machine-like found
  uuid,             ///< an RFC 9562 UUID in 8-4-4-4-12 form
  hex,              ///< a long run of hexadecimal digits and letters
  base64,           ///< mixed-case token that is not CamelCase words
  keyboard_walk,    ///< adjacent keys on a QWERTY keyboard (`asdfgh`)
  digit_mix,        ///< letters and digits interleaved (`a8sd7f6`)
  unlikely_letters, ///< letters the trigram model finds unlike any language
  repetition,       ///< one short chunk typed over and over (`xyzxyzxyz`)
};

/// Returns the reason's name in snake_case (`keyboard_walk`).
std::string_view to_string(random_reason reason) noexcept;

/// The random-local-part signal.
struct random_verdict {
  /// Whether `score` reaches the threshold, 0.5.
  bool is_random = false;
  /// Confidence in [0, 1] that the local part was machine-made or mashed.
  double score = 0;
  /// The detector that gave the highest score.
  random_reason reason = random_reason::none;
};

/// Judges whether a local part looks random: detectors for UUID, hex,
/// base64, keyboard walks, repeated chunks and interleaved digits (short
/// machine tokens included), then a character-trigram
/// model trained on names and words for the letter runs. The `+tag` is
/// ignored. Runs of fewer than four letters are never judged by the model,
/// and a run found in the name or word lists counts as a name. O(length);
/// no allocation. The model is documented in docs/random-detection.md.
random_verdict random_local_part(const lists& l, std::string_view local_part);

} // namespace mailassay::core::risk
