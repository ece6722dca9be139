#include "core/limits/token_bucket.hpp"

#include <algorithm>
#include <limits>

namespace mailassay::core::limits {

namespace {

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a <= 0 ? 0 : (a + b - 1) / b;
}

// level + elapsed * limit may reach twice the capacity before clamping, so
// the capacity in units must stay below half of the 64-bit range.
window_spec sanitize(window_spec spec) {
  spec.period = std::max(spec.period, millis{1});
  auto max_limit = int64_max / 2 / spec.period.count();
  spec.limit = std::clamp<std::int64_t>(spec.limit, 1, max_limit);
  return spec;
}

} // namespace

token_bucket::token_bucket(window_spec spec, millis now)
    : spec_(sanitize(spec)), level_(spec_.limit * spec_.period.count()),
      updated_(now), last_take_(now) {}

token_bucket token_bucket::at_level(window_spec spec, std::int64_t level,
                                    millis now) {
  token_bucket b(spec, now);
  auto capacity = b.spec_.limit * b.spec_.period.count();
  b.level_ = std::clamp<std::int64_t>(level, 0, capacity);
  return b;
}

std::int64_t token_bucket::level_at(millis now) const {
  auto elapsed = (now - updated_).count();
  auto capacity = spec_.limit * spec_.period.count();
  if (elapsed <= 0)
    return level_;
  // An empty bucket is full again after one period; capping elapsed there
  // keeps the product below the capacity.
  if (elapsed >= spec_.period.count())
    return capacity;
  return std::min(capacity, level_ + elapsed * spec_.limit);
}

decision token_bucket::report(std::int64_t level, bool allowed,
                              std::int64_t n) const {
  auto unit = spec_.period.count();
  auto capacity = spec_.limit * unit;
  decision d;
  d.allowed = allowed;
  d.limit = spec_.limit;
  d.remaining = level / unit;
  // ceil(ceil(x / rate) / 1000) == ceil(x / (rate * 1000)) without overflow.
  d.reset_seconds = ceil_div(ceil_div(capacity - level, spec_.limit), 1000);
  if (!allowed) {
    auto missing = n > spec_.limit ? capacity - level : n * unit - level;
    d.retry_after_seconds = std::max<std::int64_t>(
        1, ceil_div(ceil_div(missing, spec_.limit), 1000));
  }
  return d;
}

decision token_bucket::peek(millis now, std::int64_t n) const {
  n = std::max<std::int64_t>(n, 0);
  auto level = level_at(now);
  bool ok = n <= spec_.limit && level >= n * spec_.period.count();
  return report(ok ? level - n * spec_.period.count() : level, ok, n);
}

bool token_bucket::can_take(millis now, std::int64_t n) const {
  n = std::max<std::int64_t>(n, 0);
  return n <= spec_.limit && level_at(now) >= n * spec_.period.count();
}

decision token_bucket::take(millis now, std::int64_t n) {
  n = std::max<std::int64_t>(n, 0);
  level_ = level_at(now);
  updated_ = std::max(updated_, now);
  bool ok = n <= spec_.limit && level_ >= n * spec_.period.count();
  if (ok) {
    level_ -= n * spec_.period.count();
    last_take_ = std::max(last_take_, now);
  }
  return report(level_, ok, n);
}

void token_bucket::reshape(window_spec spec, millis now) {
  spec = sanitize(spec);
  if (spec == spec_)
    return;
  if (spec.period != spec_.period) {
    auto last = last_take_;
    *this = token_bucket(spec, std::max(now, updated_));
    last_take_ = last;
    return;
  }
  auto unit = spec_.period.count();
  auto consumed = spec_.limit * unit - level_at(now);
  spec_ = spec;
  auto capacity = spec_.limit * unit;
  level_ = std::clamp<std::int64_t>(capacity - consumed, 0, capacity);
  updated_ = std::max(updated_, now);
}

millis token_bucket::full_at(millis now) const {
  auto capacity = spec_.limit * spec_.period.count();
  auto from = std::max(now, updated_);
  return from + millis{ceil_div(capacity - level_at(now), spec_.limit)};
}

std::int64_t token_bucket::available(millis now) const {
  return level_at(now) / spec_.period.count();
}

bool tighter(const decision& a, const decision& b) {
  if (a.remaining != b.remaining)
    return a.remaining < b.remaining;
  return a.reset_seconds < b.reset_seconds;
}

combined_decision take_all(std::span<token_bucket* const> buckets, millis now,
                           std::int64_t n) {
  // Every request runs this: the first pass only compares levels; reports
  // (a few divisions each) are built for the buckets taken from, or, when
  // refused, for the refusing ones.
  bool all_ok = true;
  for (auto* b : buckets)
    all_ok = all_ok && (!b || b->can_take(now, n));
  combined_decision out;
  bool found = false;
  if (!all_ok) {
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      if (!buckets[i] || buckets[i]->can_take(now, n))
        continue;
      auto d = buckets[i]->peek(now, n);
      const auto& best = out.result;
      if (!found || d.retry_after_seconds > best.retry_after_seconds ||
          (d.retry_after_seconds == best.retry_after_seconds &&
           tighter(d, best))) {
        out = {d, i};
        found = true;
      }
    }
    return out;
  }
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    if (!buckets[i])
      continue;
    auto d = buckets[i]->take(now, n);
    if (!found || tighter(d, out.result)) {
      out = {d, i};
      found = true;
    }
  }
  return out;
}

combined_decision peek_all(std::span<const token_bucket* const> buckets,
                           millis now) {
  combined_decision out;
  bool found = false;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    if (!buckets[i])
      continue;
    auto d = buckets[i]->peek(now, 0);
    if (!found || tighter(d, out.result)) {
      out = {d, i};
      found = true;
    }
  }
  return out;
}

} // namespace mailassay::core::limits
