#include "core/risk/string_set.hpp"

#include "core/base/ascii.hpp"

#include <cstring>

namespace mailassay::core::risk {

namespace {

template <class F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (auto hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = trim_any(line, " \t\r\n\v\f");
    if (!line.empty())
      f(line);
  }
}

} // namespace

namespace {

std::uint64_t load64(const char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

std::uint64_t load32(const char* p) noexcept {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// Inline comparison: keys are short, and a library memcmp call costs more
// than the comparison itself.
bool same_bytes(const char* a, const char* b, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    if (load64(a + i) != load64(b + i))
      return false;
  for (; i < n; ++i)
    if (a[i] != b[i])
      return false;
  return true;
}

} // namespace

std::uint32_t string_set::hash(std::string_view key) noexcept {
  constexpr std::uint64_t k = 0x9e3779b97f4a7c15ull;
  const char* p = key.data();
  auto n = key.size();
  std::uint64_t h = (n + 1) * k;
  auto mix = [&](std::uint64_t w) {
    h = (h ^ w) * k;
    h ^= h >> 29;
  };
  // Fixed-size loads only (a variable-length memcpy is a library call);
  // the last word overlaps the previous one when the length is not a
  // multiple of 8.
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8)
      mix(load64(p + i));
    mix(load64(p + n - 8));
  } else if (n >= 4) {
    mix(load32(p) | load32(p + n - 4) << 32);
  } else if (n > 0) {
    auto b = [&](std::size_t i) {
      return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i]));
    };
    mix(b(0) | b(n / 2) << 8 | b(n - 1) << 16);
  }
  h *= k;
  return static_cast<std::uint32_t>(h >> 32);
}

string_set string_set::from_text(std::string_view text) {
  return from_texts({text});
}

string_set
string_set::from_texts(std::initializer_list<std::string_view> texts) {
  string_set result;
  std::size_t lines = 0;
  std::size_t bytes = 0;
  for (auto text : texts) {
    bytes += text.size();
    for (char c : text)
      lines += c == '\n';
    ++lines;
  }
  result.buffer_.reserve(bytes);
  result.rehash(lines * 2);
  std::string scratch;
  for (auto text : texts)
    for_each_line(text, [&](std::string_view line) {
      scratch.assign(line);
      for (auto& c : scratch)
        c = ascii_lower(c);
      result.insert(scratch);
    });
  result.buffer_.shrink_to_fit();
  return result;
}

void string_set::rehash(std::size_t capacity) {
  std::size_t size = 16;
  while (size < capacity)
    size *= 2;
  std::vector<slot> old;
  old.swap(slots_);
  slots_.assign(size, slot{});
  tags_.assign(size, 0);
  auto mask = size - 1;
  for (const auto& s : old)
    if (s.length != 0) {
      auto i = s.hash & mask;
      while (tags_[i] != 0)
        i = (i + 1) & mask;
      slots_[i] = s;
      tags_[i] = tag_of(s.hash);
    }
}

void string_set::insert(std::string_view key) {
  if (key.empty() || key.size() > 255 ||
      buffer_.size() + key.size() > (1u << 24) || contains(key))
    return;
  if ((count_ + 1) * 2 > slots_.size())
    rehash(slots_.size() * 2);
  auto h = hash(key);
  auto mask = slots_.size() - 1;
  auto i = h & mask;
  while (tags_[i] != 0)
    i = (i + 1) & mask;
  tags_[i] = tag_of(h);
  if (sketch_.empty())
    sketch_.assign(sketch_bits / 64, 0);
  auto bit = sketch_index(key);
  sketch_[bit / 64] |= std::uint64_t{1} << (bit % 64);
  slots_[i].hash = h;
  slots_[i].offset = static_cast<std::uint32_t>(buffer_.size());
  slots_[i].length = static_cast<std::uint32_t>(key.size());
  buffer_.append(key);
  ++count_;
}

std::string_view string_set::find_in_table(std::string_view key,
                                           std::uint32_t h) const noexcept {
  auto tag = tag_of(h);
  auto mask = slots_.size() - 1;
  for (auto i = h & mask;; i = (i + 1) & mask) {
    auto t = tags_[i];
    if (t == 0)
      return {};
    if (t != tag)
      continue;
    const auto& s = slots_[i];
    if (s.hash == h && s.length == key.size() &&
        same_bytes(buffer_.data() + s.offset, key.data(), key.size()))
      return {buffer_.data() + s.offset, s.length};
  }
}

} // namespace mailassay::core::risk
