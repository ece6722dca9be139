#pragma once

#include "storage/store.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::actors {

class storage_pool;

/// One authenticated validation request to count (see docs/usage-stats.md).
struct usage_event {
  std::string key_id;
  std::string organization_id;
  std::int64_t at = 0;     ///< Unix seconds; the UTC day is taken from it.
  bool successful = false; ///< Answered 200 (valid or not).
  std::int64_t credits = 0;
  std::string address_hash; ///< SHA-256 hex of the address; "" = none.
};

/// Inspects a usage_event (CAF 0.17 style), so it can travel in messages.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, usage_event& x) {
  return f(caf::meta::type_name("usage_event"), x.key_id, x.organization_id,
           x.at, x.successful, x.credits, x.address_hash);
}

/// A one-shot completion callback: the first call reports the outcome
/// (`true` = done); when every copy is destroyed without a call, it reports
/// `false` by itself, so a job that is dropped or throws never leaves its
/// waiter hanging. Copies share one state; safe from any thread.
class flush_done {
public:
  /// A callback that reports nothing.
  flush_done() = default;

  /// Wraps `report`, which runs at most once.
  explicit flush_done(std::function<void(bool ok)> report);

  /// Reports `ok` unless some copy already reported.
  void operator()(bool ok) const;

  /// Shared between copies.
  struct state;

private:
  std::shared_ptr<state> state_;
};

/// A batch of usage increments as `storage::store::add_usage` takes it.
using usage_batch = std::vector<storage::usage_increment>;

/// Where a flush sends its batch: called on the recorder's scheduler
/// thread, so it must not block (hand the batch to a storage job); it calls
/// `done(true)` once the whole batch is stored, `done(false)` (or drops
/// `done`) when nothing of it was, and the batch is then merged back and
/// retried on the next flush. A batch must be stored whole or not at all
/// (`add_usage` is one transaction).
using usage_sink = std::function<void(usage_batch batch, flush_done done)>;

/// Tuning of the usage recorder.
struct usage_recorder_settings {
  /// Time between periodic flushes: the most a crash can lose.
  std::chrono::milliseconds flush_interval{2000};
  /// `pending()` of the accumulator ((key, day) entries + address hashes)
  /// that triggers a flush before the interval ends.
  std::size_t flush_threshold = 10000;
  /// Address hashes held at most while storage is down; beyond it, distinct
  /// addresses are dropped (counters are kept).
  std::size_t max_addresses = 1'000'000;
  /// How long `flush_and_stop` waits for the last write.
  std::chrono::milliseconds stop_timeout{10000};
  /// Key of the hash stored per distinct address (HMAC-SHA256 of the
  /// lower-cased address), derived from the server's secret key: a
  /// dictionary of addresses does not reverse it (docs/privacy.md). Empty
  /// (unit tests only): a bare SHA-256.
  std::string address_key;
};

/// Counters of the recorder, for /metrics.
struct usage_gauges {
  std::atomic<std::int64_t> pending{0};           ///< Accumulator size.
  std::atomic<std::int64_t> flushes{0};           ///< Batches written.
  std::atomic<std::int64_t> failed_flushes{0};    ///< Batches put back.
  std::atomic<std::int64_t> dropped_addresses{0}; ///< Beyond the bound.
};

/// Periodic flush timer (sent by the recorder to itself).
using usage_tick_atom = caf::atom_constant<caf::atom("usg_tick")>;
/// The tick atom's value.
constexpr usage_tick_atom usage_tick_atom_v = usage_tick_atom{};

/// Asks for a flush of everything recorded so far.
using usage_flush_atom = caf::atom_constant<caf::atom("usg_flush")>;
/// The flush atom's value.
constexpr usage_flush_atom usage_flush_atom_v = usage_flush_atom{};

/// The outcome of the batch in flight (sent by the sink's `flush_done`).
using usage_done_atom = caf::atom_constant<caf::atom("usg_done")>;
/// The done atom's value.
constexpr usage_done_atom usage_done_atom_v = usage_done_atom{};

/// Asks the recorder to take in what the facade buffered (sent by
/// `usage_recorder::record` when its buffer reaches `flush_threshold`).
using usage_drain_atom = caf::atom_constant<caf::atom("usg_drain")>;
/// The drain atom's value.
constexpr usage_drain_atom usage_drain_atom_v = usage_drain_atom{};

/// Requests counted by `usage_recorder::record` between two drains: a
/// vector under a short mutex, so the hot path sends no message per
/// request. Shared by the facade and its actor; defined in the .cpp.
struct usage_buffer;

/// The usage recorder's messages:
/// - `usage_event`: count one request; no reply (the facade buffers instead,
///   see `usage_buffer`; the message is for other senders and tests);
/// - `usage_drain_atom`: take in the facade's buffer now;
/// - `usage_tick_atom`: the periodic flush, sent to itself;
/// - `(usage_done_atom, flush id, ok)`: the outcome of the batch in flight;
/// - `usage_flush_atom` -> `bool`: flushes everything recorded before it,
///   answering `true` once stored, `false` when that write failed (the data
///   is then kept for the next flush);
/// - `(usage_flush_atom, flush_done)`: the same, reported to a callback.
using usage_recorder_actor =
    caf::typed_actor<caf::reacts_to<usage_event>,
                     caf::reacts_to<usage_tick_atom>,
                     caf::reacts_to<usage_drain_atom>,
                     caf::reacts_to<usage_done_atom, std::uint64_t, bool>,
                     caf::replies_to<usage_flush_atom>::with<bool>,
                     caf::reacts_to<usage_flush_atom, flush_done>>;

/// Spawns a usage recorder writing through `sink`; `gauges` may be null.
/// With a `buffer`, the recorder takes in its events on every tick, on
/// `usage_drain_atom` and before every flush request.
usage_recorder_actor
spawn_usage_recorder(caf::actor_system& sys, usage_sink sink,
                     usage_recorder_settings cfg,
                     std::shared_ptr<usage_gauges> gauges = nullptr,
                     std::shared_ptr<usage_buffer> buffer = nullptr);

/// A sink that writes each batch with `add_usage` in a job on `pool`.
/// When a batch is refused because a key no longer exists (errc::not_found)
/// it writes the increments one by one and drops those of deleted keys, so
/// one deleted key cannot hold back everyone's usage.
usage_sink storage_usage_sink(storage_pool& pool);

/// Per-key, per-day usage counters batched in memory and written to storage
/// every `flush_interval` (see docs/usage-stats.md).
///
/// The facade keeps CAF out of callers: `record` appends to a buffer under
/// a short lock (no message, no actor activation per request) that the
/// actor takes in on its tick, when it reaches `flush_threshold` events,
/// and before every flush; `flush_and_stop` is the only call that waits.
class usage_recorder {
public:
  /// Spawns the recorder actor in `sys`, writing through `sink`.
  usage_recorder(caf::actor_system& sys, usage_sink sink,
                 usage_recorder_settings cfg = {});

  /// Stops the actor without flushing (call `flush_and_stop` first).
  ~usage_recorder();

  usage_recorder(const usage_recorder&) = delete;
  usage_recorder& operator=(const usage_recorder&) = delete;

  /// Counts one request of `key_id` at `unix_seconds`; never waits.
  void record(std::string key_id, std::string organization_id,
              std::int64_t unix_seconds, bool successful, std::int64_t credits,
              std::string address_hash);

  /// Counts one request; never waits.
  void record(usage_event event);

  /// Counts one request for `address` (as given; "" = none), whose SHA-256
  /// the recorder computes when it takes the event in, off the caller's
  /// thread and once per distinct address of a drain. Never waits.
  void record_address(std::string key_id, std::string organization_id,
                      std::int64_t unix_seconds, bool successful,
                      std::int64_t credits, std::string address);

  /// As record_address, for a request made with `key`: its id and
  /// organization are read from the shared key when the event is taken in,
  /// and `address` is copied into the buffer's own text, so the caller's
  /// thread allocates nothing per request (every API request calls this).
  void record_key(std::shared_ptr<const core::account::api_key> key,
                  std::int64_t unix_seconds, bool successful,
                  std::int64_t credits, std::string_view address);

  /// Flushes everything recorded so far and reports to `done` (on some
  /// actor thread) without waiting, e.g. before reading stats.
  void flush(flush_done done);

  /// Flushes everything recorded so far, waits up to `stop_timeout`, then
  /// stops the actor. Returns whether everything was stored. For shutdown
  /// only: it blocks the calling thread.
  bool flush_and_stop();

  /// Returns the recorder's counters.
  const usage_gauges& gauges() const { return *gauges_; }

  /// Returns the actor (for tests and composition).
  const usage_recorder_actor& handle() const { return actor_; }

private:
  caf::actor_system& sys_;
  usage_recorder_settings cfg_;
  std::shared_ptr<usage_gauges> gauges_;
  std::shared_ptr<usage_buffer> buffer_;
  usage_recorder_actor actor_;
};

} // namespace mailassay::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::flush_done)
