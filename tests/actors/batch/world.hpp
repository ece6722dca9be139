#pragma once

// The batch runner and its supervisors as `serve` wires them, on a fresh
// database of one backend: a real CAF system, storage workers, a validator
// whose resolver asks the DNS peer on loopback. Jobs are created in
// storage, as an upload does, and watched there.

#include "actors/batch/runner.hpp"
#include "actors/credits/ledger.hpp"
#include "actors/storage_pool.hpp"
#include "actors/validation/validator.hpp"
#include "actors/validation_pool.hpp"
#include "http/codec/batch_results.hpp"
#include "net/dns_resolver.hpp"
#include "security/jwt_keyring.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/storage/support.hpp"
#include "tests/support/wait.hpp"
#include "use_cases/accounts/key_cache.hpp"

#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace mailassay::tests::batch {

using namespace std::chrono_literals;
namespace cb = core::batch;

/// Waits until `done()` holds, polling; false after `limit` (a minute: a
/// batch job on a loaded machine is slow).
inline bool eventually(const std::function<bool()>& done,
                       std::chrono::milliseconds limit = 60s) {
  return mailassay::testing::eventually(done, limit, 20ms);
}

/// The storage workers of a world held busy (world::hold_storage).
struct storage_hold {
  std::promise<void> go;
  bool released = false;
  /// Holds queued behind others on a busy worker (they count as queued).
  int queued_holds = 0;

  storage_hold() = default;
  storage_hold(storage_hold&& o) noexcept
      : go(std::move(o.go)), released(std::exchange(o.released, true)),
        queued_holds(o.queued_holds) {}
  ~storage_hold() { release(); }

  void release() {
    if (!std::exchange(released, true))
      go.set_value();
  }
};

/// One test's runtime.
struct world {
  explicit world(storage::dialect kind) : t(kind) {
    if (t.skipped())
      return;
    // ok.test has a mail route; nomx.test does not exist.
    dns.add_mx("ok.test", 10, "mx.ok.test");
    dns.add_a("mx.ok.test", "192.0.2.1");
    dns.set_behaviour("nomx.test", peers::dns_behaviour::nxdomain);
    sys_cfg.set("scheduler.max-threads", 2);
    sys_cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(sys_cfg);
    net::dns_resolver_config rc;
    rc.servers = {dns.server()};
    // Longer than any delay a test gives the peer: a slow answer arrives.
    rc.timeout = 5s;
    rc.tries = 1;
    resolver = std::shared_ptr<net::dns_resolver>(
        std::move(net::dns_resolver::create(std::move(rc)).value()));
    core::syntax::options syntax;
    syntax.allow_test_domains = true;
    validator = std::make_shared<actors::validation::validator>(
        std::make_shared<const core::risk::lists>(), resolver, syntax);
    // Jobs reserve their credits at upload (prepaid): the ledger holds
    // none. No SMTP scheduler: probing is off, as for a server without a
    // HELO identity.
    ledger = actors::credits::spawn_ledger(
        *sys, nullptr, std::make_shared<actors::credits::ledger_counters>());
    validations = std::make_unique<actors::validation_pool>(
        *sys, validator, 1, ledger, actors::smtp::scheduler_actor{});
    cfg.database.url = t.url();
    storage = std::make_unique<actors::storage_pool>(
        *sys, cfg, keys, jwt, actors::storage_lane{2, 0, "test-batch"});
    batch.poll_ms = 50;
    batch.lease_seconds = 30;
    batch.checkpoint_rows = 3;
    batch.concurrency = 4;
    batch.nice = 0;
    batch.rate_under_load = 0;
    storage::testing::create_org(t.db(), "o1", "o1@example.com", 1000);
    storage::testing::create_org(t.db(), "o2", "o2@example.com", 1000);
  }

  ~world() {
    runners.clear();
    if (validations)
      validations->stop();
    validations.reset();
    caf::anon_send_exit(ledger, caf::exit_reason::user_shutdown);
    if (storage)
      storage->stop();
    if (resolver)
      resolver->shutdown();
    sys.reset();
  }

  storage::testing::test_db t;
  peers::dns_peer dns;
  caf::actor_system_config sys_cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<net::dns_resolver> resolver;
  std::shared_ptr<actors::validation::validator> validator;
  actors::credits::ledger_actor ledger;
  std::unique_ptr<actors::validation_pool> validations;
  config::settings cfg;
  config::batch_settings batch;
  use_cases::accounts::key_cache keys{16, 60};
  std::shared_ptr<security::jwt_keyring> jwt =
      security::jwt_keyring::fixed("batch-tests-secret-of-enough-length");
  std::unique_ptr<actors::storage_pool> storage;
  /// Real-time validations so far, as the runner's env reads them.
  std::shared_ptr<std::atomic<std::int64_t>> realtime =
      std::make_shared<std::atomic<std::int64_t>>(0);
  std::vector<std::unique_ptr<actors::batch_runner>> runners;

  /// What a runner of lease owner `owner` works with: the settings in
  /// `batch`, Unix time.
  actors::batch_runner_env env(const std::string& owner) {
    actors::batch_runner_env e;
    e.storage = storage.get();
    e.validations = validations.get();
    e.cfg = batch;
    e.owner = owner;
    e.now = [] { return static_cast<std::int64_t>(std::time(nullptr)); };
    e.realtime_count = [r = realtime] { return r->load(); };
    e.write_detail = http::codec::batch_item_detail;
    return e;
  }

  /// Starts a runner of lease owner `owner`.
  actors::batch_runner& start(const std::string& owner) {
    runners.push_back(std::make_unique<actors::batch_runner>(*sys, env(owner)));
    return *runners.back();
  }

  /// Queues job `id` of `org` with `emails` (one item each) and `invalid`
  /// rows already done.
  void queue(const std::string& id, const std::string& org,
             const std::vector<std::string>& emails, std::int64_t invalid = 0) {
    cb::job j;
    j.id = id;
    j.organization_id = org;
    j.file_name = id + ".csv";
    j.email_column = "email";
    j.unique_emails = static_cast<std::int64_t>(emails.size());
    j.invalid_rows = invalid;
    j.total_rows = j.unique_emails + invalid;
    j.processed = invalid;
    j.counts.invalid = invalid;
    j.created_at = std::time(nullptr);
    std::vector<cb::item> items;
    std::int64_t seq = 0;
    for (std::int64_t i = 0; i < invalid; ++i) {
      cb::item it;
      it.seq = seq++;
      it.email = "not an address";
      it.done = true;
      it.status = core::validation::status::invalid;
      it.reason = "invalid_syntax";
      it.detail = R"({"syntax":false})";
      items.push_back(it);
    }
    for (const auto& e : emails) {
      cb::item it;
      it.seq = seq++;
      it.email = e;
      items.push_back(it);
    }
    auto r = t.db().create_batch_job(j, items);
    REQUIRE_MESSAGE(r.has_value(), storage::testing::why(r));
  }

  /// The job as stored now.
  cb::job job(const std::string& id, const std::string& org = "o1") {
    auto j = t.db().get_batch_job(org, id);
    REQUIRE_MESSAGE(j.has_value(), storage::testing::why(j));
    return *j;
  }

  /// Waits until job `id` has `status`; requires it within a minute.
  cb::job wait_for(const std::string& id, cb::job_status status,
                   const std::string& org = "o1") {
    cb::job last;
    bool ok = eventually([&] {
      last = job(id, org);
      return last.status == status;
    });
    REQUIRE_MESSAGE(ok, "job " << id << " is " << cb::to_string(last.status)
                               << ", not " << cb::to_string(status));
    return last;
  }

  /// Occupies every storage worker until the hold is released (or
  /// destroyed: a failed check must not leave the workers blocked); returns
  /// once all of them wait, jobs submitted meanwhile queueing behind them.
  storage_hold hold_storage() {
    storage_hold h;
    auto release = h.go.get_future().share();
    auto waiting = std::make_shared<std::atomic<int>>(0);
    int submitted = 0;
    while (waiting->load() < storage->size()) {
      storage->submit(actors::storage_job{[waiting, release](auto&) {
        ++*waiting;
        release.wait();
      }});
      ++submitted;
      // Round-robin may queue a hold behind another on one worker, where it
      // never starts: then the next one goes to another worker.
      (void)eventually([&] { return waiting->load() >= submitted; }, 500ms);
    }
    h.queued_holds = submitted - storage->size();
    return h;
  }

  /// Requires every storage job submitted so far to be done.
  void wait_storage_idle() {
    REQUIRE(eventually([&] {
      auto& g = storage->gauges();
      return g.queued.load() == 0 && g.busy.load() == 0;
    }));
  }

  /// Every item of job `id`, in file order.
  std::vector<cb::item> items(const std::string& id) {
    auto r = t.db().batch_items(id, -1, 100000, false, {});
    REQUIRE_MESSAGE(r.has_value(), storage::testing::why(r));
    return *r;
  }
};

/// `n` addresses at `domain`: u0@domain, u1@domain, ...
inline std::vector<std::string> addresses(int n, const std::string& domain) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i)
    out.push_back("u" + std::to_string(i) + "@" + domain);
  return out;
}

/// Slow mail domains: every name below slow.test has a route, answered
/// after `delay`, so a job of distinct slow domains advances one lookup at
/// a time (the DNS cache cannot help).
inline void make_slow(world& w, std::chrono::milliseconds delay) {
  w.dns.add_mx("*.slow.test", 10, "mx.ok.test");
  w.dns.set_delay("*.slow.test", delay);
}

/// `n` addresses of distinct slow domains: a@d0.slow.test, a@d1.slow.test...
inline std::vector<std::string> slow_addresses(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i)
    out.push_back("a@d" + std::to_string(i) + ".slow.test");
  return out;
}

/// Starts runner "p1" on job j1 of `n` slow addresses (each lookup takes
/// `delay`) with a lease that would outlast the test: only a lease handed
/// back lets another runner in.
inline actors::batch_runner&
start_slow_job(world& w, std::chrono::milliseconds delay, int n) {
  make_slow(w, delay);
  w.batch.lease_seconds = 3600;
  w.queue("j1", "o1", slow_addresses(n));
  return w.start("p1");
}

/// Answers lookups at once and starts runner "p2"; requires it to complete
/// job j1 and returns the job.
inline cb::job resume(world& w) {
  w.dns.set_delay("*.slow.test", 0ms);
  w.start("p2");
  return w.wait_for("j1", cb::job_status::completed);
}

} // namespace mailassay::tests::batch

/// Opens the world of the current backend as `name`, or returns from the
/// test when the backend is skipped.
#define MAILASSAY_BATCH_WORLD(name)                                            \
  mailassay::tests::batch::world name{TestType::kind};                         \
  if (name.t.skipped())                                                        \
  return
