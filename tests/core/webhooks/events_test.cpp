#include "core/webhooks/events.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core;
using namespace mailassay::core::webhooks;

TEST_SUITE("core.webhooks.events") {
  TEST_CASE("every event has a wire name that parses back") {
    for (auto e : {event_type::batch_completed, event_type::batch_failed,
                   event_type::batch_cancelled, event_type::credits_low,
                   event_type::key_revoked, event_type::ping})
      CHECK(parse_event_type(to_string(e)) == e);
    CHECK(to_string(event_type::credits_low) == "credits.low");
    CHECK_FALSE(parse_event_type("Batch.Completed"));
    CHECK_FALSE(parse_event_type("batch.*"));
    CHECK(subscribable_events().size() == 5);
  }

  TEST_CASE("a subscription lists known events once, in canonical order") {
    std::vector<std::string> names{"key.revoked", "batch.completed"};
    auto s = parse_subscription(names);
    REQUIRE(s);
    CHECK(*s == std::vector<event_type>{event_type::batch_completed,
                                        event_type::key_revoked});
    CHECK(join_events(*s) == "batch.completed,key.revoked");
    CHECK(split_events("batch.completed,key.revoked") == *s);
    CHECK(split_events("batch.completed,future.event") ==
          std::vector<event_type>{event_type::batch_completed});
    CHECK(split_events("").empty());
  }

  TEST_CASE("a subscription names every problem") {
    struct row {
      std::vector<std::string> names;
      std::vector<std::string> messages;
    };
    const row rows[] = {
        {{}, {"events must contain at least one event"}},
        {{"ping"},
         {"events has an unknown event \"ping\" (known: batch.completed, "
          "batch.failed, batch.cancelled, credits.low, key.revoked)"}},
        {{"batch.completed", "batch.completed"},
         {"events lists \"batch.completed\" more than once"}},
        {{"nope", "credits.low", "credits.low"},
         {"events has an unknown event \"nope\" (known: batch.completed, "
          "batch.failed, batch.cancelled, credits.low, key.revoked)",
          "events lists \"credits.low\" more than once"}},
    };
    for (const auto& r : rows) {
      auto s = parse_subscription(r.names);
      REQUIRE_FALSE(s);
      CHECK(s.error_value().code == errc::validation_failed);
      CHECK(s.error_value().details == r.messages);
    }
  }

  TEST_CASE("a job's end emits the event of its final status") {
    using batch::job_status;
    CHECK(batch_end_event(job_status::completed) ==
          event_type::batch_completed);
    CHECK(batch_end_event(job_status::failed) == event_type::batch_failed);
    CHECK(batch_end_event(job_status::cancelled) ==
          event_type::batch_cancelled);
    CHECK_FALSE(batch_end_event(job_status::queued));
    CHECK_FALSE(batch_end_event(job_status::processing));
  }

  TEST_CASE("credits.low fires on the debit that crosses the threshold") {
    struct row {
      std::int64_t before, after, threshold;
      bool fires;
    };
    const row rows[] = {
        {100, 99, 100, true},   // from the threshold to below it
        {101, 99, 100, true},   // across it
        {500, 0, 100, true},    // a batch reservation, far across
        {99, 98, 100, false},   // already below: fired before
        {101, 100, 100, false}, // reaching it is not falling below
        {5, 0, 0, false},       // 0 never fires
        {1, 0, 1, true},
    };
    for (const auto& r : rows)
      CHECK_MESSAGE(crossed_below(r.before, r.after, r.threshold) == r.fires,
                    r.before << " -> " << r.after << " / " << r.threshold);
  }

  TEST_CASE("owners and admins manage endpoints, members read them") {
    CHECK(may_manage(account::role::owner));
    CHECK(may_manage(account::role::admin));
    CHECK_FALSE(may_manage(account::role::member));
  }
}
