#pragma once

// The SMTP probe scheduler: one actor owning every session to the MX hosts,
// shared by real-time validations and batch groups.
//
//   probe_address(domain, address, route, budget)
//     │ result cache hit ──────────────────────────────> answer (cache)
//     v
//   route of the domain (one per domain; per caller when sharing is off)
//     │ MX host addresses (resolver's host cache) ─> address policy
//     v
//   core::smtp::route_plan: identical addresses asked once; idle sessions
//     take the next address; more sessions while the backlog grows
//     │ want a session ─> host slots (per-MX-host sessions and connection
//     │                   rate; FIFO per host; a lingering idle session of
//     │                   another route gives its slot up)
//     v
//   session_runner (net::smtp_client): open-ended sessions, RSET between
//     │ session_idle: next address or QUIT     session_ended: slot freed
//     v
//   answers (one per caller, by its own deadline), definitive ones into the
//   result cache, catch-all verdicts into the catch-all store
//
// Time comes from the actor system's clock (CAF's deterministic scheduler
// moves it in tests), randomness (the catch-all probe's local part) from an
// injected generator, sockets from the runner, host addresses from an
// injected lookup: the actor reads no clock and opens no socket itself.
// Politeness accounting (`host_slots`) and the catch-all verdicts
// (`catch_all_store`) sit behind small interfaces that a store shared by
// several processes implements (actors/shared_host_slots.hpp,
// actors/shared_catch_all.hpp). A shared host store answers asynchronously:
// `pending`, then host_wake when its answer is in, and the host's queue is
// pumped again.

#include "actors/messages.hpp"
#include "actors/smtp/session_runner.hpp"
#include "core/base/expected.hpp"
#include "core/dns/route.hpp"
#include "core/smtp/catch_all_cache.hpp"
#include "core/smtp/host_limits.hpp"
#include "core/smtp/host_series.hpp"
#include "core/smtp/identity.hpp"
#include "core/smtp/outcome.hpp"
#include "core/smtp/session.hpp"

#include <caf/fwd.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::config {
struct smtp_settings;
} // namespace mailassay::config

namespace mailassay::net {
class dns_resolver;
} // namespace mailassay::net

namespace mailassay::actors::smtp {

/// Settings of the scheduler (filled from `config::smtp_settings`).
struct scheduler_config {
  /// EHLO name and MAIL FROM (empty: the null sender).
  core::smtp::identity identity;
  /// Skip the HELO/sender sanity checks (MAILASSAY_SMTP_FORCE_IDENTITY).
  bool force_identity = false;
  /// Tells free-mail domains, for the sender check; empty: not checked.
  core::smtp::free_mail_predicate is_free_mail;
  /// TCP port of every MX host.
  std::uint16_t port = 25;
  /// STARTTLS policy.
  core::smtp::tls_policy tls = core::smtp::tls_policy::opportunistic;
  /// Verify MX certificates (off: see net/smtp_client.hpp).
  bool verify_tls = false;
  /// Networks (CIDRs) probes may reach besides public addresses.
  std::vector<std::string> allow_private_targets;
  /// Greylisting retry schedule.
  std::vector<std::chrono::milliseconds> retry_delays{
      std::chrono::milliseconds{5000}, std::chrono::milliseconds{15000},
      std::chrono::milliseconds{45000}};
  /// Sessions open at once per MX host (0: unlimited).
  std::size_t max_sessions_per_host = 4;
  /// New connections per second per MX host (0: unlimited).
  std::int64_t connections_per_second_per_host = 2;
  /// RCPT commands per session (catch-all probes included).
  std::size_t max_rcpts_per_session = 20;
  /// Names the provider of an MX host, so that all MX hosts of one
  /// provider share one session and connection budget (issue #30,
  /// `core::smtp::budget_key`); empty: each host has its own, as before.
  std::shared_ptr<const core::provider::table> providers;
  /// Per-provider limits (`smtp.provider_limits`), keyed
  /// "provider:<name>"; a provider without one takes the per-host values.
  std::map<std::string, core::smtp::budget_override, std::less<>>
      provider_limits;
  /// Concurrent callers of one domain share its sessions, and identical
  /// addresses in flight are asked once. False: every caller gets its own
  /// sessions (the behaviour before sharing; for comparison).
  bool share_sessions = true;
  /// How long an idle session waits for another address before QUIT
  /// (shared sessions only; it gives its slot up when another domain
  /// needs the host).
  std::chrono::milliseconds session_linger{1000};
  /// How long a definitive answer (accepted, unknown user, full, disabled)
  /// is reused per address; 0: no result cache.
  std::chrono::seconds result_cache_ttl{300};
  /// Addresses the result cache holds at most.
  std::size_t result_cache_size = 100000;
  /// How long a domain's catch-all verdict is reused.
  std::chrono::seconds catch_all_ttl{86400};
  /// Domains whose catch-all verdict is kept.
  std::size_t catch_all_cache_size = 100000;
  /// SOCKS5 proxy "ip:port"; empty: direct connections.
  std::string socks5_proxy;
  /// Local address probes bind to (`smtp.source_address`); empty: the
  /// kernel's choice.
  std::string source_address;
  /// I/O threads of the SMTP client.
  int io_threads = 1;
  /// MX hosts tried per domain, in priority order.
  std::size_t max_mx_hosts = 5;
  /// Addresses tried per MX host (A first, then AAAA).
  std::size_t max_addresses_per_host = 2;
  /// Shortest per-command time-out (unless the budget is shorter).
  std::chrono::milliseconds min_step{2000};
  /// Longest per-command time-out.
  std::chrono::milliseconds max_step{300000};
  /// Longest wait for the reply to QUIT.
  std::chrono::milliseconds quit_timeout{2000};
  /// Longest life of one session.
  std::chrono::milliseconds max_session{600000};
  /// How long an MX host's /metrics series stay after its last session
  /// ended.
  std::chrono::seconds host_metrics_idle{300};
  /// MX hosts with /metrics series at most.
  std::size_t host_metrics_max_hosts = 1000;
};

/// Builds the scheduler's settings from the `[smtp]` section. An empty
/// `smtp.helo` takes `hostname` (the machine's name) when it is a public
/// FQDN (`core::smtp::choose_helo`); otherwise the HELO stays empty and
/// `scheduler::create` refuses it.
scheduler_config make_scheduler_config(const config::smtp_settings& settings,
                                       std::string_view hostname);

/// Sessions to one MX host, for /metrics.
using host_counters = core::smtp::host_counts;

/// How an answer ended, for /metrics.
enum class answer_class {
  accepted,       ///< The mailbox exists.
  rejected,       ///< Unknown user, disabled or full.
  greylisted,     ///< Deferred through every retry.
  timeout,        ///< No answer in time.
  refused,        ///< No server answered (refused, unreachable, policy).
  policy_blocked, ///< The server refused us, not the mailbox.
  other,          ///< Any other error.
};

/// Number of `answer_class` values.
inline constexpr std::size_t answer_classes = 7;

/// Returns the class of `o`.
answer_class classify_answer(const core::smtp::address_outcome& o);

/// Returns "accepted", "rejected", ... for `c`.
std::string_view to_string(answer_class c);

/// Upper bounds of the RCPTs-per-session histogram's buckets (the last
/// bucket counts the rest).
inline constexpr std::array<std::size_t, 6> rcpt_buckets{1, 2, 5, 10, 20, 50};

/// The scheduler's counters: cheap to read from any thread (/metrics).
struct scheduler_counters {
  std::atomic<std::uint64_t> requests{0};         ///< probe_address received.
  std::atomic<std::int64_t> in_flight{0};         ///< Callers waiting now.
  std::atomic<std::int64_t> waiting{0};           ///< Addresses waiting for a
                                                  ///< session or a retry now.
  std::atomic<std::uint64_t> sessions{0};         ///< Sessions opened.
  std::atomic<std::uint64_t> cache_hits{0};       ///< Answered from the cache.
  std::atomic<std::uint64_t> joined{0};           ///< Joined a probe in flight.
  std::atomic<std::uint64_t> catch_all_hits{0};   ///< Verdict from cache.
  std::atomic<std::uint64_t> catch_all_probes{0}; ///< Probe RCPTs asked.
  std::atomic<std::uint64_t> greylist_rechecks{0}; ///< Retries scheduled.
  std::atomic<std::uint64_t> blocked{0}; ///< MX addresses policy refused.
  /// Answers by class (`answer_class` order).
  std::array<std::atomic<std::uint64_t>, answer_classes> answers{};
  /// Sessions by RCPTs sent (`rcpt_buckets`, then the rest).
  std::array<std::atomic<std::uint64_t>, rcpt_buckets.size() + 1> rcpts{};
  /// RCPT commands sent by every session that ended (the histogram's sum).
  std::atomic<std::uint64_t> rcpts_sent{0};
  /// Answers by provider (`provider_names` order) and class.
  using class_counts = std::array<std::atomic<std::uint64_t>, answer_classes>;

  /// Fixes the providers answers are counted by: every name of `table`,
  /// then "none" (hosts of no known provider). Call it before the scheduler
  /// runs; the names never change afterwards, so the series stay bounded.
  void set_providers(const core::provider::table* table);

  /// The provider names answers are counted by ("none" last).
  const std::vector<std::string>& provider_names() const {
    return provider_names_;
  }

  /// The index of provider `name` in `provider_names()`; "none"'s when the
  /// name is not there or empty.
  std::size_t provider_index(std::string_view name) const;

  /// The answers of the provider at `index` of `provider_names()`.
  const class_counts& provider_answers(std::size_t index) const {
    return provider_answers_[index];
  }

  /// Counts one answer of class `cls` for the provider at `index`.
  void count_provider_answer(std::size_t index, std::size_t cls) {
    ++provider_answers_[index][cls];
  }

  /// Returns the sessions per MX host in use at `now` (the scheduler's
  /// clock): with a session open, or used within
  /// `scheduler_config::host_metrics_idle`; the others are dropped.
  std::map<std::string, host_counters>
  hosts(std::chrono::milliseconds now) const;

  /// MX hosts not counted because the table was full of hosts with
  /// sessions open.
  std::uint64_t hosts_untracked() const;

  /// The per-host table (the scheduler writes it on each open and close;
  /// `spawn_scheduler` sizes it from the config).
  mutable std::mutex host_mutex;
  mutable core::smtp::host_series host_table{std::chrono::seconds{300}, 1000};

private:
  std::vector<std::string> provider_names_{"none"};
  std::unique_ptr<class_counts[]> provider_answers_{new class_counts[1]{}};
};

/// Looks up the addresses of an MX host name (answered as an implicit_mx
/// route carrying them, A first); `done` may run on any thread.
using host_lookup = std::function<void(
    std::string host, std::function<void(core::dns::mail_route)> done)>;

/// What the scheduler works with besides its settings (tests pass doubles).
struct scheduler_parts {
  /// Runs the sessions.
  std::shared_ptr<session_runner> runner;
  /// Looks up MX host addresses; empty: routes must carry addresses.
  host_lookup lookup;
  /// Per-MX-host politeness; null: the local `core::smtp::host_limits`.
  std::unique_ptr<core::smtp::host_slots> slots;
  /// Catch-all verdicts per domain; null: the local cache.
  std::unique_ptr<core::smtp::catch_all_store> catch_all;
  /// Local part of a catch-all probe; empty: 16 random base62 characters.
  std::function<std::string()> random_local_part;
};

/// Spawns the scheduler actor with `parts` (for tests: a runner double on
/// CAF's deterministic scheduler). The identity is not checked here.
scheduler_actor spawn_scheduler(caf::actor_system& sys, scheduler_config config,
                                scheduler_parts parts,
                                std::shared_ptr<scheduler_counters> counters);

/// The service's scheduler: its actor, sessions on net::smtp_client, MX
/// host addresses from the shared resolver.
class scheduler {
public:
  /// Checks `config` (identity, allow-list, proxy), starts the SMTP client
  /// and spawns the actor; fails with errc::validation_failed naming the
  /// setting (the process should refuse to start then). `catch_all`:
  /// where verdicts are kept (a store shared by several processes); null:
  /// the local cache. `slots`: per-MX-host politeness (a store shared by
  /// several processes); null: this process's own.
  static core::expected<std::unique_ptr<scheduler>>
  create(caf::actor_system& sys, scheduler_config config,
         std::shared_ptr<net::dns_resolver> resolver,
         std::unique_ptr<core::smtp::catch_all_store> catch_all = nullptr,
         std::unique_ptr<core::smtp::host_slots> slots = nullptr);

  /// Stops (see `stop`).
  ~scheduler();

  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  /// The actor to ask (`probe_address`).
  scheduler_actor handle() const { return actor_; }

  /// Returns the counters.
  const scheduler_counters& counters() const { return *counters_; }

  /// Returns the sessions per MX host in use now (`scheduler_counters::hosts`
  /// on the actor system's clock).
  std::map<std::string, host_counters> hosts_in_use() const;

  /// Applies new per-host politeness (SIGHUP) and waits until the actor
  /// has it; returns false when it did not answer in 10 s. Call it from
  /// outside the actor system's threads.
  bool reconfigure(const scheduler_politeness& politeness);

  /// Has the actor drop the result cache's expired answers (without
  /// waiting); any thread.
  void forget_expired();

  /// Answers every caller in flight ("stopped"), stops the actor and the
  /// SMTP client; idempotent. Call it from outside the actor system's
  /// threads.
  void stop();

private:
  scheduler(caf::actor_system& sys, std::shared_ptr<session_runner> runner,
            std::shared_ptr<scheduler_counters> counters,
            scheduler_actor actor);

  caf::actor_system* sys_;
  std::shared_ptr<session_runner> runner_;
  std::shared_ptr<scheduler_counters> counters_;
  scheduler_actor actor_;
  std::mutex stopping_;
  bool stopped_ = false;
};

} // namespace mailassay::actors::smtp
