#pragma once

// The SMTP prober: asks the MX hosts of a domain whether mailboxes exist,
// without ever blocking a thread.
//
// API (everything a caller needs):
//
//   auto p = actors::smtp::prober::create(sys, config, resolver); // expected<>
//   p.value()->probe({domain, addresses, route, budget},
//                    [](actors::smtp::probe_result r) { ... });
//   p.value()->stop();   // at shutdown, before the actor system goes
//
// - `create` checks the identity (HELO, MAIL FROM), the allow-list and the
//   proxy, and fails with errc::validation_failed naming the setting: the
//   process should refuse to start then.
// - `probe` is thread-safe and returns at once; `done` runs exactly once,
//   on the prober actor's thread (a CAF scheduler thread): forward the
//   result (e.g. `anon_send` it), do not block in it.
//   `core::validation::facts_of` turns one address outcome into what
//   `core::validation::decide` reads.
// - `stop` answers every probe in flight with what is known (failure
//   "stopped"), shuts the SMTP client down and joins its I/O thread; later
//   probes are answered at once with failure "stopped".
//
// Inside: one event-based actor orchestrates (DNS answers, per-host slots
// and connection rates, greylisting retries as delayed messages, the
// per-domain catch-all cache and its single flight), `core::smtp::probe_plan`
// decides, and `net::smtp_client` does the socket work on its own I/O
// thread. See docs/smtp.md.
//
//   probe_job ─> MX host addresses (resolver's host cache) ─> policy ─> plan
//   plan.next: session ─> host slot? ─ no ─> queue (gate wake / close)
//                 │ yes
//                 v
//            smtp_client.run ── session_done ─> plan.on_session ─> next
//   plan.next: wait ─> delayed probe_wake      finished ─> done(result)
//
// Catch-all single flight, per domain without a cached verdict:
//
//   [free] ──a session asks for the probe──> [probing: owner = that probe]
//      ^                                          │ its session ends
//      │   verdict: cache it, give it to every    │
//      └── probe of the domain; none: release ────┘
//   Other probes of the domain run their sessions without the probe; one
//   whose addresses are all decided while a flight is on waits ("parked",
//   holding no host slot) for it to end, at most until its own deadline,
//   and then reports the verdict, or null when none came.

#include "core/base/expected.hpp"
#include "core/dns/records.hpp"
#include "core/dns/route.hpp"
#include "core/smtp/identity.hpp"
#include "core/smtp/probe_plan.hpp"
#include "core/validation/verdict.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::config {
struct smtp_settings;
} // namespace mailassay::config

namespace mailassay::net {
class dns_resolver;
class smtp_client;
} // namespace mailassay::net

namespace mailassay::actors::smtp {

/// Settings of the prober (filled from `config::smtp_settings`).
struct prober_config {
  /// EHLO name and MAIL FROM (empty: the null sender).
  core::smtp::identity identity;
  /// Skip the HELO/sender sanity checks (MAILASSAY_SMTP_FORCE_IDENTITY).
  bool force_identity = false;
  /// Tells free-mail domains, for the sender check (e.g. the risk lists'
  /// `free_providers.contains`); empty: not checked.
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
  /// How long a domain's catch-all verdict is reused.
  std::chrono::seconds catch_all_ttl{86400};
  /// Domains whose catch-all verdict is kept.
  std::size_t catch_all_cache_size = 100000;
  /// SOCKS5 proxy "ip:port"; empty: direct connections.
  std::string socks5_proxy;
  /// I/O threads of the SMTP client.
  int io_threads = 1;
  /// MX hosts tried per domain, in priority order.
  std::size_t max_mx_hosts = 5;
  /// Addresses tried per MX host (A first, then AAAA).
  std::size_t max_addresses_per_host = 2;
  /// Addresses asked per session.
  std::size_t max_rcpts_per_session = 20;
  /// Shortest per-command time-out (unless the budget is shorter).
  std::chrono::milliseconds min_step{2000};
  /// Longest per-command time-out.
  std::chrono::milliseconds max_step{300000};
  /// Longest wait for the reply to QUIT.
  std::chrono::milliseconds quit_timeout{2000};
};

/// One probe: addresses at one domain, where its mail goes, and how long
/// the caller can wait.
struct probe_request {
  /// The domain, ASCII (A-labels).
  std::string domain;
  /// Full addresses at `domain`, asked in this order.
  std::vector<std::string> addresses;
  /// The mail route from the DNS resolver: MX hosts in priority order, or
  /// the implicit MX with its addresses. Other kinds probe nothing.
  core::dns::mail_route route;
  /// Time from the call to the answer, DNS of the MX hosts included.
  std::chrono::milliseconds budget{10000};
  /// Retry 4xx deferrals (greylisting, throttling) after the configured
  /// delays. False: a deferred address is final at once (greylisted, one
  /// attempt), so a batch can park it and submit it again later without
  /// holding a slot meanwhile.
  bool retry_deferrals = true;
};

/// What a probe found.
struct probe_result {
  /// The domain probed.
  std::string domain;
  /// One outcome per requested address, in request order.
  std::vector<core::smtp::address_outcome> addresses;
  /// The domain's catch-all verdict; null when unknown.
  std::optional<bool> catch_all;
  /// Whether `catch_all` came from the cache or from another probe of the
  /// domain (this probe learnt nothing about it).
  bool catch_all_cached = false;
  /// The sessions run, oldest first (host, address, how each ended).
  std::vector<core::smtp::session_log> sessions;
  /// MX addresses the address policy refused (never connected to).
  std::vector<std::string> blocked;
  /// Why addresses were left undecided: "unroutable_mx", "no_mx_address",
  /// "all_hosts_failed", "budget", "no_route", "stopped", or empty.
  std::string failure;
  /// Time from the call to the answer.
  std::chrono::milliseconds elapsed{0};
};

/// Builds the prober's settings from the `[smtp]` section. An empty
/// `smtp.helo` takes `hostname` (the machine's name, e.g. from
/// gethostname) when it is a public FQDN (`core::smtp::choose_helo`);
/// otherwise the HELO stays empty and `prober::create` refuses it.
prober_config make_prober_config(const config::smtp_settings& settings,
                                 std::string_view hostname);

/// Counters for /metrics and tests.
struct prober_counters {
  std::atomic<std::uint64_t> probes{0};         ///< Probes started.
  std::atomic<std::uint64_t> active_probes{0};  ///< Probes in flight.
  std::atomic<std::uint64_t> sessions{0};       ///< Sessions started.
  std::atomic<std::uint64_t> queued{0};         ///< Waiting for a host slot.
  std::atomic<std::uint64_t> retries{0};        ///< Greylisting waits.
  std::atomic<std::uint64_t> blocked{0};        ///< MX addresses refused.
  std::atomic<std::uint64_t> catch_all_hits{0}; ///< Catch-all from cache.
  /// Sessions asked to carry the catch-all probe (at most one per domain at
  /// a time).
  std::atomic<std::uint64_t> catch_all_probes{0};
  /// Probes that waited for another probe's catch-all verdict.
  std::atomic<std::uint64_t> catch_all_waits{0};
};

/// A probe and where its result goes.
struct probe_job {
  probe_request request;
  std::function<void(probe_result)> done;
};

/// The addresses of one MX host of a probe (from the resolver's host
/// cache: an implicit_mx route carries them, A first).
struct probe_dns_answer {
  std::uint64_t probe = 0;
  std::size_t host = 0;
  core::dns::mail_route answer;
};

/// The end of a session of a probe (from the SMTP client).
struct probe_session_done {
  std::uint64_t probe = 0;
  core::smtp::session_report report;
};

/// A probe's timer: a retry is due (or the deadline passed, `gen == 0`).
struct probe_wake {
  std::uint64_t probe = 0;
  std::uint64_t gen = 0;
};

/// A host's connection rate allows another session.
struct probe_gate_wake {
  std::string host;
};

/// Ends every probe and the actor; answers true.
struct prober_stop {};

/// The prober actor's typed interface.
using prober_actor = caf::typed_actor<
    caf::reacts_to<probe_job>, caf::reacts_to<probe_dns_answer>,
    caf::reacts_to<probe_session_done>, caf::reacts_to<probe_wake>,
    caf::reacts_to<probe_gate_wake>, caf::replies_to<prober_stop>::with<bool>>;

/// The SMTP prober; see the API at the top of this header.
class prober {
public:
  /// Checks `config`, starts the SMTP client and spawns the actor in `sys`.
  /// `resolver` resolves MX host names (A, AAAA); it may be null when every
  /// route carries addresses (implicit MX, IP literals).
  static core::expected<std::unique_ptr<prober>>
  create(caf::actor_system& sys, prober_config config,
         std::shared_ptr<net::dns_resolver> resolver);

  /// Stops (see `stop`).
  ~prober();

  prober(const prober&) = delete;
  prober& operator=(const prober&) = delete;

  /// Starts a probe; `done` receives the result on the prober's thread.
  void probe(probe_request request, std::function<void(probe_result)> done);

  /// Returns the counters.
  const prober_counters& counters() const { return *counters_; }

  /// Answers every probe in flight, stops the actor and the SMTP client;
  /// idempotent. Call it from outside the actor system's threads.
  void stop();

private:
  prober(caf::actor_system& sys, std::shared_ptr<net::smtp_client> client,
         std::shared_ptr<prober_counters> counters);

  caf::actor_system* sys_;
  std::shared_ptr<net::smtp_client> client_;
  std::shared_ptr<prober_counters> counters_;
  prober_actor actor_;
  /// Orders `probe` before `stop`: a probe that saw the prober running has
  /// its message queued before the stop message, so it is answered.
  std::shared_mutex stopping_;
  bool stopped_ = false;
};

} // namespace mailassay::actors::smtp

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::probe_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::probe_dns_answer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::probe_session_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::probe_wake)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::probe_gate_wake)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::prober_stop)
