#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::batch {

/// A growing set of byte strings (at most 65535 bytes each) for
/// de-duplication: one buffer holds the keys back to back, an
/// open-addressing table (linear probing, load at most 1/2) of 8-byte slots
/// finds them. Inserting allocates only when the buffer or the table grows.
class key_set {
public:
  /// Builds an empty set.
  key_set() = default;

  /// Adds `key`; returns false when it was already in the set (a key longer
  /// than 65535 bytes is cut there).
  bool insert(std::string_view key);

  /// Makes room for `n` keys in all without growing the table again.
  void reserve(std::size_t n);

  /// Returns whether `key` is in the set.
  bool contains(std::string_view key) const noexcept;

  /// Returns the number of keys.
  std::size_t size() const noexcept { return count_; }

private:
  // 8 bytes: the low half of the key's hash (which also picks the slot)
  // and where the key starts in the buffer, plus one (0: empty slot). The
  // buffer holds each key as a 2-byte length then its bytes, up to 4 GiB
  // in all (an upload is 10 MiB).
  struct slot {
    std::uint32_t hash = 0;
    std::uint32_t at = 0;
  };

  std::size_t probe(std::string_view key, std::uint32_t h) const noexcept;
  void rehash(std::size_t capacity);

  std::string buffer_;
  std::vector<slot> slots_;
  std::size_t count_ = 0;
};

} // namespace mailassay::core::batch
