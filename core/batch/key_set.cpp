#include "core/batch/key_set.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

namespace mailassay::core::batch {

namespace {

constexpr std::size_t first_capacity = 1024;
constexpr std::size_t max_key = 0xFFFF;

std::uint32_t hash_of(std::string_view key) noexcept {
  return static_cast<std::uint32_t>(std::hash<std::string_view>{}(key));
}

} // namespace

// Returns the slot holding `key`, or the empty slot where it would go.
std::size_t key_set::probe(std::string_view key,
                           std::uint32_t h) const noexcept {
  auto mask = slots_.size() - 1;
  for (auto i = h & mask;; i = (i + 1) & mask) {
    const auto& s = slots_[i];
    if (s.at == 0)
      return i;
    if (s.hash != h)
      continue;
    const char* p = buffer_.data() + s.at - 1;
    auto size = static_cast<std::size_t>(static_cast<unsigned char>(p[0])) |
                static_cast<std::size_t>(static_cast<unsigned char>(p[1])) << 8;
    if (size == key.size() && std::memcmp(p + 2, key.data(), size) == 0)
      return i;
  }
}

void key_set::rehash(std::size_t capacity) {
  std::vector<slot> old(capacity);
  old.swap(slots_);
  auto mask = slots_.size() - 1;
  for (const auto& s : old) {
    if (s.at == 0)
      continue;
    auto i = s.hash & mask;
    while (slots_[i].at != 0)
      i = (i + 1) & mask;
    slots_[i] = s;
  }
}

bool key_set::insert(std::string_view key) {
  key = key.substr(0, max_key);
  if ((count_ + 1) * 2 > slots_.size())
    rehash(slots_.empty() ? first_capacity : slots_.size() * 2);
  auto h = hash_of(key);
  auto& s = slots_[probe(key, h)];
  if (s.at != 0)
    return false;
  s.hash = h;
  s.at = static_cast<std::uint32_t>(buffer_.size() + 1);
  buffer_ += static_cast<char>(key.size() & 0xFF);
  buffer_ += static_cast<char>(key.size() >> 8);
  buffer_.append(key);
  ++count_;
  return true;
}

void key_set::reserve(std::size_t n) {
  auto capacity = std::max(first_capacity, slots_.size());
  while (capacity < n * 2)
    capacity *= 2;
  if (capacity > slots_.size())
    rehash(capacity);
}

bool key_set::contains(std::string_view key) const noexcept {
  if (slots_.empty())
    return false;
  key = key.substr(0, max_key);
  return slots_[probe(key, hash_of(key))].at != 0;
}

} // namespace mailassay::core::batch
