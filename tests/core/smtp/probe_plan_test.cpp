#include "core/smtp/probe_plan.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using namespace mailassay::core::smtp;
using mailassay::core::limits::millis;

namespace {

const millis t0{100000};

std::vector<probe_target> targets(int n) {
  std::vector<probe_target> out;
  for (int i = 1; i <= n; ++i)
    out.push_back(
        {"mx" + std::to_string(i) + ".d.test", "192.0.2." + std::to_string(i)});
  return out;
}

probe_settings settings() {
  probe_settings s;
  s.retry_delays = {millis{300}, millis{600}};
  s.min_step = millis{200};
  return s;
}

classification got(rcpt_verdict v, int code) {
  classification c;
  c.verdict = v;
  c.code = code;
  return c;
}

// A session report: per asked address its verdict and reply code.
session_report ran(const probe_step& step,
                   std::vector<std::pair<rcpt_verdict, int>> replies,
                   session_failure failure = session_failure::none,
                   std::optional<bool> catch_all = std::nullopt) {
  session_report r;
  r.result.host = "mx";
  r.result.failure = failure;
  r.result.catch_all = catch_all;
  for (std::size_t i = 0; i < step.addresses.size(); ++i) {
    address_result a;
    a.address = step.addresses[i];
    if (i < replies.size())
      a.rcpt = got(replies[i].first, replies[i].second);
    r.result.addresses.push_back(a);
    r.result.rcpt_sent += a.rcpt.code != 0 ? 1 : 0;
  }
  return r;
}

session_report no_connection(connect_failure why) {
  session_report r;
  r.transport = why;
  r.detail = std::string{to_string(why)};
  return r;
}

} // namespace

TEST_SUITE("core.smtp.probe_plan") {
  TEST_CASE("asks every address in one session on the first MX") {
    probe_plan p({"a@d.test", "b@d.test"}, targets(2), 0, settings(), t0,
                 t0 + millis{10000});
    auto s = p.next(t0);
    REQUIRE(s.kind == step_kind::session);
    CHECK(s.target == 0);
    CHECK(s.addresses == std::vector<std::string>{"a@d.test", "b@d.test"});
    CHECK(s.catch_all_probe);
    CHECK(s.tls == tls_policy::opportunistic);
    CHECK(s.step_timeout == millis{5000}); // budget shared by two MX
    p.on_session(
        ran(s,
            {{rcpt_verdict::accepted, 250}, {rcpt_verdict::no_such_user, 550}},
            session_failure::none, true),
        t0 + millis{40});
    CHECK(p.next(t0 + millis{40}).kind == step_kind::finished);
    REQUIRE(p.finished());
    const auto& o = p.outcomes();
    CHECK(o[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(o[0].host == "mx1.d.test");
    CHECK(o[0].attempts == 1);
    CHECK(o[0].catch_all == true);
    CHECK(o[1].rcpt.verdict == rcpt_verdict::no_such_user);
    CHECK(p.catch_all_learnt());
    REQUIRE(p.sessions().size() == 1);
    CHECK(p.sessions()[0].duration == millis{40});
    CHECK(p.failure().empty());
  }

  TEST_CASE("falls through to the next MX when a session decides nothing") {
    struct row {
      const char* name;
      session_report report;
      bool timed_out;
    };
    auto empty = [](session_failure f) {
      session_report r;
      r.result.failure = f;
      r.result.addresses.resize(1);
      return r;
    };
    const row rows[] = {
        {"refused", no_connection(connect_failure::refused), false},
        {"connect timeout", no_connection(connect_failure::timeout), true},
        {"unreachable", no_connection(connect_failure::unreachable), false},
        {"busy greeting", empty(session_failure::greeting_rejected), false},
        {"helo refused", empty(session_failure::helo_rejected), false},
        {"tls unavailable", empty(session_failure::tls_unavailable), false},
        {"garbage", empty(session_failure::protocol_error), false},
        {"tarpit", empty(session_failure::timeout), true},
        {"drop", empty(session_failure::connection_closed), false},
    };
    for (const auto& r : rows) {
      CAPTURE(r.name);
      probe_plan p({"a@d.test"}, targets(2), 0, settings(), t0,
                   t0 + millis{10000});
      auto s = p.next(t0);
      REQUIRE(s.kind == step_kind::session);
      p.on_session(r.report, t0 + millis{10});
      auto s2 = p.next(t0 + millis{10});
      REQUIRE(s2.kind == step_kind::session);
      CHECK(s2.target == 1);
      CHECK(s2.step_timeout == millis{9990}); // the last MX gets the rest
      p.on_session(r.report, t0 + millis{20});
      CHECK(p.next(t0 + millis{20}).kind == step_kind::finished);
      CHECK(p.failure() == "all_hosts_failed");
      const auto& o = p.outcomes()[0];
      CHECK(o.rcpt.verdict == rcpt_verdict::not_attempted);
      CHECK(o.timed_out == r.timed_out);
      CHECK_FALSE(o.unroutable);
      CHECK(p.sessions().size() == 2);
    }
  }

  TEST_CASE("every MX address refused by the policy is unroutable") {
    probe_plan p({"a@d.test"}, {}, 2, settings(), t0, t0 + millis{10000});
    CHECK(p.next(t0).kind == step_kind::finished);
    CHECK(p.failure() == "unroutable_mx");
    CHECK(p.outcomes()[0].unroutable);
    CHECK_FALSE(p.outcomes()[0].timed_out);
    CHECK(p.sessions().empty());
    probe_plan q({"a@d.test"}, {}, 0, settings(), t0, t0 + millis{10000});
    CHECK(q.next(t0).kind == step_kind::finished);
    CHECK(q.failure() == "no_mx_address");
    CHECK_FALSE(q.outcomes()[0].unroutable);
  }

  TEST_CASE("retries a greylisted address after the scheduled delay") {
    probe_plan p({"a@d.test"}, targets(1), 0, settings(), t0,
                 t0 + millis{10000});
    auto s = p.next(t0);
    p.on_session(ran(s, {{rcpt_verdict::greylisted_or_throttled, 450}}), t0);
    auto w = p.next(t0);
    REQUIRE(w.kind == step_kind::wait);
    CHECK(w.wake_at == t0 + millis{300});
    CHECK(p.next(t0 + millis{299}).kind == step_kind::wait);
    auto s2 = p.next(t0 + millis{300});
    REQUIRE(s2.kind == step_kind::session);
    CHECK(s2.target == 0);
    p.on_session(ran(s2, {{rcpt_verdict::accepted, 250}}), t0 + millis{310});
    CHECK(p.next(t0 + millis{310}).kind == step_kind::finished);
    const auto& o = p.outcomes()[0];
    CHECK(o.rcpt.verdict == rcpt_verdict::accepted);
    CHECK(o.attempts == 2);
    CHECK(o.deferrals == 1);
    CHECK_FALSE(o.greylisted());
  }

  TEST_CASE("stays greylisted when every retry is deferred") {
    probe_plan p({"a@d.test"}, targets(1), 0, settings(), t0,
                 t0 + millis{10000});
    auto now = t0;
    int sessions = 0;
    while (true) {
      auto s = p.next(now);
      if (s.kind == step_kind::finished)
        break;
      if (s.kind == step_kind::wait) {
        now = s.wake_at;
        continue;
      }
      ++sessions;
      p.on_session(ran(s, {{rcpt_verdict::greylisted_or_throttled, 450}}), now);
    }
    CHECK(sessions == 3); // first try + two retries
    CHECK(p.outcomes()[0].greylisted());
    CHECK(p.outcomes()[0].deferrals == 3);
    CHECK_FALSE(p.outcomes()[0].timed_out);
    CHECK(now == t0 + millis{900});
  }

  TEST_CASE("does not wait for a retry the budget cannot hold") {
    probe_plan p({"a@d.test"}, targets(1), 0, settings(), t0, t0 + millis{350});
    auto s = p.next(t0);
    p.on_session(ran(s, {{rcpt_verdict::greylisted_or_throttled, 450}}), t0);
    CHECK(p.next(t0).kind == step_kind::finished);
    CHECK(p.outcomes()[0].greylisted());
  }

  TEST_CASE("a 452 mid-session asks the rest one per session") {
    probe_plan p({"a@d.test", "b@d.test", "c@d.test"}, targets(1), 0,
                 settings(), t0, t0 + millis{10000});
    auto s = p.next(t0);
    REQUIRE(s.addresses.size() == 3);
    p.on_session(ran(s, {{rcpt_verdict::accepted, 250},
                         {rcpt_verdict::too_many_recipients, 452}}),
                 t0);
    auto s2 = p.next(t0);
    REQUIRE(s2.kind == step_kind::session);
    CHECK(s2.addresses == std::vector<std::string>{"b@d.test"});
    p.on_session(ran(s2, {{rcpt_verdict::no_such_user, 550}}), t0);
    auto s3 = p.next(t0);
    CHECK(s3.addresses == std::vector<std::string>{"c@d.test"});
    p.on_session(ran(s3, {{rcpt_verdict::accepted, 250}}), t0);
    CHECK(p.next(t0).kind == step_kind::finished);
    CHECK(p.outcomes()[1].rcpt.verdict == rcpt_verdict::no_such_user);
    CHECK(p.outcomes()[1].attempts == 2);
  }

  TEST_CASE("a 452 to the first RCPT is throttling: retried later") {
    probe_plan p({"a@d.test"}, targets(1), 0, settings(), t0,
                 t0 + millis{10000});
    auto s = p.next(t0);
    p.on_session(ran(s, {{rcpt_verdict::too_many_recipients, 452}}), t0);
    auto w = p.next(t0);
    CHECK(w.kind == step_kind::wait);
    CHECK(p.outcomes()[0].deferrals == 1);
  }

  TEST_CASE("retries in clear once after a failed opportunistic handshake") {
    probe_plan p({"a@d.test"}, targets(1), 0, settings(), t0,
                 t0 + millis{10000});
    auto s = p.next(t0);
    CHECK(s.tls == tls_policy::opportunistic);
    p.on_session(ran(s, {}, session_failure::tls_failed), t0);
    auto s2 = p.next(t0);
    REQUIRE(s2.kind == step_kind::session);
    CHECK(s2.target == 0);
    CHECK(s2.tls == tls_policy::never);
    auto strict = settings();
    strict.tls = tls_policy::required;
    probe_plan q({"a@d.test"}, targets(1), 0, strict, t0, t0 + millis{10000});
    auto r = q.next(t0);
    q.on_session(ran(r, {}, session_failure::tls_failed), t0);
    CHECK(q.next(t0).kind == step_kind::finished);
  }

  TEST_CASE("an address that breaks a session is asked last, then given "
            "up") {
    probe_plan p({"a@d.test", "drop@d.test", "b@d.test"}, targets(1), 0,
                 settings(), t0, t0 + millis{10000});
    auto s = p.next(t0);
    p.on_session(
        ran(s,
            {{rcpt_verdict::accepted, 250}, {rcpt_verdict::other_temporary, 0}},
            session_failure::connection_closed),
        t0);
    auto s2 = p.next(t0);
    REQUIRE(s2.kind == step_kind::session);
    CHECK(s2.target == 0);
    CHECK(s2.addresses == std::vector<std::string>{"b@d.test", "drop@d.test"});
    p.on_session(
        ran(s2,
            {{rcpt_verdict::accepted, 250}, {rcpt_verdict::other_temporary, 0}},
            session_failure::connection_closed),
        t0);
    CHECK(p.next(t0).kind == step_kind::finished);
    CHECK(p.outcomes()[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(p.outcomes()[1].rcpt.verdict == rcpt_verdict::other_temporary);
    CHECK(p.outcomes()[1].attempts == 2); // sent twice, never answered
    CHECK_FALSE(p.outcomes()[1].timed_out);
    CHECK(p.outcomes()[2].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(p.sessions().size() == 2);
  }

  TEST_CASE("an address whose RCPT times out twice is timed out") {
    probe_plan p({"a@d.test", "slow@d.test"}, targets(1), 0, settings(), t0,
                 t0 + millis{10000});
    auto s = p.next(t0);
    p.on_session(
        ran(s,
            {{rcpt_verdict::accepted, 250}, {rcpt_verdict::other_temporary, 0}},
            session_failure::timeout),
        t0);
    auto s2 = p.next(t0);
    REQUIRE(s2.addresses == std::vector<std::string>{"slow@d.test"});
    p.on_session(
        ran(s2, {{rcpt_verdict::other_temporary, 0}}, session_failure::timeout),
        t0);
    CHECK(p.next(t0).kind == step_kind::finished);
    CHECK(p.outcomes()[1].timed_out);
  }

  TEST_CASE("ends at the deadline with the undecided addresses timed out") {
    probe_plan p({"a@d.test"}, targets(1), 0, settings(), t0,
                 t0 + millis{1000});
    auto s = p.next(t0);
    CHECK(s.step_timeout == millis{1000});
    p.on_session(
        ran(s, {{rcpt_verdict::other_temporary, 0}}, session_failure::timeout),
        t0 + millis{1000});
    CHECK(p.next(t0 + millis{1000}).kind == step_kind::finished);
    CHECK(p.outcomes()[0].timed_out);
    CHECK(p.failure() == "budget");
  }

  TEST_CASE("never puts unsafe addresses on the wire and asks duplicates "
            "once") {
    probe_plan p({"a@d.test", "x\r\nRSET@d.test", "a@d.test", ""}, targets(1),
                 0, settings(), t0, t0 + millis{10000});
    auto s = p.next(t0);
    CHECK(s.addresses == std::vector<std::string>{"a@d.test"});
    p.on_session(ran(s, {{rcpt_verdict::accepted, 250}}), t0);
    CHECK(p.next(t0).kind == step_kind::finished);
    const auto& o = p.outcomes();
    CHECK(o[1].rcpt.verdict == rcpt_verdict::protocol_error);
    CHECK(o[2].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(o[2].address == "a@d.test");
    CHECK(o[3].rcpt.verdict == rcpt_verdict::protocol_error);
  }

  TEST_CASE("a cached catch-all verdict skips the probe") {
    probe_plan p({"a@d.test"}, targets(1), 0, settings(), t0,
                 t0 + millis{10000}, true);
    auto s = p.next(t0);
    CHECK_FALSE(s.catch_all_probe);
    p.on_session(ran(s, {{rcpt_verdict::accepted, 250}}), t0);
    CHECK(p.next(t0).kind == step_kind::finished);
    CHECK(p.outcomes()[0].catch_all == true);
    CHECK_FALSE(p.catch_all_learnt());
  }

  TEST_CASE("a mailbox refused as unknown makes a cached true false") {
    probe_plan p({"a@d.test", "b@d.test"}, targets(1), 0, settings(), t0,
                 t0 + millis{10000}, true);
    auto s = p.next(t0);
    p.on_session(
        ran(s,
            {{rcpt_verdict::accepted, 250}, {rcpt_verdict::no_such_user, 550}},
            session_failure::none, false),
        t0);
    CHECK(p.next(t0).kind == step_kind::finished);
    CHECK(p.catch_all() == false);
    CHECK(p.catch_all_learnt()); // so the cache entry becomes false too
    for (const auto& o : p.outcomes())
      CHECK(o.catch_all == false);
  }

  TEST_CASE("a later true never overwrites a learnt false") {
    auto st = settings();
    st.max_rcpts_per_session = 1;
    probe_plan p({"a@d.test", "b@d.test"}, targets(1), 0, st, t0,
                 t0 + millis{10000});
    auto s = p.next(t0);
    p.on_session(ran(s, {{rcpt_verdict::no_such_user, 550}},
                     session_failure::none, false),
                 t0);
    auto s2 = p.next(t0);
    REQUIRE(s2.kind == step_kind::session);
    CHECK_FALSE(s2.catch_all_probe);
    p.on_session(
        ran(s2, {{rcpt_verdict::accepted, 250}}, session_failure::none, true),
        t0);
    CHECK(p.next(t0).kind == step_kind::finished);
    CHECK(p.catch_all() == false);
  }

  TEST_CASE("asks no catch-all probe while the driver forbids it") {
    probe_plan p({"a@d.test"}, targets(1), 0, settings(), t0,
                 t0 + millis{10000});
    p.allow_catch_all_probe(false);
    auto s = p.next(t0);
    REQUIRE(s.kind == step_kind::session);
    CHECK_FALSE(s.catch_all_probe);
    p.on_session(ran(s, {{rcpt_verdict::greylisted_or_throttled, 450}}), t0);
    p.allow_catch_all_probe(true);
    auto w = p.next(t0);
    REQUIRE(w.kind == step_kind::wait);
    auto s2 = p.next(w.wake_at);
    REQUIRE(s2.kind == step_kind::session);
    CHECK(s2.catch_all_probe);
  }

  TEST_CASE("without a retry schedule a deferral is final at once") {
    auto st = settings();
    st.retry_delays.clear();
    probe_plan p({"a@d.test"}, targets(2), 0, st, t0, t0 + millis{10000});
    auto s = p.next(t0);
    p.on_session(ran(s, {{rcpt_verdict::greylisted_or_throttled, 450}}),
                 t0 + millis{5});
    CHECK(p.next(t0 + millis{5}).kind == step_kind::finished);
    const auto& o = p.outcomes()[0];
    CHECK(o.greylisted());
    CHECK(o.attempts == 1);
    CHECK(o.deferrals == 1);
    CHECK_FALSE(o.timed_out);
    CHECK(p.sessions().size() == 1); // not asked again, not on the next MX
  }

  TEST_CASE("splits long address lists into sessions") {
    auto st = settings();
    st.max_rcpts_per_session = 2;
    probe_plan p({"a@d.test", "b@d.test", "c@d.test"}, targets(1), 0, st, t0,
                 t0 + millis{10000});
    auto s = p.next(t0);
    CHECK(s.addresses.size() == 2);
    p.on_session(
        ran(s, {{rcpt_verdict::accepted, 250}, {rcpt_verdict::accepted, 250}},
            session_failure::none, false),
        t0);
    auto s2 = p.next(t0);
    CHECK(s2.addresses == std::vector<std::string>{"c@d.test"});
    CHECK_FALSE(s2.catch_all_probe);
  }

  TEST_CASE("keeps a slow server's replies within a generous step") {
    probe_plan p({"a@d.test"}, targets(3), 0, settings(), t0, t0 + millis{300});
    auto s = p.next(t0);
    CHECK(s.step_timeout == millis{200}); // floor, not 300/3
    auto st = settings();
    st.max_step = millis{1000};
    probe_plan q({"a@d.test"}, targets(1), 0, st, t0, t0 + millis{60000});
    CHECK(q.next(t0).step_timeout == millis{1000});
  }
}
