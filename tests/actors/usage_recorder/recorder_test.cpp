// The usage recorder on CAF's deterministic test scheduler: time moves only
// when the test says so, and the sink is a test double that keeps each
// batch and its completion callback.
#include "actors/usage_recorder.hpp"
#include "security/digest.hpp"

#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace mailassay::actors;
using namespace std::chrono_literals;

namespace {

// 2026-11-21T00:00:00Z.
constexpr std::int64_t nov21 = 1795219200;

struct sink_double {
  std::vector<usage_batch> batches;
  std::vector<flush_done> dones;
  bool keep_done = true;
};

// An actor system whose scheduler the test drives by hand; sets `sched`.
std::unique_ptr<caf::actor_system>
testing_system(caf::actor_system_config& cfg,
               caf::scheduler::test_coordinator*& sched) {
  cfg.set("scheduler.policy", caf::atom("testing"));
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console", caf::atom("none"));
  auto sys = std::make_unique<caf::actor_system>(cfg);
  sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
  return sys;
}

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::shared_ptr<sink_double> sink = std::make_shared<sink_double>();
  std::shared_ptr<usage_gauges> gauges = std::make_shared<usage_gauges>();
  usage_recorder_actor rec;

  explicit fixture(usage_recorder_settings s = {}) {
    sys = testing_system(cfg, sched);
    auto sd = sink;
    rec = spawn_usage_recorder(
        *sys,
        [sd](usage_batch b, flush_done done) {
          sd->batches.push_back(std::move(b));
          if (sd->keep_done)
            sd->dones.push_back(std::move(done));
        },
        s, gauges);
    sched->run();
  }

  ~fixture() {
    caf::anon_send_exit(rec, caf::exit_reason::user_shutdown);
    sched->run();
  }

  void record(const std::string& key, std::int64_t at, bool successful,
              std::int64_t credits, const std::string& hash) {
    caf::anon_send(rec, usage_event{key, "o1", at, successful, credits, hash});
  }

  // Completes the oldest batch still waiting for its outcome.
  void complete(std::size_t i, bool ok) {
    sink->dones.at(i)(ok);
    sched->run();
  }

  // Asks for a flush and returns where its answer will land.
  std::shared_ptr<std::optional<bool>> flush() {
    auto answer = std::make_shared<std::optional<bool>>();
    caf::anon_send(rec, usage_flush_atom_v,
                   flush_done{[answer](bool ok) { *answer = ok; }});
    sched->run();
    return answer;
  }

  void tick() {
    sched->advance_time(2s);
    sched->run();
  }
};

// Built with append: GCC 12 warns falsely (-Wrestrict) on "a" + s.
std::string hash(const char* prefix, int i) {
  std::string s = prefix;
  s.append(std::to_string(i));
  return s;
}

// The known sequence: 10 validations (7 valid, 3 invalid, all answered 200,
// one credit each) plus one 422 without an address, on 2026-11-21.
void known_sequence(fixture& f) {
  for (int i = 0; i < 7; ++i)
    f.record("k1", nov21 + i, true, 1, hash("valid-", i));
  for (int i = 0; i < 3; ++i)
    f.record("k1", nov21 + 10 + i, true, 1, hash("invalid-", i));
  f.record("k1", nov21 + 20, false, 0, "");
}

} // namespace

TEST_SUITE("actors.usage_recorder") {
  TEST_CASE("records are batched: no sink call per record") {
    fixture f;
    known_sequence(f);
    f.sched->run();
    CHECK(f.sink->batches.empty());
    CHECK(f.gauges->pending == 11); // one (key, day) entry + 10 hashes
  }

  TEST_CASE("the periodic tick writes one batch per interval") {
    fixture f;
    known_sequence(f);
    f.sched->run();
    f.sched->advance_time(1999ms);
    f.sched->run();
    CHECK(f.sink->batches.empty());
    f.sched->advance_time(1ms);
    f.sched->run();
    REQUIRE(f.sink->batches.size() == 1);
    const auto& b = f.sink->batches[0];
    REQUIRE(b.size() == 1);
    CHECK(b[0].key_id == "k1");
    CHECK(b[0].organization_id == "o1");
    CHECK(b[0].day == "2026-11-21");
    CHECK(b[0].requests == 11);
    CHECK(b[0].successful == 10);
    CHECK(b[0].credits == 10);
    CHECK(b[0].address_hashes.size() == 10);
    f.complete(0, true);
    CHECK(f.gauges->flushes == 1);
    CHECK(f.gauges->pending == 0);

    // Nothing recorded: the next tick writes nothing.
    f.tick();
    CHECK(f.sink->batches.size() == 1);

    // The tick keeps coming back.
    f.record("k2", nov21 + 86400, true, 1, "x");
    f.tick();
    REQUIRE(f.sink->batches.size() == 2);
    CHECK(f.sink->batches[1][0].key_id == "k2");
    CHECK(f.sink->batches[1][0].day == "2026-11-22");
  }

  TEST_CASE("one write at a time: a tick during a write waits for it") {
    fixture f;
    f.record("k1", nov21, true, 1, "a");
    f.tick();
    REQUIRE(f.sink->batches.size() == 1);
    f.record("k1", nov21, true, 1, "b");
    f.tick();
    CHECK(f.sink->batches.size() == 1);
    f.complete(0, true);
    CHECK(f.sink->batches.size() == 1); // no flush until the next tick
    f.tick();
    REQUIRE(f.sink->batches.size() == 2);
    CHECK(f.sink->batches[1][0].address_hashes ==
          std::vector<std::string>{"b"});
  }

  TEST_CASE("a flush request writes everything and answers once stored") {
    fixture f;
    known_sequence(f);
    auto answer = f.flush();
    REQUIRE(f.sink->batches.size() == 1); // at once, no tick needed
    CHECK(f.sink->batches[0][0].requests == 11);
    CHECK_FALSE(answer->has_value()); // not stored yet
    f.complete(0, true);
    REQUIRE(answer->has_value());
    CHECK(**answer);
  }

  TEST_CASE("the flush request/reply form answers true once stored") {
    fixture f;
    known_sequence(f);
    std::optional<bool> answer;
    f.sys->spawn([&answer, rec = f.rec](caf::event_based_actor* self) {
      self->request(rec, caf::infinite, usage_flush_atom_v)
          .then([&answer](bool ok) { answer = ok; });
    });
    f.sched->run();
    REQUIRE(f.sink->batches.size() == 1);
    CHECK_FALSE(answer.has_value());
    f.complete(0, true);
    CHECK(answer == std::optional<bool>{true});
  }

  TEST_CASE("a flush with nothing recorded answers true at once") {
    fixture f;
    auto answer = f.flush();
    CHECK(f.sink->batches.empty());
    CHECK(*answer == std::optional<bool>{true});
  }

  TEST_CASE("a flush during a write also writes what came after it") {
    fixture f;
    f.record("k1", nov21, true, 1, "a");
    f.tick();
    REQUIRE(f.sink->batches.size() == 1);
    f.record("k1", nov21, true, 1, "b");
    auto answer = f.flush();
    CHECK(f.sink->batches.size() == 1);
    f.complete(0, true);
    // The first write is done, but "b" is not stored yet.
    CHECK_FALSE(answer->has_value());
    REQUIRE(f.sink->batches.size() == 2);
    CHECK(f.sink->batches[1][0].address_hashes ==
          std::vector<std::string>{"b"});
    f.complete(1, true);
    CHECK(*answer == std::optional<bool>{true});
  }

  TEST_CASE("a failed write keeps the data and the next flush retries it") {
    fixture f;
    f.record("k1", nov21, true, 2, "a");
    f.record("k1", nov21, false, 0, "b");
    f.tick();
    REQUIRE(f.sink->batches.size() == 1);
    f.complete(0, false);
    CHECK(f.gauges->failed_flushes == 1);
    CHECK(f.gauges->pending == 3);
    f.record("k1", nov21, true, 1, "b");
    f.record("k1", nov21, true, 1, "c");
    f.tick();
    REQUIRE(f.sink->batches.size() == 2);
    const auto& b = f.sink->batches[1];
    REQUIRE(b.size() == 1);
    CHECK(b[0].requests == 4);
    CHECK(b[0].successful == 3);
    CHECK(b[0].credits == 4);
    CHECK(b[0].address_hashes == std::vector<std::string>{"a", "b", "c"});
    f.complete(1, true);
    CHECK(f.gauges->flushes == 1);
    CHECK(f.gauges->pending == 0);
  }

  TEST_CASE("a failed flush answers false and keeps the data") {
    fixture f;
    f.record("k1", nov21, true, 1, "a");
    auto answer = f.flush();
    f.complete(0, false);
    CHECK(*answer == std::optional<bool>{false});
    auto again = f.flush();
    REQUIRE(f.sink->batches.size() == 2);
    CHECK(f.sink->batches[1][0].requests == 1);
    f.complete(1, true);
    CHECK(*again == std::optional<bool>{true});
  }

  TEST_CASE("a sink that drops its callback counts as a failed write") {
    fixture f;
    f.sink->keep_done = false;
    f.record("k1", nov21, true, 1, "a");
    auto answer = f.flush();
    CHECK(*answer == std::optional<bool>{false});
    CHECK(f.gauges->failed_flushes == 1);
    f.sink->keep_done = true;
    f.tick();
    REQUIRE(f.sink->batches.size() == 2);
    CHECK(f.sink->batches[1][0].requests == 1);
  }

  TEST_CASE("a late or repeated outcome is ignored") {
    fixture f;
    f.record("k1", nov21, true, 1, "a");
    f.tick();
    f.complete(0, true);
    f.complete(0, false); // flush_done reports once
    CHECK(f.gauges->flushes == 1);
    CHECK(f.gauges->failed_flushes == 0);
    caf::anon_send(f.rec, usage_done_atom_v, std::uint64_t{42}, false);
    f.sched->run();
    CHECK(f.gauges->failed_flushes == 0);
    CHECK(f.gauges->pending == 0);
  }

  TEST_CASE("a large backlog is written before the interval ends") {
    usage_recorder_settings s;
    s.flush_threshold = 5; // entries + address hashes
    fixture f{s};
    for (int i = 0; i < 3; ++i)
      f.record("k1", nov21, true, 1, hash("h", i));
    f.sched->run();
    CHECK(f.sink->batches.empty()); // 1 entry + 3 hashes
    f.record("k1", nov21, true, 1, "h3");
    f.sched->run();
    REQUIRE(f.sink->batches.size() == 1);
    CHECK(f.sink->batches[0][0].requests == 4);
    // While that write runs, the backlog waits; once it is done, a backlog
    // over the bound goes at once.
    for (int i = 4; i < 9; ++i)
      f.record("k1", nov21, true, 1, hash("h", i));
    f.sched->run();
    CHECK(f.sink->batches.size() == 1);
    f.complete(0, true);
    REQUIRE(f.sink->batches.size() == 2);
    CHECK(f.sink->batches[1][0].requests == 5);
  }

  TEST_CASE("address hashes beyond the bound are dropped and counted") {
    usage_recorder_settings s;
    s.max_addresses = 2;
    fixture f{s};
    for (int i = 0; i < 4; ++i)
      f.record("k1", nov21, true, 1, hash("h", i));
    f.sched->run();
    CHECK(f.gauges->dropped_addresses == 2);
    f.tick();
    REQUIRE(f.sink->batches.size() == 1);
    CHECK(f.sink->batches[0][0].requests == 4);
    CHECK(f.sink->batches[0][0].address_hashes.size() == 2);
  }
}

namespace {

// The facade on the deterministic scheduler: what `record` sends, and when
// the recorder takes the buffer in.
struct facade_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::shared_ptr<sink_double> sink = std::make_shared<sink_double>();
  std::unique_ptr<usage_recorder> rec;

  explicit facade_fixture(usage_recorder_settings s = {}) {
    sys = testing_system(cfg, sched);
    auto sd = sink;
    rec = std::make_unique<usage_recorder>(
        *sys,
        [sd](usage_batch b, flush_done done) {
          sd->batches.push_back(std::move(b));
          sd->dones.push_back(std::move(done));
        },
        s);
    sched->run();
  }

  ~facade_fixture() {
    rec.reset();
    sched->run();
  }

  void tick() {
    sched->advance_time(2s);
    sched->run();
  }
};

} // namespace

TEST_SUITE("actors.usage_recorder") {
  TEST_CASE("the facade sends no message per record; the tick takes them in") {
    facade_fixture f;
    for (int i = 0; i < 50; ++i)
      f.rec->record("k1", "o1", nov21 + i, i % 5 != 0, 1, hash("a", i % 10));
    CHECK(f.sched->jobs.empty());
    f.sched->run();
    CHECK(f.sink->batches.empty());
    f.tick();
    REQUIRE(f.sink->batches.size() == 1);
    const auto& b = f.sink->batches[0];
    REQUIRE(b.size() == 1);
    CHECK(b[0].requests == 50);
    CHECK(b[0].successful == 40);
    CHECK(b[0].credits == 50);
    CHECK(b[0].address_hashes.size() == 10);
    f.sink->dones[0](true);
    f.sched->run();
    CHECK(f.rec->gauges().flushes == 1);
    CHECK(f.rec->gauges().pending == 0);
  }

  TEST_CASE("record_address hashes the lower-cased address when taken in") {
    facade_fixture f;
    f.rec->record_address("k1", "o1", nov21, true, 0, "Jane.Doe@Example.COM");
    f.rec->record_address("k1", "o1", nov21, true, 0, "jane.doe@example.com");
    f.rec->record_address("k1", "o1", nov21, false, 0, "");
    f.rec->record_address("k2", "o1", nov21, true, 0, "other@example.com");
    f.tick();
    REQUIRE(f.sink->batches.size() == 1);
    const auto& b = f.sink->batches[0];
    REQUIRE(b.size() == 2);
    CHECK(b[0].key_id == "k1");
    CHECK(b[0].requests == 3);
    CHECK(b[0].successful == 2);
    CHECK(b[0].address_hashes ==
          std::vector<std::string>{
              mailassay::security::sha256_hex("jane.doe@example.com")});
    CHECK(b[1].address_hashes ==
          std::vector<std::string>{
              mailassay::security::sha256_hex("other@example.com")});
  }

  TEST_CASE("with a server key the stored hash is keyed, not a bare "
            "SHA-256 a dictionary reverses") {
    usage_recorder_settings s;
    s.address_key = "server-derived key";
    facade_fixture f{s};
    f.rec->record_address("k1", "o1", nov21, true, 0, "Jane.Doe@Example.COM");
    f.rec->record_address("k1", "o1", nov21, true, 0, "jane.doe@example.com");
    f.tick();
    REQUIRE(f.sink->batches.size() == 1);
    const auto& b = f.sink->batches[0];
    REQUIRE(b.size() == 1);
    auto keyed = mailassay::security::hmac_sha256_hex("server-derived key",
                                                      "jane.doe@example.com");
    CHECK(b[0].address_hashes == std::vector<std::string>{keyed});
    CHECK(keyed != mailassay::security::sha256_hex("jane.doe@example.com"));
  }

  TEST_CASE("record_key counts under the shared key's id and organization") {
    facade_fixture f;
    auto k1 = std::make_shared<mailassay::core::account::api_key>();
    k1->id = "k1";
    k1->organization_id = "o1";
    auto k2 = std::make_shared<mailassay::core::account::api_key>();
    k2->id = "k2";
    k2->organization_id = "o2";
    f.rec->record_key(k1, nov21, true, 0, "Jane.Doe@Example.COM");
    f.rec->record_key(k1, nov21, false, 0, "");
    f.rec->record_address("k1", "o1", nov21, true, 0, "jane.doe@example.com");
    f.rec->record_key(k2, nov21, true, 0, "other@example.com");
    f.tick();
    REQUIRE(f.sink->batches.size() == 1);
    const auto& b = f.sink->batches[0];
    REQUIRE(b.size() == 2);
    CHECK(b[0].key_id == "k1");
    CHECK(b[0].organization_id == "o1");
    CHECK(b[0].requests == 3);
    CHECK(b[0].successful == 2);
    CHECK(b[0].address_hashes ==
          std::vector<std::string>{
              mailassay::security::sha256_hex("jane.doe@example.com")});
    CHECK(b[1].key_id == "k2");
    CHECK(b[1].organization_id == "o2");
  }

  TEST_CASE("a flush request takes in what was buffered before it") {
    facade_fixture f;
    f.rec->record("k1", "o1", nov21, true, 1, "a");
    auto answer = std::make_shared<std::optional<bool>>();
    f.rec->flush(flush_done{[answer](bool ok) { *answer = ok; }});
    f.sched->run();
    REQUIRE(f.sink->batches.size() == 1);
    CHECK(f.sink->batches[0][0].requests == 1);
    f.sink->dones[0](true);
    f.sched->run();
    CHECK(*answer == std::optional<bool>{true});
  }

  TEST_CASE("a buffer that reaches the threshold is taken in before the tick") {
    usage_recorder_settings s;
    s.flush_threshold = 4;
    facade_fixture f{s};
    for (int i = 0; i < 3; ++i)
      f.rec->record("k1", "o1", nov21, true, 1, hash("h", i));
    CHECK(f.sched->jobs.empty());
    f.rec->record("k1", "o1", nov21, true, 1, "h3");
    CHECK_FALSE(f.sched->jobs.empty()); // one message for the whole fill
    f.sched->run();
    REQUIRE(f.sink->batches.size() == 1);
    CHECK(f.sink->batches[0][0].requests == 4);
    CHECK(f.sink->batches[0][0].address_hashes.size() == 4);
  }

  TEST_CASE("record_key's requests count toward the threshold, each with its "
            "own address") {
    usage_recorder_settings s;
    s.flush_threshold = 4;
    facade_fixture f{s};
    auto k = std::make_shared<mailassay::core::account::api_key>();
    k->id = "k1";
    k->organization_id = "o1";
    // The addresses share one text in the buffer: each keeps its own bytes.
    std::vector<std::string> addresses{"a@example.com", "",
                                       "a.much.longer.address@example.com"};
    for (const auto& a : addresses)
      f.rec->record_key(k, nov21, true, 0, a);
    CHECK(f.sched->jobs.empty());
    f.rec->record("k1", "o1", nov21, false, 0, "");
    CHECK_FALSE(f.sched->jobs.empty()); // the drain, at the fourth
    f.sched->run();
    // Three pending counts (the key's day and two hashes) are below the
    // threshold: the tick writes them.
    f.tick();
    REQUIRE(f.sink->batches.size() == 1);
    const auto& b = f.sink->batches[0];
    REQUIRE(b.size() == 1);
    CHECK(b[0].requests == 4);
    CHECK(b[0].successful == 3);
    auto got = b[0].address_hashes;
    std::sort(got.begin(), got.end());
    std::vector<std::string> want{
        mailassay::security::sha256_hex("a@example.com"),
        mailassay::security::sha256_hex("a.much.longer.address@example.com")};
    std::sort(want.begin(), want.end());
    CHECK(got == want);
  }
}
