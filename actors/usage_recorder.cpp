#include "actors/usage_recorder.hpp"

#include "actors/blocking_ask.hpp"
#include "actors/storage_pool.hpp"
#include "core/base/ascii.hpp"
#include "core/usage/accumulator.hpp"
#include "log/log.hpp"
#include "security/digest.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace mailassay::actors {

// -- flush_done ---------------------------------------------------------------

struct flush_done::state {
  std::function<void(bool)> report;
  std::atomic<bool> reported{false};

  void once(bool ok) {
    if (!reported.exchange(true) && report)
      report(ok);
  }

  ~state() { once(false); }
};

flush_done::flush_done(std::function<void(bool ok)> report)
    : state_(std::make_shared<state>()) {
  state_->report = std::move(report);
}

void flush_done::operator()(bool ok) const {
  if (state_)
    state_->once(ok);
}

// -- the buffer ---------------------------------------------------------------

struct usage_buffer {
  /// One buffered request. `event.address_hash` only ever holds a hash;
  /// an address given as is waits in `address` (its own field, so no field
  /// named for a hash holds a raw address) and is hashed when taken in.
  struct entry {
    usage_event event;
    std::string address; ///< The raw address to hash; "" = none.
    /// When set, its id and organization stand for the event's (empty).
    std::shared_ptr<const core::account::api_key> key;
  };

  /// One request made with an API key (usage_recorder::record_key), the
  /// one kind every API request adds: a third of an `entry`'s size, its
  /// address's bytes in `fill::addresses`. The request's thread writes one
  /// cache line or two and frees nothing it did not allocate itself.
  struct keyed_entry {
    std::shared_ptr<const core::account::api_key> key;
    std::int64_t at = 0;
    std::int64_t credits = 0;
    std::size_t address_at = 0;   ///< In fill::addresses.
    std::size_t address_size = 0; ///< 0 = none.
    bool successful = false;
  };

  /// What the buffer holds between two drains.
  struct fill {
    std::vector<entry> entries;
    std::vector<keyed_entry> keyed;
    std::string addresses; ///< keyed_entry's addresses, one after another.

    std::size_t size() const { return entries.size() + keyed.size(); }
    void clear() {
      entries.clear();
      keyed.clear();
      // A fill of long inputs does not keep its room for good (a usual
      // fill of 10000 addresses is ~250 KB).
      if (addresses.capacity() > (std::size_t{1} << 20))
        std::string{}.swap(addresses);
      else
        addresses.clear();
    }
    std::string_view address_of(const keyed_entry& k) const {
      return std::string_view{addresses}.substr(k.address_at, k.address_size);
    }
  };

  explicit usage_buffer(std::size_t drain_at) : drain_at(drain_at) {}

  /// Appends one entry; returns whether the buffer just reached `drain_at`
  /// (the caller then asks the actor to drain it, once per fill).
  bool push(entry e) {
    std::lock_guard guard{mtx};
    current.entries.push_back(std::move(e));
    return current.size() == drain_at;
  }

  /// Appends one request of `key`, as push() does.
  bool push_keyed(std::shared_ptr<const core::account::api_key> key,
                  std::int64_t at, bool successful, std::int64_t credits,
                  std::string_view address) {
    std::lock_guard guard{mtx};
    current.keyed.push_back(keyed_entry{std::move(key), at, credits,
                                        current.addresses.size(),
                                        address.size(), successful});
    current.addresses.append(address);
    return current.size() == drain_at;
  }

  /// Hands over everything buffered, keeping `spare`'s capacity for the
  /// next fill.
  fill take(fill&& spare) {
    spare.clear();
    std::lock_guard guard{mtx};
    std::swap(current, spare);
    return std::move(spare);
  }

  const std::size_t drain_at;
  std::mutex mtx;
  fill current;
};

// -- the actor ----------------------------------------------------------------

namespace {

using core::usage::usage_increment;

struct flight {
  std::uint64_t id = 0;
  std::vector<usage_increment> batch; // merged back if the write fails
};

struct recorder_state {
  core::usage::accumulator acc;
  usage_sink sink;
  usage_recorder_settings cfg;
  std::shared_ptr<usage_gauges> gauges;
  std::uint64_t next_id = 0;
  std::optional<flight> in_flight;
  // Flush requests answered by the flight in progress, and those that
  // arrived during it (they also need what was recorded since).
  std::vector<std::function<void(bool)>> waiting_current;
  std::vector<std::function<void(bool)>> waiting_next;
  std::shared_ptr<usage_buffer> buffer;
  usage_buffer::fill taken; // reused between drains
  static inline const char* name = "usage_recorder";
};

using recorder_ptr = usage_recorder_actor::stateful_pointer<recorder_state>;

usage_batch to_storage(const std::vector<usage_increment>& batch) {
  usage_batch out;
  out.reserve(batch.size());
  for (const auto& inc : batch)
    out.push_back({inc.key_id, inc.organization_id, inc.day, inc.requests,
                   inc.successful, inc.credits, inc.address_hashes});
  return out;
}

void update_gauges(recorder_state& st) {
  st.gauges->pending = static_cast<std::int64_t>(st.acc.pending());
  st.gauges->dropped_addresses =
      static_cast<std::int64_t>(st.acc.dropped_addresses());
}

void answer(std::vector<std::function<void(bool)>>& waiters, bool ok) {
  auto ws = std::move(waiters);
  waiters.clear();
  for (auto& w : ws)
    w(ok);
}

// What is stored for one address: its keyed hash (a bare one without a
// key), case-insensitive.
std::string address_digest(const std::string& key, std::string_view address) {
  auto lower = core::ascii_lower(address);
  return key.empty() ? security::sha256_hex(lower)
                     : security::hmac_sha256_hex(key, lower);
}

// Takes in what the facade buffered. Addresses are hashed here, off the
// request threads, once per distinct address of this drain.
void take_buffer(recorder_state& st) {
  if (!st.buffer)
    return;
  st.taken = st.buffer->take(std::move(st.taken));
  if (st.taken.size() == 0)
    return;
  // Keys view the taken addresses, which stay put until clear().
  std::unordered_map<std::string_view, std::string> hashes;
  auto hash_of = [&](std::string_view address) -> const std::string& {
    auto [i, fresh] = hashes.try_emplace(address);
    if (fresh)
      i->second = address_digest(st.cfg.address_key, address);
    return i->second; // nodes stay put: no copy per event
  };
  for (auto& [e, address, key] : st.taken.entries)
    st.acc.record(key ? key->id : e.key_id,
                  key ? key->organization_id : e.organization_id, e.at,
                  e.successful, e.credits,
                  address.empty() ? e.address_hash : hash_of(address));
  static const std::string none;
  for (auto& k : st.taken.keyed)
    st.acc.record(k.key->id, k.key->organization_id, k.at, k.successful,
                  k.credits,
                  k.address_size ? hash_of(st.taken.address_of(k)) : none);
  st.taken.clear();
}

// Drains the accumulator into one batch for the sink. Nothing to write
// answers the waiters at once.
void start_flush(recorder_ptr self) {
  auto& st = self->state;
  auto batch = st.acc.drain();
  update_gauges(st);
  if (batch.empty()) {
    answer(st.waiting_current, true);
    return;
  }
  auto id = ++st.next_id;
  auto out = to_storage(batch);
  st.in_flight = flight{id, std::move(batch)};
  // Weak: a job finishing after the recorder stopped reports to no one.
  auto addr = self->address();
  flush_done done{[addr, id](bool ok) {
    if (auto hdl = caf::actor_cast<usage_recorder_actor>(addr))
      caf::anon_send(hdl, usage_done_atom_v, id, ok);
  }};
  try {
    st.sink(std::move(out), std::move(done));
  } catch (const std::exception& e) {
    // `done` was destroyed unreported: the flight fails and is retried.
    log::event(log::level::error, "usage_sink_failed", {{"error", e.what()}});
  }
}

void request_flush(recorder_ptr self, std::function<void(bool)> waiter) {
  auto& st = self->state;
  // Everything counted before the request, buffered or not, goes out with
  // the flight that answers it.
  take_buffer(st);
  if (st.in_flight) {
    st.waiting_next.push_back(std::move(waiter));
    return;
  }
  st.waiting_current.push_back(std::move(waiter));
  start_flush(self);
}

usage_recorder_actor::behavior_type
usage_recorder_fn(recorder_ptr self, usage_sink sink,
                  usage_recorder_settings cfg,
                  std::shared_ptr<usage_gauges> gauges,
                  std::shared_ptr<usage_buffer> buffer) {
  auto& st = self->state;
  st.buffer = std::move(buffer);
  st.acc = core::usage::accumulator{cfg.max_addresses};
  st.sink = std::move(sink);
  st.cfg = cfg;
  st.gauges = gauges ? std::move(gauges) : std::make_shared<usage_gauges>();
  self->delayed_send(self, cfg.flush_interval, usage_tick_atom_v);
  return {
      [self](usage_event& e) {
        auto& st = self->state;
        st.acc.record(e.key_id, e.organization_id, e.at, e.successful,
                      e.credits, e.address_hash);
        if (!st.in_flight && st.acc.pending() >= st.cfg.flush_threshold)
          start_flush(self);
        else
          update_gauges(st);
      },
      [self](usage_drain_atom) {
        auto& st = self->state;
        take_buffer(st);
        if (!st.in_flight && st.acc.pending() >= st.cfg.flush_threshold)
          start_flush(self);
        else
          update_gauges(st);
      },
      [self](usage_tick_atom) {
        auto& st = self->state;
        take_buffer(st);
        if (!st.in_flight && !st.acc.empty())
          start_flush(self);
        self->delayed_send(self, st.cfg.flush_interval, usage_tick_atom_v);
      },
      [self](usage_done_atom, std::uint64_t id, bool ok) {
        auto& st = self->state;
        if (!st.in_flight || st.in_flight->id != id)
          return;
        auto done = std::move(*st.in_flight);
        st.in_flight.reset();
        if (ok) {
          ++st.gauges->flushes;
        } else {
          ++st.gauges->failed_flushes;
          st.acc.merge(done.batch);
          log::event(log::level::warn, "usage_flush_failed",
                     {{"increments", std::to_string(done.batch.size())},
                      {"pending", std::to_string(st.acc.pending())}});
        }
        answer(st.waiting_current, ok);
        if (!st.waiting_next.empty()) {
          st.waiting_current = std::move(st.waiting_next);
          st.waiting_next.clear();
          start_flush(self);
        } else if (ok && st.acc.pending() >= st.cfg.flush_threshold) {
          // After a failure the next tick retries: no hammering a sick
          // database.
          start_flush(self);
        } else {
          update_gauges(st);
        }
      },
      [self](usage_flush_atom) -> caf::typed_response_promise<bool> {
        auto rp = self->make_response_promise<bool>();
        request_flush(self, [rp](bool ok) mutable { rp.deliver(ok); });
        return rp;
      },
      [self](usage_flush_atom, flush_done& done) {
        request_flush(self, [done](bool ok) { done(ok); });
      },
  };
}

// Runs on a storage worker: the whole batch in one transaction.
bool write_usage(job_context& ctx, const usage_batch& batch) {
  if (ctx.db == nullptr) {
    log::event(log::level::warn, "usage_write_failed",
               {{"error", ctx.open_error.message}});
    return false;
  }
  auto r = ctx.db->add_usage(batch);
  if (r)
    return true;
  if (r.error_value().code != core::errc::not_found) {
    log::event(log::level::warn, "usage_write_failed",
               {{"error", r.error_value().message}});
    return false;
  }
  // A key was deleted since its requests were counted: find the keys that
  // still exist (reads only, so a failure here writes nothing) and write
  // their increments in one transaction.
  std::set<std::pair<std::string, std::string>> gone;
  usage_batch kept;
  for (const auto& inc : batch) {
    std::pair<std::string, std::string> k{inc.organization_id, inc.key_id};
    if (gone.count(k) != 0)
      continue;
    auto key = ctx.db->get_api_key(inc.organization_id, inc.key_id);
    if (!key && key.error_value().code == core::errc::not_found) {
      gone.insert(std::move(k));
      continue;
    }
    if (!key) {
      log::event(log::level::warn, "usage_write_failed",
                 {{"error", key.error_value().message}});
      return false;
    }
    kept.push_back(inc);
  }
  for (const auto& k : gone)
    log::event(log::level::info, "usage_dropped_deleted_key",
               {{"key_id", k.second}});
  auto again = ctx.db->add_usage(kept);
  if (!again)
    log::event(log::level::warn, "usage_write_failed",
               {{"error", again.error_value().message}});
  return again.has_value();
}

} // namespace

usage_recorder_actor
spawn_usage_recorder(caf::actor_system& sys, usage_sink sink,
                     usage_recorder_settings cfg,
                     std::shared_ptr<usage_gauges> gauges,
                     std::shared_ptr<usage_buffer> buffer) {
  return sys.spawn(usage_recorder_fn, std::move(sink), cfg, std::move(gauges),
                   std::move(buffer));
}

usage_sink storage_usage_sink(storage_pool& pool) {
  return [&pool](usage_batch batch, flush_done done) {
    pool.submit(storage_job{[batch = std::move(batch), done](job_context& ctx) {
      done(write_usage(ctx, batch));
    }});
  };
}

// -- facade -------------------------------------------------------------------

usage_recorder::usage_recorder(caf::actor_system& sys, usage_sink sink,
                               usage_recorder_settings cfg)
    : sys_(sys), cfg_(cfg), gauges_(std::make_shared<usage_gauges>()),
      buffer_(std::make_shared<usage_buffer>(
          std::max<std::size_t>(1, cfg.flush_threshold))) {
  actor_ = spawn_usage_recorder(sys, std::move(sink), cfg, gauges_, buffer_);
}

usage_recorder::~usage_recorder() {
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

void usage_recorder::record(std::string key_id, std::string organization_id,
                            std::int64_t unix_seconds, bool successful,
                            std::int64_t credits, std::string address_hash) {
  record(usage_event{std::move(key_id), std::move(organization_id),
                     unix_seconds, successful, credits,
                     std::move(address_hash)});
}

void usage_recorder::record(usage_event event) {
  if (buffer_->push({std::move(event), {}, {}}))
    caf::anon_send(actor_, usage_drain_atom_v);
}

void usage_recorder::record_address(std::string key_id,
                                    std::string organization_id,
                                    std::int64_t unix_seconds, bool successful,
                                    std::int64_t credits, std::string address) {
  usage_event e{std::move(key_id), std::move(organization_id),
                unix_seconds,      successful,
                credits,           {}};
  if (buffer_->push({std::move(e), std::move(address), {}}))
    caf::anon_send(actor_, usage_drain_atom_v);
}

void usage_recorder::record_key(
    std::shared_ptr<const core::account::api_key> key,
    std::int64_t unix_seconds, bool successful, std::int64_t credits,
    std::string_view address) {
  if (buffer_->push_keyed(std::move(key), unix_seconds, successful, credits,
                          address))
    caf::anon_send(actor_, usage_drain_atom_v);
}

void usage_recorder::flush(flush_done done) {
  caf::anon_send(actor_, usage_flush_atom_v, std::move(done));
}

bool usage_recorder::flush_and_stop() {
  bool ok = blocking_ask(sys_, actor_, cfg_.stop_timeout, log::level::error,
                         "usage_stop_flush_failed", usage_flush_atom_v);
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
  return ok;
}

} // namespace mailassay::actors
