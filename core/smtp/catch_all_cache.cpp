#include "core/smtp/catch_all_cache.hpp"

namespace mailassay::core::smtp {

catch_all_cache::catch_all_cache(limits::millis ttl, std::size_t max_entries)
    : ttl_(ttl), max_entries_(max_entries) {}

std::optional<bool> catch_all_cache::find(std::string_view domain,
                                          limits::millis now) const {
  auto it = entries_.find(std::string{domain});
  if (it == entries_.end() || it->second.expires <= now)
    return std::nullopt;
  return it->second.catch_all;
}

void catch_all_cache::store(std::string_view domain, bool catch_all,
                            limits::millis now) {
  if (max_entries_ == 0 || ttl_.count() <= 0)
    return;
  std::string key{domain};
  // A domain that refused a mailbox as unknown is not a catch-all: a true
  // learnt meanwhile (e.g. from a random address) does not replace it.
  if (catch_all) {
    auto it = entries_.find(key);
    if (it != entries_.end() && !it->second.catch_all &&
        it->second.expires > now)
      return;
  }
  if (entries_.size() >= max_entries_ && !entries_.contains(key)) {
    std::erase_if(entries_,
                  [&](const auto& kv) { return kv.second.expires <= now; });
    // Leave a tenth free (dropping fresh answers in table order if needed)
    // so that inserting stays amortised O(1).
    auto keep = max_entries_ - max_entries_ / 10 - 1;
    while (entries_.size() > keep)
      entries_.erase(entries_.begin());
  }
  entries_[std::move(key)] = entry{catch_all, now + ttl_};
}

} // namespace mailassay::core::smtp
