#include "core/batch/pace.hpp"

#include <algorithm>

namespace mailassay::core::batch {

namespace {

constexpr std::int64_t unit = 1000; // one address

} // namespace

pace::pace(pace_settings settings)
    : cfg_(settings),
      capacity_(std::max<std::int64_t>(settings.rate_under_load, 0) *
                    settings.burst.count() +
                unit),
      level_(capacity_) {}

void pace::observe(std::int64_t realtime_count, millis now) {
  if (!seen_any_) {
    seen_any_ = true;
    seen_ = realtime_count;
    return;
  }
  if (realtime_count != seen_) {
    seen_ = realtime_count;
    changed_ = true;
    changed_at_ = now;
  }
}

bool pace::under_load(millis now) const {
  return cfg_.rate_under_load > 0 && changed_ &&
         now - changed_at_ < cfg_.quiet_after;
}

void pace::refill(millis now) {
  if (now <= updated_)
    return;
  auto gained = (now - updated_).count() * cfg_.rate_under_load;
  level_ = std::min(capacity_, level_ + gained);
  updated_ = now;
}

bool pace::allows(millis now) {
  if (!under_load(now)) {
    // Quiet: the job runs unpaced, and starts full when load comes.
    level_ = capacity_;
    updated_ = std::max(updated_, now);
    return true;
  }
  refill(now);
  return level_ >= unit;
}

void pace::take(millis now, std::int64_t addresses) {
  refill(now);
  level_ -= addresses * unit;
}

void pace::set_rate(std::int64_t rate_under_load, millis now) {
  if (rate_under_load == cfg_.rate_under_load)
    return;
  refill(now);
  cfg_.rate_under_load = rate_under_load;
  capacity_ =
      std::max<std::int64_t>(rate_under_load, 0) * cfg_.burst.count() + unit;
  level_ = std::min(level_, capacity_);
}

millis pace::next_try(millis now) const {
  if (cfg_.rate_under_load <= 0 || level_ >= unit)
    return now;
  // Units missing for one address, at rate_under_load units per ms.
  auto missing = unit - level_;
  auto wait = (missing + cfg_.rate_under_load - 1) / cfg_.rate_under_load;
  return now + std::min(millis{wait}, cfg_.burst);
}

} // namespace mailassay::core::batch
