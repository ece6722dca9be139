#include "http/text_pool.hpp"

#include <vector>

namespace mailassay::http::text_pool {

namespace {

// Strings kept per thread, and the capacities worth keeping: below, glibc's
// own per-thread cache serves them; above, a rare export page.
constexpr std::size_t max_kept = 32;
constexpr std::size_t min_capacity = 512;
constexpr std::size_t max_capacity = 64 * 1024;

// Set when the thread's pool is gone (thread exit): a buffer let go after
// that is freed. A bool needs no destructor, so it outlives the pool.
thread_local bool gone = false;

struct pool {
  std::vector<std::string> strings;
  pool() { strings.reserve(max_kept); }
  ~pool() { gone = true; }
};

std::vector<std::string>* kept() {
  if (gone)
    return nullptr;
  thread_local pool p;
  return &p.strings;
}

} // namespace

std::string take() {
  auto* k = kept();
  if (!k || k->empty())
    return {};
  auto s = std::move(k->back());
  k->pop_back();
  return s;
}

void give(std::string&& s) {
  auto c = s.capacity();
  if (c < min_capacity || c > max_capacity)
    return;
  auto* k = kept();
  if (!k || k->size() >= max_kept)
    return;
  s.clear();
  k->push_back(std::move(s));
}

} // namespace mailassay::http::text_pool
