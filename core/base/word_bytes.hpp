#pragma once

// Tests on the eight bytes of a 64-bit word at once, for the scans on the
// request path that look at every byte of a head or a JSON string (the
// classic "has zero byte" tricks). Each test is exact as a yes/no answer:
// it may flag a word for a byte other than the first that matches, never a
// word without one.

#include <cstdint>
#include <cstring>

namespace mailassay::core {

inline constexpr std::uint64_t byte_ones = 0x0101010101010101ull;
inline constexpr std::uint64_t byte_highs = 0x8080808080808080ull;

/// The eight bytes at `p`, in memory order, whatever `p`'s alignment.
inline std::uint64_t load_word(const char* p) noexcept {
  std::uint64_t x;
  std::memcpy(&x, p, 8);
  return x;
}

/// Whether a byte of `x` is below `n` (n <= 128).
constexpr bool has_byte_below(std::uint64_t x, unsigned n) noexcept {
  return ((x - n * byte_ones) & ~x & byte_highs) != 0;
}

/// Whether a byte of `x` equals `c`.
constexpr bool has_byte(std::uint64_t x, unsigned char c) noexcept {
  std::uint64_t y = x ^ (c * byte_ones);
  return ((y - byte_ones) & ~y & byte_highs) != 0;
}

/// Whether a byte of `x` is 0x80 or above (not ASCII).
constexpr bool has_high_byte(std::uint64_t x) noexcept {
  return (x & byte_highs) != 0;
}

} // namespace mailassay::core
