#pragma once

#include <string>

namespace mailassay::http {

/// Response texts of about a kilobyte are glibc "large" requests: each
/// malloc and free of one goes past the per-thread cache and consolidates
/// the fast bins, a fifth of a validation's user time in the benchmark. The
/// pool keeps a few such strings per thread for the next response instead.
namespace text_pool {

/// An empty string, with the capacity of one given back earlier on this
/// thread when there is one.
std::string take();

/// Keeps `s` (emptied) for a later `take` on this thread when it is of a
/// useful size and the pool is not full; frees it otherwise.
void give(std::string&& s);

} // namespace text_pool

/// A response buffer for RESTinio that goes back to the pool of the thread
/// that lets go of it (the I/O thread, once the bytes are written).
class pooled_text {
public:
  explicit pooled_text(std::string s) : s_(std::move(s)) {}
  pooled_text(pooled_text&&) noexcept = default;
  pooled_text& operator=(pooled_text&&) = delete;
  ~pooled_text() { text_pool::give(std::move(s_)); }

  const char* data() const { return s_.data(); }
  std::size_t size() const { return s_.size(); }

private:
  std::string s_;
};

} // namespace mailassay::http
