#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace mailassay::core::usage {

/// Usage of one key on one UTC day, to be added to the stored counters;
/// mirrors `storage::usage_increment` field by field (core does not see
/// storage, so `actors/` converts).
struct usage_increment {
  std::string key_id;
  std::string organization_id;
  std::string day; ///< "YYYY-MM-DD", UTC.
  std::int64_t requests = 0;
  std::int64_t successful = 0; ///< Requests answered 200.
  std::int64_t credits = 0;
  /// Distinct address hashes validated that day, ascending.
  std::vector<std::string> address_hashes;
};

/// Address hashes held at most by default (about 100 MB of SHA-256 hex).
inline constexpr std::size_t default_max_addresses = 1'000'000;

/// In-memory per-(key, day) usage counters waiting to be written.
///
/// `record` adds one request; `drain` hands everything over and starts
/// empty; `merge` puts back a drained batch that could not be written.
/// Counters are exact; the set of address hashes is bounded by
/// `max_addresses` (hashes beyond it are counted in `dropped_addresses` and
/// forgotten, so distinct counts may then be low but memory stays bounded
/// while storage is down).
class accumulator {
public:
  /// Creates an empty accumulator holding at most `max_addresses` hashes.
  explicit accumulator(std::size_t max_addresses = default_max_addresses);

  /// Counts one request of `key_id` (of `organization_id`) at
  /// `unix_seconds` (UTC day); `successful` = answered 200. An empty
  /// `address_hash` (no address got that far) adds no distinct address.
  void record(const std::string& key_id, const std::string& organization_id,
              std::int64_t unix_seconds, bool successful, std::int64_t credits,
              const std::string& address_hash);

  /// Adds a previously drained increment back (after a failed write).
  void merge(const usage_increment& inc);

  /// Adds previously drained increments back (after a failed write).
  void merge(const std::vector<usage_increment>& batch);

  /// Returns all pending increments, ordered by (key_id, day), and empties
  /// the accumulator.
  std::vector<usage_increment> drain();

  /// Returns the size of what is held: (key, day) entries plus address
  /// hashes; the owner flushes early when it grows large.
  std::size_t pending() const { return entries_.size() + addresses_; }

  /// Returns whether nothing is held.
  bool empty() const { return entries_.empty(); }

  /// Returns how many address hashes were forgotten because the bound was
  /// reached (since construction).
  std::uint64_t dropped_addresses() const { return dropped_; }

private:
  struct entry {
    std::string organization_id;
    std::int64_t requests = 0;
    std::int64_t successful = 0;
    std::int64_t credits = 0;
    std::unordered_set<std::string> hashes;
  };
  entry& slot(const std::string& key_id, const std::string& organization_id,
              const std::string& day);
  void add_hash(entry& e, const std::string& hash);

  std::size_t max_addresses_;
  std::size_t addresses_ = 0;
  std::uint64_t dropped_ = 0;
  // (key_id, day) in that order, found without copying the strings.
  struct key_less {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::pair<std::string_view, std::string_view>{a.first, a.second} <
             std::pair<std::string_view, std::string_view>{b.first, b.second};
    }
  };
  std::map<std::pair<std::string, std::string>, entry, key_less> entries_;
  // The day string of the last day number seen: most records share a day.
  std::int64_t cached_day_number_ = 0;
  std::string cached_day_;
};

} // namespace mailassay::core::usage
