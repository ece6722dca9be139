// The credit ledger on CAF's deterministic test scheduler, writing through
// a store double that holds each write until the test completes it.
#include "actors/credits/ledger.hpp"

#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace mailassay;
using actors::credits::ledger_counters;
using actors::credits::ledger_store;
using actors::credits::reservation;
using actors::credits::reserve_outcome;

namespace {

// Keeps every write; the test completes them in any order.
struct store_double final : ledger_store {
  struct write {
    bool take;
    reservation r;
    callback done;
  };
  std::vector<write> writes;

  void take(const reservation& r, callback done) override {
    writes.push_back({true, r, std::move(done)});
  }
  void give_back(const reservation& r, callback done) override {
    writes.push_back({false, r, std::move(done)});
  }
};

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::shared_ptr<store_double> store = std::make_shared<store_double>();
  std::shared_ptr<ledger_counters> counters =
      std::make_shared<ledger_counters>();
  actors::credits::ledger_actor ledger;

  fixture() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    cfg.set("logger.console", caf::atom("none"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    ledger = actors::credits::spawn_ledger(*sys, store, counters);
    sched->run();
  }

  ~fixture() {
    caf::anon_send_exit(ledger, caf::exit_reason::user_shutdown);
    sched->run();
  }

  // Sends `msg` from a client actor; returns where the answer lands.
  template <class T, class Msg>
  std::shared_ptr<std::optional<T>> ask(Msg msg) {
    auto out = std::make_shared<std::optional<T>>();
    sys->spawn([out, msg, l = ledger](caf::event_based_actor* self) {
      self->request(l, caf::infinite, msg).then([out](T& v) {
        *out = std::move(v);
      });
    });
    sched->run();
    return out;
  }

  // Completes write `i` with `r`, then lets every actor run.
  void complete(std::size_t i, core::expected<core::unit> r) {
    store->writes.at(i).done(std::move(r));
    sched->run();
  }
};

} // namespace

TEST_SUITE("actors.credits.ledger") {
  TEST_CASE("a reservation takes one credit through the store") {
    fixture f;
    auto got = f.ask<reserve_outcome>(
        actors::credits::reserve_credit{"o1", "validate"});
    REQUIRE(f.store->writes.size() == 1);
    CHECK(f.store->writes[0].take);
    CHECK(f.store->writes[0].r.organization_id == "o1");
    CHECK(f.store->writes[0].r.reference == "validate");
    // No answer before the store's.
    CHECK_FALSE(got->has_value());
    f.complete(0, core::unit{});
    REQUIRE(got->has_value());
    CHECK((*got)->held.held);
    CHECK((*got)->held.organization_id == "o1");
    CHECK_FALSE((*got)->refused.has_value());
    CHECK(f.counters->reserved == 1);
  }

  TEST_CASE("a short balance is refused with the spec's 402 message") {
    fixture f;
    auto got = f.ask<reserve_outcome>(
        actors::credits::reserve_credit{"o1", "validate"});
    f.complete(0, core::make_error(core::errc::insufficient_credits,
                                   "not enough credits"));
    REQUIRE(got->has_value());
    CHECK_FALSE((*got)->held.held);
    REQUIRE((*got)->refused.has_value());
    CHECK((*got)->refused->code == core::errc::insufficient_credits);
    CHECK((*got)->refused->message ==
          "Insufficient credits for SMTP validation");
    CHECK(f.counters->refused == 1);
    CHECK(f.counters->reserved == 0);
  }

  TEST_CASE("a storage failure is refused with its own error") {
    fixture f;
    auto got = f.ask<reserve_outcome>(
        actors::credits::reserve_credit{"o1", "validate"});
    f.complete(0, core::make_error(core::errc::unavailable, "db down"));
    REQUIRE(got->has_value());
    REQUIRE((*got)->refused.has_value());
    CHECK((*got)->refused->code == core::errc::unavailable);
    CHECK(f.counters->failed == 1);
  }

  TEST_CASE("a commit writes nothing: the reservation already took it") {
    fixture f;
    caf::anon_send(f.ledger,
                   actors::credits::commit_credit{{"o1", "validate", true}});
    f.sched->run();
    CHECK(f.store->writes.empty());
    CHECK(f.counters->committed == 1);
  }

  TEST_CASE("a refund answers once the credit is given back") {
    fixture f;
    auto got =
        f.ask<bool>(actors::credits::refund_credit{{"o1", "validate", true}});
    REQUIRE(f.store->writes.size() == 1);
    CHECK_FALSE(f.store->writes[0].take);
    CHECK_FALSE(got->has_value());
    f.complete(0, core::unit{});
    REQUIRE(got->has_value());
    CHECK(**got);
    CHECK(f.counters->refunded == 1);
    // A failed refund is logged and answered false.
    auto bad =
        f.ask<bool>(actors::credits::refund_credit{{"o1", "validate", true}});
    f.complete(1, core::make_error(core::errc::unavailable, "db down"));
    REQUIRE(bad->has_value());
    CHECK_FALSE(**bad);
    CHECK(f.counters->failed == 1);
  }

  TEST_CASE("nothing held, nothing to refund") {
    fixture f;
    auto got =
        f.ask<bool>(actors::credits::refund_credit{{"o1", "validate", false}});
    REQUIRE(got->has_value());
    CHECK(**got);
    CHECK(f.store->writes.empty());
  }

  TEST_CASE("writes answered out of order reach their own requesters") {
    fixture f;
    auto a = f.ask<reserve_outcome>(
        actors::credits::reserve_credit{"a", "validate"});
    auto b = f.ask<reserve_outcome>(
        actors::credits::reserve_credit{"b", "validate"});
    f.complete(1, core::make_error(core::errc::insufficient_credits, "short"));
    f.complete(0, core::unit{});
    CHECK((*a)->held.held);
    CHECK((*a)->held.organization_id == "a");
    CHECK_FALSE((*b)->held.held);
    CHECK((*b)->held.organization_id == "b");
  }
}
