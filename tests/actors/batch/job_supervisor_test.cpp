// One job's supervisor, spawned directly for a job claimed in storage, as
// the runner does: it validates the pending items, checkpoints, finishes
// the job and quits; `stop_atom` and `cancel_atom` end it early, with and
// without handing the lease back.
#include "actors/batch/job_supervisor.hpp"
#include "actors/batch/messages.hpp"
#include "tests/actors/batch/world.hpp"

#include <future>

using namespace mailassay;
using namespace mailassay::tests::batch;

namespace {

// The supervisor of one claimed job, under a parent actor that monitors
// it like the runner does and notes when it is gone.
struct supervised {
  std::shared_ptr<actors::batch_gauges> gauges =
      std::make_shared<actors::batch_gauges>();
  std::shared_ptr<std::atomic<bool>> gone =
      std::make_shared<std::atomic<bool>>(false);
  caf::actor parent;
  caf::actor supervisor;

  supervised(world& w, const std::string& owner, std::int64_t lease) {
    auto claimed = w.t.db().claim_batch_job(owner, lease, std::time(nullptr));
    REQUIRE_MESSAGE(claimed.has_value(), storage::testing::why(claimed));
    REQUIRE(claimed->has_value());
    auto env = std::make_shared<actors::batch_runner_env>(w.env(owner));
    env->cfg.lease_seconds = lease;
    auto out = std::make_shared<std::promise<caf::actor>>();
    auto spawned = out->get_future();
    parent = w.sys->spawn(
        [env, g = gauges, j = std::move(**claimed), out,
         gone = gone](caf::event_based_actor* self) mutable -> caf::behavior {
          auto sup = actors::batch::spawn_job_supervisor(self, env, g, j);
          self->monitor(sup);
          self->set_down_handler([gone](caf::down_msg&) { *gone = true; });
          out->set_value(sup);
          return {[](int) {}};
        });
    REQUIRE(spawned.wait_for(10s) == std::future_status::ready);
    supervisor = spawned.get();
  }

  ~supervised() {
    caf::anon_send_exit(parent, caf::exit_reason::user_shutdown);
  }

  bool ended() {
    return eventually([&] { return gone->load(); });
  }
};

// Items of job `id` that have their result.
std::int64_t done_items(world& w, const std::string& id) {
  std::int64_t n = 0;
  for (const auto& it : w.items(id))
    n += it.done ? 1 : 0;
  return n;
}

// Slow domains, one address at a time, a checkpoint after each result.
void make_slow(world& w) {
  make_slow(w, 100ms);
  w.batch.concurrency = 1;
  w.batch.checkpoint_rows = 1;
}

} // namespace

TEST_SUITE("actors.batch.job_supervisor") {
  TEST_CASE_TEMPLATE("a supervisor validates every pending item, finishes "
                     "the job and quits",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    auto emails = addresses(6, "ok.test");
    emails.push_back("u@nomx.test");
    w.queue("j1", "o1", emails, 2);
    supervised s{w, "p1", 30};
    REQUIRE(s.ended());
    auto j = w.job("j1");
    CHECK(j.status == cb::job_status::completed);
    CHECK(j.processed == 9);
    CHECK(done_items(w, "j1") == 9);
    CHECK(s.gauges->items_done.load() == 7);
    CHECK(s.gauges->checkpoints.load() >= 2);
    CHECK(s.gauges->running_jobs.load() == 0);
  }

  TEST_CASE_TEMPLATE("stop: it checkpoints what is done, hands the lease "
                     "back and quits",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    make_slow(w);
    w.queue("j1", "o1", slow_addresses(50));
    supervised s{w, "p1", 3600};
    REQUIRE(eventually([&] { return w.job("j1").processed >= 2; }));
    caf::anon_send(s.supervisor, actors::batch::stop_atom::value);
    REQUIRE(s.ended());
    auto j = w.job("j1");
    CHECK(j.status == cb::job_status::processing);
    CHECK(j.processed < 50);
    CHECK(j.processed == done_items(w, "j1"));
    CHECK(j.processed == s.gauges->items_done.load());
    CHECK(j.lease_expires_at <= std::time(nullptr));
  }

  TEST_CASE_TEMPLATE("cancel: it quits at once and keeps the lease (the "
                     "job was cancelled in storage)",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    make_slow(w);
    w.queue("j1", "o1", slow_addresses(50));
    supervised s{w, "p1", 3600};
    REQUIRE(eventually([&] { return w.job("j1").processed >= 1; }));
    caf::anon_send(s.supervisor, actors::batch::cancel_atom::value);
    REQUIRE(s.ended());
    auto j = w.job("j1");
    CHECK(j.processed < 50);
    CHECK(j.lease_owner == "p1");
    CHECK(j.lease_expires_at > std::time(nullptr) + 60);
  }
}
