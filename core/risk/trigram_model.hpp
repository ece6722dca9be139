#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

namespace mailassay::core::risk {

/// A character-trigram language model over `a`-`z` plus a word boundary,
/// stored as log-likelihood ratios against uniformly random letters.
///
/// `weight(a, b, c)` is ln P(c | a b) - ln(1/27), so a letter run scores
/// positive when the model finds it more likely than random typing and
/// negative when it does not. See docs/random-detection.md.
class trigram_model {
public:
  /// The number of symbols: 26 letters and the boundary.
  static constexpr int symbols = 27;

  /// The boundary symbol (start or end of a run).
  static constexpr int boundary = 26;

  /// Builds an untrained model: every weight is 0, every run scores 0.
  trigram_model() = default;

  /// Trains on word lists (one word per line, `#` comments, lower-case
  /// ASCII; words with other characters are skipped), with interpolated
  /// smoothing: unigram add-one, bigram and trigram with a Dirichlet prior
  /// on the next lower order.
  static trigram_model train(std::initializer_list<std::string_view> texts);

  /// Returns whether the model has been trained.
  bool trained() const noexcept { return !weights_.empty(); }

  /// Returns the summed log-likelihood ratio of a lower-case letter run,
  /// boundaries included (length + 1 transitions); 0 if untrained.
  /// Characters outside `a`-`z` must not occur in `run`.
  float score(std::string_view run) const noexcept;

private:
  std::vector<float> weights_;
};

} // namespace mailassay::core::risk
