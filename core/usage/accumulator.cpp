#include "core/usage/accumulator.hpp"

#include "core/usage/calendar.hpp"

#include <algorithm>

namespace mailassay::core::usage {

accumulator::accumulator(std::size_t max_addresses)
    : max_addresses_(max_addresses) {}

accumulator::entry& accumulator::slot(const std::string& key_id,
                                      const std::string& organization_id,
                                      const std::string& day) {
  auto it =
      entries_.find(std::pair<std::string_view, std::string_view>{key_id, day});
  if (it == entries_.end()) {
    it = entries_.try_emplace({key_id, day}).first;
    it->second.organization_id = organization_id;
  }
  return it->second;
}

void accumulator::add_hash(entry& e, const std::string& hash) {
  if (hash.empty())
    return;
  if (addresses_ >= max_addresses_) {
    if (e.hashes.count(hash) == 0)
      ++dropped_;
    return;
  }
  if (e.hashes.insert(hash).second)
    ++addresses_;
}

void accumulator::record(const std::string& key_id,
                         const std::string& organization_id,
                         std::int64_t unix_seconds, bool successful,
                         std::int64_t credits,
                         const std::string& address_hash) {
  auto n = day_number(unix_seconds);
  if (cached_day_.empty() || n != cached_day_number_) {
    cached_day_number_ = n;
    cached_day_ = format_day(n);
  }
  auto& e = slot(key_id, organization_id, cached_day_);
  e.requests += 1;
  e.successful += successful ? 1 : 0;
  e.credits += credits;
  add_hash(e, address_hash);
}

void accumulator::merge(const usage_increment& inc) {
  auto& e = slot(inc.key_id, inc.organization_id, inc.day);
  e.requests += inc.requests;
  e.successful += inc.successful;
  e.credits += inc.credits;
  for (const auto& h : inc.address_hashes)
    add_hash(e, h);
}

void accumulator::merge(const std::vector<usage_increment>& batch) {
  for (const auto& inc : batch)
    merge(inc);
}

std::vector<usage_increment> accumulator::drain() {
  std::vector<usage_increment> out;
  out.reserve(entries_.size());
  for (auto& [k, e] : entries_) {
    usage_increment inc;
    inc.key_id = k.first;
    inc.organization_id = std::move(e.organization_id);
    inc.day = k.second;
    inc.requests = e.requests;
    inc.successful = e.successful;
    inc.credits = e.credits;
    inc.address_hashes.reserve(e.hashes.size());
    while (!e.hashes.empty())
      inc.address_hashes.push_back(
          std::move(e.hashes.extract(e.hashes.begin()).value()));
    std::sort(inc.address_hashes.begin(), inc.address_hashes.end());
    out.push_back(std::move(inc));
  }
  entries_.clear();
  addresses_ = 0;
  return out;
}

} // namespace mailassay::core::usage
