#pragma once

#include <charconv>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace mailassay::http {

/// Appends to a string through a cursor into room reserved ahead, so a
/// literal is one fixed-size copy: the pieces of a response cost a third of
/// what one std::string::append each did. The string has its final size
/// again when the cursor goes.
class text_cursor {
public:
  /// Writes after what `out` holds, making room `ahead` bytes at a time.
  text_cursor(std::string& out, std::size_t ahead) : out_(out), ahead_(ahead) {
    auto used = out_.size();
    out_.resize(used + ahead_);
    at_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  ~text_cursor() { out_.resize(static_cast<std::size_t>(at_ - out_.data())); }

  text_cursor(const text_cursor&) = delete;
  text_cursor& operator=(const text_cursor&) = delete;

  template <std::size_t N>
  [[gnu::always_inline]] void raw(const char (&s)[N]) {
    put(s, N - 1);
  }

  void raw(std::string_view s) { put(s.data(), s.size()); }

  template <class Int>
  void integer(Int v) {
    room(24);
    at_ = std::to_chars(at_, end_, v).ptr;
  }

protected:
  [[gnu::always_inline]] void put(const char* s, std::size_t n) {
    room(n);
    std::memcpy(at_, s, n);
    at_ += n;
  }

  /// Makes room for `n` more bytes at the cursor.
  [[gnu::always_inline]] void room(std::size_t n) {
    if (static_cast<std::size_t>(end_ - at_) < n) [[unlikely]]
      grow(n);
  }

  char* at_;
  char* end_;

private:
  [[gnu::noinline]] void grow(std::size_t n) {
    auto used = static_cast<std::size_t>(at_ - out_.data());
    out_.resize(used + n + ahead_);
    at_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  std::string& out_;
  std::size_t ahead_;
};

} // namespace mailassay::http
