#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mailassay::testing {

/// Deterministic xorshift64*: the same generated cases on every run.
class generator {
public:
  explicit generator(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 2685821657736338717ULL;
  }

  std::size_t below(std::size_t n) { return next() % n; }
  bool chance(int percent) { return below(100) < std::size_t(percent); }

  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

private:
  std::uint64_t state_;
};

} // namespace mailassay::testing
