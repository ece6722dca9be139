// The facade on CAF's real scheduler (its blocking flush_and_stop cannot run
// on the test scheduler), and the round trip into a real SQLite store.
#include "actors/storage_pool.hpp"
#include "actors/usage_recorder.hpp"
#include "config/settings.hpp"
#include "core/usage/calendar.hpp"
#include "core/usage/stats.hpp"
#include "storage/store.hpp"
#include "use_cases/accounts/key_cache.hpp"

#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <unistd.h>
#include <vector>

using namespace mailassay;
using namespace mailassay::actors;
using namespace std::chrono_literals;

namespace {

// 2026-11-20T00:00:00Z and the day after.
constexpr std::int64_t nov20 = 1795132800;
constexpr std::int64_t nov21 = 1795219200;

caf::actor_system_config& real_config(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", 1);
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console", caf::atom("none"));
  return cfg;
}

// The recorder as `serve` wires it: a real actor system, a storage pool of
// one worker on `url`, the recorder flushing into it (its timer an hour
// away, so only flush_and_stop writes).
struct recorder_on_storage {
  config::settings settings;
  use_cases::accounts::key_cache keys{16, 60};
  caf::actor_system_config cfg;
  caf::actor_system sys{real_config(cfg)};
  storage_pool pool;
  usage_recorder rec;

  explicit recorder_on_storage(const std::string& url)
      : settings{settings_for(url)}, pool{sys, settings, keys,
                                          security::jwt_keyring::fixed(
                                              "secret")},
        rec{sys, storage_usage_sink(pool), hourly()} {}

  static config::settings settings_for(const std::string& url) {
    config::settings s;
    s.database.url = url;
    s.actors.storage_workers = 1;
    return s;
  }

  static usage_recorder_settings hourly() {
    usage_recorder_settings s;
    s.flush_interval = 1h;
    return s;
  }
};

struct kept_batches {
  std::mutex mtx;
  std::vector<usage_batch> batches;
  std::vector<flush_done> dones;
};

// Built with append: GCC 12 warns falsely (-Wrestrict) on "a" + s.
std::string hash(const char* prefix, int i) {
  std::string s = prefix;
  s.append(std::to_string(i));
  return s;
}

// A fresh SQLite file, removed afterwards.
struct temp_db {
  std::filesystem::path path;
  std::string url;
  temp_db() {
    auto name = std::string{"mailassay-usage-"};
    name.append(std::to_string(::getpid())).append(".db");
    path = std::filesystem::temp_directory_path() / name;
    remove_files();
    url = "sqlite://" + path.string();
  }
  ~temp_db() { remove_files(); }
  void remove_files() {
    std::error_code ec;
    for (auto suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(path.string() + suffix, ec);
  }
};

core::account::api_key make_key(const std::string& id) {
  core::account::api_key k;
  k.id = id;
  k.organization_id = "o1";
  k.name = "key " + id;
  k.key_hash = "hash-" + id;
  k.prefix = "svc_live_abc\u2026";
  k.created_at = 2000;
  k.updated_at = 2000;
  return k;
}

} // namespace

TEST_SUITE("actors.usage_recorder") {
  TEST_CASE("flush_and_stop writes everything recorded before it") {
    caf::actor_system_config cfg;
    caf::actor_system sys{real_config(cfg)};
    auto kept = std::make_shared<kept_batches>();
    usage_recorder_settings s;
    s.flush_interval = 1h; // only flush_and_stop writes
    s.stop_timeout = 5s;
    usage_recorder rec{sys,
                       [kept](usage_batch b, flush_done done) {
                         std::lock_guard<std::mutex> guard{kept->mtx};
                         kept->batches.push_back(std::move(b));
                         done(true);
                       },
                       s};
    for (int i = 0; i < 10; ++i)
      rec.record("k1", "o1", nov21 + i, true, 1, hash("a", i));
    CHECK(rec.flush_and_stop());
    std::lock_guard<std::mutex> guard{kept->mtx};
    REQUIRE(kept->batches.size() == 1);
    REQUIRE(kept->batches[0].size() == 1);
    CHECK(kept->batches[0][0].requests == 10);
    CHECK(kept->batches[0][0].address_hashes.size() == 10);
    CHECK(rec.gauges().flushes == 1);
  }

  TEST_CASE("flush_and_stop gives up after stop_timeout") {
    auto kept = std::make_shared<kept_batches>();
    {
      caf::actor_system_config cfg;
      caf::actor_system sys{real_config(cfg)};
      usage_recorder_settings s;
      s.stop_timeout = 200ms;
      usage_recorder rec{sys,
                         [kept](usage_batch b, flush_done done) {
                           std::lock_guard<std::mutex> guard{kept->mtx};
                           kept->batches.push_back(std::move(b));
                           kept->dones.push_back(std::move(done)); // hangs
                         },
                         s};
      rec.record("k1", "o1", nov21, true, 1, "a");
      auto start = std::chrono::steady_clock::now();
      CHECK_FALSE(rec.flush_and_stop());
      auto waited = std::chrono::steady_clock::now() - start;
      CHECK(waited >= 200ms);
      CHECK(waited < 5s);
      std::lock_guard<std::mutex> guard{kept->mtx};
      kept->dones.clear(); // reports to a stopped recorder: ignored
    }
    CHECK(kept->batches.size() == 1);
  }

  TEST_CASE("usage flushed into SQLite reads back as the known stats") {
    temp_db file;
    auto opened = storage::open_store(file.url);
    REQUIRE(opened.has_value());
    auto& db = **opened;
    core::account::organization org{"o1", "Org o1", 1000};
    core::account::user owner{"u1", "owner@example.com", "Owner",
                              "$argon2id$hash-u1", 1000};
    REQUIRE(db.create_organization(org, owner, 0, 1000).has_value());
    REQUIRE(db.insert_api_key(make_key("k1")).has_value());
    REQUIRE(db.insert_api_key(make_key("k2")).has_value());

    {
      recorder_on_storage w{file.url};
      auto& rec = w.rec;
      // 10 validations, 7 valid and 3 invalid (all answered 200, one credit
      // each), 3 of them the day before; then a 402 (not 200, no credit)
      // for an address already seen.
      for (int i = 0; i < 3; ++i)
        rec.record("k1", "o1", nov20 + 3600 + i, true, 1, hash("valid-", i));
      for (int i = 3; i < 7; ++i)
        rec.record("k1", "o1", nov21 + 3600 + i, true, 1, hash("valid-", i));
      for (int i = 0; i < 3; ++i)
        rec.record("k1", "o1", nov21 + 7200 + i, true, 1, hash("invalid-", i));
      rec.record("k1", "o1", nov21 + 9000, false, 0, "valid-0");
      // A key deleted before the flush: its usage is dropped, the rest of
      // the batch is still written.
      rec.record("k2", "o1", nov21, true, 1, "gone");
      REQUIRE(db.delete_api_key("o1", "k2").has_value());
      CHECK(rec.flush_and_stop());
      w.pool.stop();
    }

    auto from = core::usage::window_start("2026-11-21", 30);
    REQUIRE(from.has_value());
    auto days = db.usage_between("k1", *from, "2026-11-21");
    REQUIRE(days.has_value());
    REQUIRE(days->size() == 2);
    auto distinct = db.distinct_addresses("k1", *from, "2026-11-21");
    REQUIRE(distinct.has_value());
    CHECK(*distinct == 10);

    std::vector<core::usage::day_counts> stored;
    for (const auto& d : *days)
      stored.push_back({d.day, d.requests, d.successful, d.credits});
    auto st = core::usage::compute(stored, *distinct, "2026-11-21", 30);
    REQUIRE(st.has_value());
    CHECK(st->total_requests == 11);
    CHECK(st->success_rate == doctest::Approx(10.0 / 11.0));
    CHECK(st->credits_consumed == 10);
    CHECK(st->top_emails == 10);
    REQUIRE(st->requests_by_day.size() == 30);
    const auto& by_day = st->requests_by_day;
    CHECK(by_day[27].requests == 0);
    CHECK(by_day[28].day == "2026-11-20");
    CHECK(by_day[28].requests == 3);
    CHECK(by_day[28].successful == 3);
    CHECK(by_day[28].credits == 3);
    CHECK(by_day[29].day == "2026-11-21");
    CHECK(by_day[29].requests == 8);
    CHECK(by_day[29].successful == 7);
    CHECK(by_day[29].credits == 7);
    CHECK(db.usage_between("k2", *from, "2026-11-21")->empty());
  }

  TEST_CASE("a database that cannot be opened fails the flush") {
    // A path under a regular file cannot be created.
    temp_db file;
    {
      std::FILE* f = std::fopen(file.path.c_str(), "w");
      std::fclose(f);
    }
    recorder_on_storage w{"sqlite://" + file.path.string() + "/x.db"};
    w.rec.record("k1", "o1", nov21, true, 1, "a");
    CHECK_FALSE(w.rec.flush_and_stop());
    CHECK(w.rec.gauges().failed_flushes == 1);
    w.pool.stop();
  }
}
