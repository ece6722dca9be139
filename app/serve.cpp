#include "actors/batch/retention_sweeper.hpp"
#include "actors/batch/runner.hpp"
#include "actors/cluster_events.hpp"
#include "actors/credits/ledger.hpp"
#include "actors/egress_monitor.hpp"
#include "actors/shared_catch_all.hpp"
#include "actors/shared_host_slots.hpp"
#include "actors/shared_limiter.hpp"
#include "actors/smtp/scheduler.hpp"
#include "actors/storage_pool.hpp"
#include "actors/usage_recorder.hpp"
#include "actors/validation_pool.hpp"
#include "actors/webhooks/dispatcher.hpp"
#include "app/app.hpp"
#include "app/gauges.hpp"
#include "http/codec/batch_results.hpp"
#include "http/codec/webhooks.hpp"
#include "http/server.hpp"
#include "http/services.hpp"
#include "log/log.hpp"
#include "net/control_socket.hpp"
#include "net/dns_resolver.hpp"
#include "net/egress_audit.hpp"
#include "net/http_client.hpp"
#include "net/io_thread.hpp"
#include "net/redis_client.hpp"
#include "net/redis_subscriber.hpp"
#include "security/digest.hpp"
#include "security/password.hpp"
#include "security/random.hpp"
#include "storage/url.hpp"
#include "use_cases/accounts/key_cache.hpp"
#include "use_cases/accounts/use_cases.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <malloc.h>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace mailassay::app {

namespace {

// Blocks SIGINT/SIGTERM (stop) and SIGHUP (reload) in this thread and every
// thread it starts later, so that only `wait_for_signal` receives them.
sigset_t block_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int wait_for_signal(const sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

// The operator's control socket (`mailassay admin reload`); null when
// `control.socket` is empty or cannot be used (the server runs without it
// and the log says why).
std::unique_ptr<net::control_listener>
control_socket(const std::string& path,
               std::function<reload_report()> reload_now) {
  if (path.empty())
    return nullptr;
  std::error_code ec;
  if (auto parent = std::filesystem::path{path}.parent_path(); !parent.empty())
    std::filesystem::create_directories(parent, ec);
  auto made = net::control_listener::start(
      path, [reload_now](std::string_view command) -> std::string {
        if (command != "reload")
          return "unknown\nunknown command \"" + std::string{command} +
                 "\" (known: reload)\n";
        auto r = reload_now();
        return std::string{r.refused            ? "refused\n"
                           : !r.failure.empty() ? "failed\n"
                                                : "ok\n"} +
               to_text(r);
      });
  if (!made) {
    log::event(log::level::warn, "control_socket_unavailable",
               {{"path", path},
                {"why", made.error_value().message},
                {"effect", "mailassay admin reload cannot reach this "
                           "process; SIGHUP still reloads"}});
    return nullptr;
  }
  return std::move(*made);
}

// The LISTEN connection's libpq string: the store's, with TCP keepalives
// so a silently vanished server is noticed (about 25 s) and reconnected,
// and a name of its own (the later keyword wins) by which the writers of
// key changes count the processes listening.
std::string listener_conninfo(const storage::database_url& u) {
  return storage::postgres_conninfo(u) +
         " keepalives=1 keepalives_idle=10 keepalives_interval=5"
         " keepalives_count=3 application_name='" +
         storage::listener_application_name(u) + "'";
}

// A setting the loader let through but its user refuses: the start stops
// with "mailassay: invalid configuration: <what>" and exit 2.
core::error invalid_configuration(std::string what) {
  return core::make_error(core::errc::validation_failed,
                          "invalid configuration: " + std::move(what));
}

// Prints the error that stops the start; `serve` then returns 2 (after
// stopping whatever it has started).
int start_failed(const core::error& e) {
  std::cerr << "mailassay: " << e.message << "\n";
  return 2;
}

// The SMTP scheduler of the pipeline. Null when SMTP probing is off: with
// the default (empty) HELO on a host without a public FQDN, probing stays
// off and a warning says why; an identity the operator set but that is
// wrong is an error (the start stops, exit 2). Spawns nothing unless it
// succeeds.
core::expected<std::unique_ptr<actors::smtp::scheduler>>
make_smtp_scheduler(const config::settings& cfg, caf::actor_system& sys,
                    actors::validation::validator& v,
                    std::unique_ptr<core::smtp::catch_all_store> catch_all,
                    std::unique_ptr<core::smtp::host_slots> slots) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0)
    host[0] = '\0';
  auto sc = actors::smtp::make_scheduler_config(cfg.smtp, host);
  const auto* lists = &v.lists();
  sc.is_free_mail = [lists](std::string_view domain) {
    return lists->free_providers.contains(domain);
  };
  auto made =
      actors::smtp::scheduler::create(sys, std::move(sc), v.shared_resolver(),
                                      std::move(catch_all), std::move(slots));
  if (!made) {
    if (cfg.smtp.helo.empty() && cfg.smtp.mail_from.empty()) {
      log::event(log::level::warn, "smtp_disabled",
                 {{"why", made.error_value().message}});
      return std::unique_ptr<actors::smtp::scheduler>{};
    }
    return invalid_configuration(made.error_value().message);
  }
  return std::move(*made);
}

// The client of webhook deliveries: the SMTP prober's address policy with
// the webhooks' own allow-list, host names resolved by the service's
// resolver (A, then AAAA), each address checked before it is used. A bad
// allow-list or CA file is an error (the start stops, exit 2).
core::expected<std::shared_ptr<net::http_client>>
make_webhook_client(const config::settings& cfg,
                    std::shared_ptr<net::dns_resolver> resolver) {
  net::http_client_config hc;
  auto policy =
      core::smtp::target_policy::parse(cfg.webhooks.allow_private_targets);
  if (!policy)
    return invalid_configuration("MAILASSAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS " +
                                 policy.error_value().message);
  hc.policy = std::move(*policy);
  hc.ca_file = cfg.webhooks.ca_file;
  hc.max_head_bytes =
      static_cast<std::size_t>(cfg.webhooks.max_response_head_bytes);
  hc.resolve = [resolver](std::string host,
                          std::function<void(net::http_resolution)> done) {
    resolver->resolve_host(
        std::move(host), [done = std::move(done)](core::dns::mail_route r) {
          net::http_resolution out;
          out.addresses = std::move(r.addresses);
          if (out.addresses.empty())
            out.error = "no address (" +
                        std::string{core::dns::to_string(r.cause)} + ")";
          done(std::move(out));
        });
  };
  auto made = net::http_client::create(std::move(hc));
  if (!made)
    return invalid_configuration(made.error_value().message);
  return std::shared_ptr<net::http_client>{std::move(*made)};
}

std::int64_t unix_now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// glibc gives threads their own malloc arenas (up to 8 per core) and each
// arena keeps its high-water mark: a batch upload parsed on one storage
// worker, its job run on others, left the process ~20 MB larger per job.
// One arena per core keeps peak memory flat over jobs (docs/performance.md,
// "Batch jobs"); MALLOC_ARENA_MAX in the environment still wins.
void limit_malloc_arenas() {
  if (std::getenv("MALLOC_ARENA_MAX"))
    return;
  auto cores = static_cast<int>(std::thread::hardware_concurrency());
  ::mallopt(M_ARENA_MAX, std::max(2, cores));
}

} // namespace

int serve(config::settings& cfg, const std::optional<std::string>& file) {
  // The webhook server key is resolved once (it may live in a file) and
  // travels with the settings to the use cases and the dispatcher. A reload
  // never changes it (webhooks.* take a restart).
  cfg.webhooks.secret_key = webhook_key_or_exit(cfg);
  limit_malloc_arenas();
  auto signals = block_signals();
  log::init(cfg.log.level);
  if (!security::init_crypto()) {
    std::cerr << "mailassay: cannot initialise libsodium\n";
    return 1;
  }
  // Open once in the foreground: migrations run here, and a wrong URL or an
  // unreachable database stops the start with a clear message.
  auto db = storage::open_store(cfg.database.url);
  if (!db) {
    std::cerr << "mailassay: cannot open the database: "
              << db.error_value().message << "\n";
    return 1;
  }
  warn_exposed_files(cfg);
  // A configured secret wins; otherwise every process sharing the database
  // signs with the deployment's key held there (docs/deployment.md).
  auto jwt = cfg.auth.jwt_secret.empty()
                 ? security::jwt_keyring::shared()
                 : security::jwt_keyring::fixed(cfg.auth.jwt_secret);
  if (!jwt->is_fixed())
    if (auto ok = use_cases::accounts::load_signing_keys(
            **db, *jwt, cfg.webhooks.secret_key);
        !ok) {
      std::cerr << "mailassay: cannot read the signing keys: "
                << ok.error_value().message << "\n";
      return 1;
    }
  db->reset();

  // What the settings' loader cannot check is read before any thread
  // runs that would have to be stopped: a wrong value stops the start
  // (exit 2) here. The one exception, the SMTP identity, needs the actor
  // system; its failure stops what runs by then (see below).
  std::optional<net::redis_endpoint> redis_at;
  if (!cfg.redis.url.empty()) {
    auto parsed = net::parse_redis_url(cfg.redis.url);
    if (!parsed)
      return start_failed(invalid_configuration("MAILASSAY_REDIS_URL " +
                                                parsed.error_value().message));
    redis_at = std::move(*parsed);
  }
  auto trusted =
      core::limits::trusted_networks::parse(cfg.http.trusted_proxies);
  if (!trusted)
    return start_failed(invalid_configuration(
        "MAILASSAY_HTTP_TRUSTED_PROXIES " + trusted.error_value().message));
  auto made_validator = make_validator(cfg);
  if (!made_validator)
    return start_failed(made_validator.error_value());
  auto validator = std::move(*made_validator);
  auto webhook_client = make_webhook_client(cfg, validator->shared_resolver());
  if (!webhook_client)
    return start_failed(webhook_client.error_value());

  // The loop of the cluster adapters (LISTEN connection, Redis); made
  // before everything that may receive its callbacks, stopped last.
  net::io_thread cluster_io{"cluster-io"};
  // The shared Redis (docs/deployment.md): one connection for the limits'
  // scripts and the catch-all verdicts sent, one subscribed to the
  // verdicts of the other processes.
  std::shared_ptr<net::redis_client> redis;
  std::shared_ptr<net::redis_subscriber> redis_sub;
  std::unique_ptr<actors::shared_catch_all> catch_all;
  std::shared_ptr<const actors::shared_catch_all_counters> catch_all_counters;
  std::unique_ptr<actors::shared_host_slots> host_slots;
  std::shared_ptr<const actors::shared_host_slots_counters> slots_counters;
  if (redis_at) {
    net::redis_options ro;
    ro.endpoint = *redis_at;
    ro.timeout = std::chrono::milliseconds(cfg.redis.timeout_ms);
    auto where = net::describe(*redis_at);
    redis = net::redis_client::start(
        cluster_io.context(), ro, [where](bool up, const std::string& why) {
          if (up)
            log::event(log::level::info, "redis_up", {{"redis", where}});
          else
            log::event(log::level::warn, "redis_down",
                       {{"redis", where},
                        {"error", why},
                        {"limits", "local_fallback"}});
        });
    catch_all = std::make_unique<actors::shared_catch_all>(
        redis, cfg.redis.prefix,
        std::chrono::duration_cast<core::limits::millis>(
            std::chrono::seconds(cfg.smtp.catch_all_ttl_seconds)),
        100000);
    catch_all_counters = catch_all->counters();
    redis_sub = net::redis_subscriber::start(cluster_io.context(), *redis_at,
                                             catch_all->channel(),
                                             catch_all->on_message());
    // Per-MX-host sessions and connection rate across the deployment.
    host_slots = std::make_unique<actors::shared_host_slots>(
        cluster_io.context(), redis, cfg.redis.prefix,
        core::smtp::host_limits_config{
            static_cast<std::size_t>(
                std::max(0, cfg.smtp.max_sessions_per_host.get())),
            cfg.smtp.connections_per_second_per_host,
            core::smtp::parse_provider_limits(cfg.smtp.provider_limits)
                .value()});
    slots_counters = host_slots->counters();
  }
  use_cases::accounts::key_cache keys{100000, cfg.auth.key_cache_seconds};
  http::metrics stats;
  caf::actor_system_config caf_cfg;
  caf_cfg.set("scheduler.max-threads", cfg.actors.scheduler_threads);
  caf_cfg.set("scheduler.policy", caf::atom("sharing"));
  caf::actor_system sys{caf_cfg};
  auto made_scheduler = make_smtp_scheduler(
      cfg, sys, *validator, std::move(catch_all), std::move(host_slots));
  if (!made_scheduler) {
    // Only the Redis connections run besides the idle actor system: they
    // stop, the cluster loop and the system end as `serve` returns.
    if (redis)
      redis->stop();
    if (redis_sub)
      redis_sub->stop();
    return start_failed(made_scheduler.error_value());
  }
  auto scheduler = std::move(*made_scheduler);
  actors::storage_pool pool{sys, cfg, keys, jwt};
  // The credit ledger writes through the storage workers: the database's
  // conditional update keeps every balance at or above zero, also across
  // processes.
  auto ledger_counters = std::make_shared<actors::credits::ledger_counters>();
  auto ledger = actors::credits::spawn_ledger(
      sys, actors::credits::storage_ledger_store(pool, unix_now),
      ledger_counters);
  actors::validation_pool validation{
      sys, validator, cfg.validation.workers, ledger,
      scheduler ? scheduler->handle() : actors::smtp::scheduler_actor{}};
  // The distinct-address counts keep a keyed hash under a key derived from
  // the server key (the same in every process, so counts agree).
  actors::usage_recorder_settings usage_cfg;
  usage_cfg.address_key = security::hmac_sha256(cfg.webhooks.secret_key,
                                                "mailassay usage address hash");
  actors::usage_recorder usage{sys, actors::storage_usage_sink(pool),
                               usage_cfg};
  actors::rate_limiter_options limiter_opts;
  limiter_opts.ip_per_minute = cfg.limits.ip_per_minute;
  actors::rate_limiter limiter{sys, limiter_opts};
  // Limits shared by every process: Redis decides, this process's limiter
  // stands in while Redis cannot (docs/deployment.md).
  std::unique_ptr<actors::shared_limiter> shared_limits;
  if (redis)
    shared_limits = std::make_unique<actors::shared_limiter>(
        redis, cfg.redis.prefix, limiter);
  // Batch jobs read and write through their own low-priority workers, so
  // checkpoints never queue in front of real-time requests' storage work.
  actors::storage_pool batch_storage{
      sys, cfg, keys, jwt,
      actors::storage_lane{cfg.batch.max_jobs, cfg.batch.nice, "batch-db"}};
  actors::batch_runner batches{
      sys, actors::batch_runner_env{&batch_storage, &validation, cfg.batch,
                                    actors::batch_owner_name(),
                                    // Leases compared on one clock, whatever
                                    // the hosts' skew.
                                    [] { return storage::database_clock; },
                                    [&validation] {
                                      // Real-time validations only: batch work
                                      // does not use the pool.
                                      return validation.gauges().done.load();
                                    },
                                    http::codec::batch_item_detail}};
  // Other processes sharing PostgreSQL tell this one what they changed.
  use_cases::accounts::change_echo echo;
  std::unique_ptr<actors::cluster_events> events;
  if (auto url = storage::parse_database_url(cfg.database.url);
      url && url->kind == storage::dialect::postgresql) {
    actors::cluster_event_sinks sinks;
    sinks.keys = &keys;
    sinks.echo = &echo;
    pool.set_change_echo(&echo);
    sinks.cancel_job = [&batches](const std::string& id) {
      batches.cancelled(id);
    };
    if (!jwt->is_fixed())
      sinks.reload_signing_keys = [&pool, jwt, key = cfg.webhooks.secret_key] {
        pool.submit(actors::storage_job{[jwt, key](actors::job_context& ctx) {
          if (!ctx.db)
            return;
          auto rows = ctx.db->signing_keys();
          if (!rows)
            return;
          if (auto k = use_cases::accounts::signing_keys_of(*rows, key))
            jwt->replace(std::move(*k));
        }});
      };
    events = std::make_unique<actors::cluster_events>(
        cluster_io.context(), listener_conninfo(*url),
        storage::notify_channel(*url), security::random_base62(16),
        std::move(sinks));
    add_cluster_gauges(stats, *events);
  }
  // Webhook deliveries: their own storage lane and HTTP thread, so a slow
  // or failing endpoint never holds up validations.
  actors::storage_pool webhook_storage{
      sys, cfg, keys, jwt, actors::storage_lane{1, 0, "webhook-db"}};
  actors::webhooks::dispatcher webhooks{
      sys, actors::webhooks::dispatcher_env{
               &webhook_storage, std::move(*webhook_client), cfg.webhooks,
               [public_url = cfg.webhooks.public_url](
                   storage::store& db, const core::webhooks::delivery& d)
                   -> core::expected<std::string> {
                 auto subject = use_cases::webhooks::subject_of(db, d);
                 if (!subject)
                   return std::move(subject).error_value();
                 return http::codec::event_body(d, *subject, public_url,
                                                unix_now());
               },
               actors::batch_owner_name(), unix_now_ms}};
  add_webhook_gauges(stats, webhooks.gauges());
  // Results past their retention are erased by every process, each erase
  // claimed in the database; its tick also empties the SMTP result cache
  // of expired answers while no check arrives (docs/privacy.md).
  actors::retention_sweeper retention{
      sys, actors::retention_sweeper_env{
               &batch_storage, &cfg.batch.retention_seconds,
               std::chrono::seconds(cfg.batch.retention_sweep_seconds),
               unix_now, [s = scheduler.get()] {
                 if (s)
                   s->forget_expired();
               }}};
  add_retention_gauges(stats, retention.gauges());
  add_batch_gauges(stats, batches.gauges());
  add_pool_gauges(stats, "storage", pool.size(), pool.gauges());
  add_pool_gauges(stats, "batch_storage", batch_storage.size(),
                  batch_storage.gauges());
  stats.add_gauge(
      "mailassay_usage_pending", "Usage counts waiting to be written.",
      [&usage] { return static_cast<double>(usage.gauges().pending.load()); });
  add_pool_gauges(stats, "validation", validation.size(), validation.gauges());
  add_dns_gauges(stats, validator);
  add_smtp_gauges(stats, scheduler.get(), *ledger_counters,
                  validator->resolver().providers());
  // The egress self-audit, on a thread of its own (it blocks), only when
  // SMTP probing is on: it checks what makes every probe's answer unknown.
  std::unique_ptr<actors::egress_monitor> egress;
  if (scheduler) {
    egress = std::make_unique<actors::egress_monitor>(
        std::make_shared<net::egress_audit>(egress_config(cfg),
                                            validator->shared_resolver()),
        actors::egress_monitor_options{
            cfg.egress.at_start,
            std::chrono::seconds(cfg.egress.interval_seconds), unix_now});
    add_egress_gauges(stats, *egress);
  }
  if (scheduler && catch_all_counters) {
    const char* help = "Catch-all verdicts shared through Redis: sent to "
                       "the other processes, or heard (own ones included).";
    auto c = catch_all_counters;
    stats.add_gauge("mailassay_smtp_catch_all_shared{way=\"sent\"}", help,
                    [c] { return static_cast<double>(c->published.load()); });
    stats.add_gauge("mailassay_smtp_catch_all_shared{way=\"heard\"}", help,
                    [c] { return static_cast<double>(c->heard.load()); });
  }
  if (scheduler && slots_counters) {
    const char* help = "SMTP sessions admitted under the per-MX-host limits "
                       "shared through Redis (redis), or by this process "
                       "alone while Redis was away (local_fallback).";
    auto c = slots_counters;
    stats.add_gauge("mailassay_smtp_host_slots_shared{decided_by=\"redis\"}",
                    help, [c] { return static_cast<double>(c->redis.load()); });
    stats.add_gauge(
        "mailassay_smtp_host_slots_shared{decided_by=\"local_fallback\"}", help,
        [c] { return static_cast<double>(c->fallback.load()); });
    stats.add_gauge("mailassay_smtp_host_slots_shared_waits",
                    "Times Redis answered that an MX host had no free slot "
                    "or connection token (asked again later).",
                    [c] { return static_cast<double>(c->refused.load()); });
  }
  add_limiter_gauges(stats, limiter.gauges());
  if (redis)
    add_redis_gauges(stats, *redis, *shared_limits);
  stats.add_gauge("mailassay_auth_key_cache_entries",
                  "API keys held in the authentication cache.",
                  [&keys] { return static_cast<double>(keys.size()); });

  http::services svc{cfg,
                     pool,
                     keys,
                     validation,
                     usage,
                     limiter,
                     std::move(*trusted),
                     stats,
                     MAILASSAY_VERSION,
                     unix_now(),
                     unix_now};
  svc.syntax = syntax_options(cfg);
  svc.batches = &batches;
  svc.shared_limits = shared_limits.get();
  svc.webhooks = &webhooks;
  svc.egress = egress.get();
  stats.add_gauge("mailassay_http_in_flight", "Requests being handled.",
                  [&svc] { return static_cast<double>(svc.in_flight.load()); });
  {
    http::server srv{svc};
    if (auto err = srv.start(); !err.empty()) {
      std::cerr << "mailassay: " << err << "\n";
      retention.stop();
      webhooks.stop(std::chrono::milliseconds(5000));
      webhook_storage.stop();
      pool.stop();
      batch_storage.stop();
      return 1;
    }
    log::event(log::level::info, "started",
               {{"address", cfg.http.address},
                {"port", std::to_string(cfg.http.port)},
                {"version", MAILASSAY_VERSION}});
    // SIGHUP and `mailassay admin reload` (the control socket's thread)
    // reload one at a time.
    std::mutex reloading;
    reload_targets targets{&cfg, &limiter, &batches, scheduler.get()};
    auto reload_now = [&] {
      std::lock_guard guard{reloading};
      return reload(file, targets);
    };
    auto control = control_socket(cfg.control.socket, reload_now);
    auto sig = wait_for_signal(signals);
    for (; sig == SIGHUP; sig = wait_for_signal(signals))
      reload_now();
    log::event(log::level::info, "stopping",
               {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
    if (control)
      control->stop();
    srv.drain_and_stop(10000);
  }
  // An audit in progress ends now (its report is dropped).
  if (egress)
    egress->stop();
  // No more changes from other processes: their sinks are about to stop.
  if (events)
    events->stop();
  // Pending checks end (decided locally) before the limiter goes away.
  if (redis)
    redis->stop();
  if (redis_sub)
    redis_sub->stop();
  retention.stop();
  // Running batch jobs write what they finished and hand their leases back,
  // so the next start resumes them at once.
  batches.stop(std::chrono::milliseconds(10000));
  // Deliveries in flight hand their leases back: the next process sends
  // them.
  webhooks.stop(std::chrono::milliseconds(5000));
  if (scheduler)
    scheduler->stop();
  // Workers finish their queued jobs (storage flushed) before the system
  // goes away.
  // Usage counted so far is written before the workers go away.
  usage.flush_and_stop();
  limiter.stop();
  validation.stop();
  caf::anon_send_exit(ledger, caf::exit_reason::user_shutdown);
  batch_storage.stop();
  webhook_storage.stop();
  pool.stop();
  sys.await_all_actors_done();
  log::event(log::level::info, "stopped", {});
  return 0;
}

} // namespace mailassay::app
