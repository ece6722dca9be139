#include "core/risk/trigram_model.hpp"

#include <cmath>
#include <cstdint>

namespace mailassay::core::risk {

namespace {

constexpr int n = trigram_model::symbols;
constexpr int edge = trigram_model::boundary;

// Pseudo-counts of the Dirichlet priors; chosen on held-out names (see
// docs/random-detection.md), small so that observed counts dominate.
constexpr double bigram_prior = 2.0;
constexpr double trigram_prior = 3.0;

bool letters_only(std::string_view w) noexcept {
  for (char c : w)
    if (c < 'a' || c > 'z')
      return false;
  return !w.empty();
}

template <class F>
void for_each_word(std::string_view text, F&& f) {
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.remove_suffix(1);
    if (!line.empty() && line.front() != '#' && letters_only(line))
      f(line);
  }
}

} // namespace

trigram_model
trigram_model::train(std::initializer_list<std::string_view> texts) {
  std::vector<std::uint32_t> c3(n * n * n, 0);
  std::vector<std::uint32_t> c2(n * n, 0);
  std::vector<std::uint32_t> c1(n, 0);
  for (auto text : texts)
    for_each_word(text, [&](std::string_view w) {
      int a = edge;
      int b = edge;
      auto step = [&](int c) {
        ++c3[(a * n + b) * n + c];
        ++c2[b * n + c];
        ++c1[c];
        a = b;
        b = c;
      };
      for (char ch : w)
        step(ch - 'a');
      step(edge);
    });
  double total = 0;
  for (auto c : c1)
    total += c;
  std::vector<double> p1(n);
  for (int c = 0; c < n; ++c)
    p1[c] = (c1[c] + 1.0) / (total + n);
  std::vector<double> p2(n * n);
  for (int b = 0; b < n; ++b) {
    double ctx = 0;
    for (int c = 0; c < n; ++c)
      ctx += c2[b * n + c];
    for (int c = 0; c < n; ++c)
      p2[b * n + c] =
          (c2[b * n + c] + bigram_prior * p1[c]) / (ctx + bigram_prior);
  }
  trigram_model model;
  model.weights_.resize(n * n * n);
  const double uniform = std::log(1.0 / n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      auto base = (a * n + b) * n;
      double ctx = 0;
      for (int c = 0; c < n; ++c)
        ctx += c3[base + c];
      for (int c = 0; c < n; ++c) {
        double p = (c3[base + c] + trigram_prior * p2[b * n + c]) /
                   (ctx + trigram_prior);
        model.weights_[base + c] = static_cast<float>(std::log(p) - uniform);
      }
    }
  return model;
}

float trigram_model::score(std::string_view run) const noexcept {
  if (weights_.empty())
    return 0;
  const float* w = weights_.data();
  int a = edge;
  int b = edge;
  float sum = 0;
  for (char ch : run) {
    int c = ch - 'a';
    sum += w[(a * n + b) * n + c];
    a = b;
    b = c;
  }
  return sum + w[(a * n + b) * n + edge];
}

} // namespace mailassay::core::risk
