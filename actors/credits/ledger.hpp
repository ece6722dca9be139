#pragma once

// The credit ledger of SMTP validations: reserve -> commit | refund.
//
//   pipeline ──reserve_credit──> ledger ──store.take──> storage worker
//                                  ^                        │ conditional
//                                  └──ledger_write_done─────┘ UPDATE
//   (reserve_outcome: held, or refused with errc::insufficient_credits)
//   after the answer:  commit_credit (nothing to write: the reservation
//                      already took the credit) or refund_credit (give it
//                      back; the reply says when it is stored)
//
// The balance itself lives in the database: one conditional update per
// reservation (`balance >= 1`) is the single point of truth, also across
// processes sharing PostgreSQL, so concurrent validations never overdraw.
// A reservation counts as consumed at once (ledger kind `smtp_check`); a
// refund gives it back (`smtp_refund`, consumed lowered). The actor keeps
// the counters /metrics shows and orders each write's answer back into the
// requester's conversation.

#include "actors/messages.hpp"

#include <caf/fwd.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

namespace mailassay::actors {
class storage_pool;
} // namespace mailassay::actors

namespace mailassay::actors::credits {

/// Where the ledger writes: the database through storage workers in the
/// service, a test double in tests. `done` may run on any thread, once.
class ledger_store {
public:
  /// What a write reports.
  using callback = std::function<void(core::expected<core::unit>)>;

  virtual ~ledger_store() = default;

  /// Takes one credit from `r.organization_id` when the balance covers
  /// it; else fails with errc::insufficient_credits.
  virtual void take(const reservation& r, callback done) = 0;

  /// Gives back one credit `take` took.
  virtual void give_back(const reservation& r, callback done) = 0;
};

/// Returns a store writing through `pool` (ledger kinds `smtp_check` and
/// `smtp_refund`); `now` gives Unix seconds for the entries.
std::shared_ptr<ledger_store>
storage_ledger_store(storage_pool& pool, std::function<std::int64_t()> now);

/// Counters of the ledger, for /metrics and tests.
struct ledger_counters {
  std::atomic<std::uint64_t> reserved{0};  ///< Credits taken.
  std::atomic<std::uint64_t> refused{0};   ///< Reservations refused (402).
  std::atomic<std::uint64_t> committed{0}; ///< Credits kept (charged).
  std::atomic<std::uint64_t> refunded{0};  ///< Credits given back.
  std::atomic<std::uint64_t> failed{0};    ///< Writes that failed.
};

/// Spawns the ledger actor writing through `store`.
ledger_actor spawn_ledger(caf::actor_system& sys,
                          std::shared_ptr<ledger_store> store,
                          std::shared_ptr<ledger_counters> counters);

} // namespace mailassay::actors::credits
