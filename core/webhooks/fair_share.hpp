#pragma once

// Which organizations' deliveries get the dispatcher's free attempt slots
// (docs/webhooks.md, "Fairness"). Each organization with work (attempts in
// flight or deliveries due) has a share: the slots divided by their
// number, at most `per_organization` and at least one. An organization at
// its share gets no new slot, even when slots are free, so an
// organization whose endpoints never answer holds at most its share and
// the others' deliveries start at once while slots remain. Free slots go
// one at a time, round-robin, to the organization with the fewest in
// flight first (ties: the one whose oldest due delivery waited longest).
// Pure: the dispatcher passes its counts in and claims what this returns.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mailassay::core::webhooks {

/// The slots of one process.
struct slot_limits {
  std::int64_t total = 16;           ///< webhooks.concurrency.
  std::int64_t per_organization = 4; ///< webhooks.organization_concurrency.
};

/// One organization's new slots.
struct allotment {
  std::string organization_id;
  std::int64_t slots = 0; ///< > 0.

  /// Compares both fields.
  friend bool operator==(const allotment&, const allotment&) = default;
};

/// The most attempts one organization may have in flight when
/// `active_organizations` have work: total / active, capped by
/// per_organization, at least 1.
std::int64_t share_of(const slot_limits& limits,
                      std::int64_t active_organizations);

/// Shares the free slots among `waiting` (organizations with due
/// deliveries, oldest due first). `in_flight` counts the attempts running
/// per organization (organizations absent run none). Returns the new
/// slots per organization, in `waiting` order, only those given some.
std::vector<allotment>
allot(const slot_limits& limits,
      const std::map<std::string, std::int64_t>& in_flight,
      const std::vector<std::string>& waiting);

} // namespace mailassay::core::webhooks
