#include "core/smtp/result_cache.hpp"

namespace mailassay::core::smtp {

result_cache::result_cache(limits::millis ttl, std::size_t max_entries)
    : ttl_(ttl), max_entries_(max_entries) {}

std::optional<address_outcome> result_cache::find(std::string_view address,
                                                  limits::millis now) {
  if (!enabled())
    return std::nullopt;
  forget_expired(now);
  auto it = entries_.find(std::string{address});
  if (it == entries_.end() || it->second.expires <= now)
    return std::nullopt;
  auto o = it->second.outcome;
  o.source = answer_source::cache;
  return o;
}

bool result_cache::store(const address_outcome& outcome, limits::millis now) {
  if (!enabled() || !outcome.answered || !definitive(outcome.rcpt.verdict))
    return false;
  forget_expired(now);
  if (entries_.size() >= max_entries_ && !entries_.contains(outcome.address)) {
    std::erase_if(entries_,
                  [&](const auto& kv) { return kv.second.expires <= now; });
    // Leave a tenth free (dropping fresh answers in table order if needed)
    // so that inserting stays amortised O(1).
    auto keep = max_entries_ - max_entries_ / 10 - 1;
    while (entries_.size() > keep && !entries_.empty())
      entries_.erase(entries_.begin());
    // The pairs of dropped answers go too: the queue stays as bounded as
    // the table (once per tenth of it filled, so still amortised O(1)).
    std::erase_if(expiries_, [&](const auto& p) {
      auto it = entries_.find(p.second);
      return it == entries_.end() || it->second.expires != p.first;
    });
  }
  entries_[outcome.address] = entry{outcome, now + ttl_};
  expiries_.emplace_back(now + ttl_, outcome.address);
  return true;
}

void result_cache::forget_expired(limits::millis now) {
  while (!expiries_.empty() && expiries_.front().first <= now) {
    auto& [expires, address] = expiries_.front();
    auto it = entries_.find(address);
    // Only the pair of the answer still held; a newer answer stays.
    if (it != entries_.end() && it->second.expires == expires)
      entries_.erase(it);
    expiries_.pop_front();
  }
}

} // namespace mailassay::core::smtp
