#include "core/limits/multi_window.hpp"

#include <algorithm>

namespace mailassay::core::limits {

std::vector<window_spec> key_windows(std::optional<std::int64_t> per_minute,
                                     std::optional<std::int64_t> per_hour,
                                     std::optional<std::int64_t> per_day) {
  std::vector<window_spec> out;
  auto add = [&out](std::optional<std::int64_t> limit, millis period) {
    if (limit && *limit > 0)
      out.push_back({*limit, period});
  };
  add(per_minute, minute);
  add(per_hour, hour);
  add(per_day, day);
  return out;
}

multi_window::multi_window(std::vector<window_spec> specs, millis now)
    : specs_(std::move(specs)), created_(now) {
  buckets_.reserve(specs_.size());
  for (const auto& s : specs_)
    buckets_.emplace_back(s, now);
}

decision multi_window::take(millis now, std::int64_t n) {
  token_bucket* ptrs[8];
  std::vector<token_bucket*> many;
  token_bucket** first = ptrs;
  if (buckets_.size() > 8) {
    many.resize(buckets_.size());
    first = many.data();
  }
  for (std::size_t i = 0; i < buckets_.size(); ++i)
    first[i] = &buckets_[i];
  return take_all({first, buckets_.size()}, now, n).result;
}

decision multi_window::peek(millis now, std::int64_t n) const {
  // Same choice as take_all, on copies: nothing here is mutated.
  auto copy = *this;
  return copy.take(now, n);
}

void multi_window::reshape(const std::vector<window_spec>& specs, millis now) {
  if (specs == specs_)
    return;
  std::vector<token_bucket> next;
  next.reserve(specs.size());
  for (const auto& s : specs) {
    auto same = std::find_if(buckets_.begin(), buckets_.end(), [&](auto& b) {
      return b.spec().period == s.period;
    });
    if (same != buckets_.end()) {
      next.push_back(*same);
      next.back().reshape(s, now);
    } else {
      next.emplace_back(s, now);
    }
  }
  specs_ = specs;
  buckets_ = std::move(next);
}

millis multi_window::full_at(millis now) const {
  auto out = now;
  for (const auto& b : buckets_)
    out = std::max(out, b.full_at(now));
  return out;
}

millis multi_window::idle_since() const {
  auto out = created_;
  for (const auto& b : buckets_)
    out = std::max(out, b.idle_since());
  return out;
}

} // namespace mailassay::core::limits
