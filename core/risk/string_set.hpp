#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::risk {

/// An immutable set of lower-case ASCII strings with allocation-free lookups.
///
/// All entries live in one buffer; an open-addressing table (load factor at
/// most 1/2, linear probing) stores each entry's offset, length and hash, so
/// a lookup is one hash, usually one probe and one memcmp. Entries longer
/// than 255 bytes (no domain or local part is) are ignored.
class string_set {
public:
  /// Builds an empty set.
  string_set() = default;

  /// Parses a list: one entry per line, `#` starts a comment, surrounding
  /// blanks are trimmed, entries are lower-cased, blank lines are skipped.
  static string_set from_text(std::string_view text);

  /// Parses several lists into one set (a shipped list plus operator extras).
  static string_set from_texts(std::initializer_list<std::string_view> texts);

  /// Returns whether `key` (compared byte for byte; pass it lower-cased) is
  /// in the set.
  bool contains(std::string_view key) const noexcept {
    return !find(key).empty();
  }

  /// Returns the stored copy of `key` if present, or an empty view; the view
  /// stays valid as long as the set lives.
  std::string_view find(std::string_view key) const noexcept {
    // Inline so that the usual miss costs one bit test at the call site.
    if (key.empty() || !may_contain(key))
      return {};
    return find_in_table(key, hash(key));
  }

  /// `find` with `key`'s `hash` computed by the caller, for one key looked
  /// up in several sets.
  std::string_view find(std::string_view key,
                        std::uint32_t key_hash) const noexcept {
    if (key.empty() || !may_contain(key))
      return {};
    return find_in_table(key, key_hash);
  }

  /// Returns false when `key` is certainly not in the set, from a 4 KiB
  /// summary of the entries (length, first and last byte); true means
  /// "maybe". Lets a caller skip hashing a key no set can hold.
  bool may_contain(std::string_view key) const noexcept {
    if (sketch_.empty() || key.empty())
      return false;
    auto i = sketch_index(key);
    return (sketch_[i / 64] >> (i % 64) & 1u) != 0;
  }

  /// Returns the number of distinct entries.
  std::size_t size() const noexcept { return count_; }

  /// Returns whether the set has no entries.
  bool empty() const noexcept { return count_ == 0; }

  /// Calls `f(std::string_view)` for every entry, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& s : slots_)
      if (s.length != 0)
        f(std::string_view{buffer_.data() + s.offset, s.length});
  }

  /// The hash used by the table (64-bit multiply-xor over 8-byte words,
  /// folded to 32 bits), exposed for tests.
  static std::uint32_t hash(std::string_view key) noexcept;

private:
  // 8 bytes: entries up to 255 bytes in a buffer of up to 16 MiB.
  struct slot {
    std::uint32_t hash = 0;
    std::uint32_t offset : 24 = 0;
    std::uint32_t length : 8 = 0; // 0 marks an empty slot
  };

  void insert(std::string_view key);
  void rehash(std::size_t capacity);
  std::string_view find_in_table(std::string_view key,
                                 std::uint32_t key_hash) const noexcept;

  // The sketch: one bit per (length, first byte, last byte), five bits of
  // each, set for every entry. Most lookups miss (a name is no role, a
  // company domain is not disposable), and most misses land on a clear bit:
  // answered without hashing or probing, from 4 KiB that stay in cache.
  static constexpr std::size_t sketch_bits = 1u << 15;
  static std::size_t sketch_index(std::string_view key) noexcept {
    auto byte = [](char c) {
      return static_cast<std::size_t>(static_cast<unsigned char>(c) & 31u);
    };
    return (key.size() & 31u) << 10 | byte(key.front()) << 5 | byte(key.back());
  }

  // One byte per slot, 0 when empty, else 1-255 from the hash: a miss,
  // the usual case, reads only this small array.
  static std::uint8_t tag_of(std::uint32_t hash) noexcept {
    return static_cast<std::uint8_t>((hash >> 24) | 1u);
  }

  std::string buffer_;
  std::vector<std::uint8_t> tags_;
  std::vector<slot> slots_;
  std::vector<std::uint64_t> sketch_; // empty until the first insert
  std::size_t count_ = 0;
};

/// A set of lower-case ASCII domain names (A-labels), matched exactly.
using domain_set = string_set;

/// A set of lower-case role local parts (`info`, `sales`, `postmaster`).
using role_set = string_set;

/// A set of lower-case ASCII-folded names or words.
using name_set = string_set;

} // namespace mailassay::core::risk
