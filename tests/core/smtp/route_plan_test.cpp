// The plan of one mail route, driven by hand: callers arrive, sessions
// report what they heard, time is passed in.
#include "core/smtp/route_plan.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using namespace mailassay::core::smtp;
using mailassay::core::limits::millis;
using kind = session_order::kind;

namespace {

const millis t0{100000};

// "u<i>@d.test", built with append (GCC 12 warns falsely on "u" + s).
std::string user(std::uint64_t i) {
  std::string s = "u";
  s.append(std::to_string(i)).append("@d.test");
  return s;
}

std::vector<probe_target> targets(int n) {
  std::vector<probe_target> out;
  for (int i = 1; i <= n; ++i)
    out.push_back(
        {"mx" + std::to_string(i) + ".d.test", "192.0.2." + std::to_string(i)});
  return out;
}

route_settings settings() {
  route_settings s;
  s.retry_delays = {millis{300}, millis{600}};
  s.min_step = millis{200};
  s.backlog_per_session = 2;
  return s;
}

route_waiter waiter(std::uint64_t id, millis deadline = t0 + millis{5000},
                    bool retry = true, bool batch = false) {
  return {id, deadline, retry, batch};
}

address_result heard(std::string address, rcpt_verdict v, int code) {
  address_result r;
  r.address = std::move(address);
  r.rcpt.verdict = v;
  r.rcpt.code = code;
  return r;
}

// What a session reported so far: its addresses' results and RCPT count.
struct so_far {
  session_result r;
  so_far& add(std::string address, rcpt_verdict v, int code) {
    r.addresses.push_back(heard(std::move(address), v, code));
    r.rcpt_sent += code != 0 ? 1 : 0;
    return *this;
  }
};

session_report ended(session_result r,
                     session_failure f = session_failure::none) {
  session_report rep;
  rep.result = std::move(r);
  rep.result.failure = f;
  return rep;
}

session_report refused() {
  session_report rep;
  rep.transport = connect_failure::refused;
  return rep;
}

// Opens the session the plan wants as `id`; fails the test when none.
session_wish open(route_plan& p, std::uint64_t id, millis now = t0) {
  auto w = p.want_session(now);
  REQUIRE(w.has_value());
  p.opened(id, *w, now);
  return *w;
}

// The order for session `id` in `s`, if any.
const session_order* order_for(const route_step& s, std::uint64_t id) {
  for (const auto& o : s.orders)
    if (o.session == id)
      return &o;
  return nullptr;
}

const route_answer* answer_for(const route_step& s, std::uint64_t waiter) {
  for (const auto& a : s.answers)
    if (a.waiter == waiter)
      return &a;
  return nullptr;
}

} // namespace

TEST_SUITE("core.smtp.route_plan") {
  TEST_CASE("one caller: a session opens, asks, answers, and quits") {
    route_plan p{targets(1), 0, settings()};
    p.add("ann@d.test", waiter(1), t0);
    auto w = open(p, 10);
    CHECK(w.target == 0);
    // Connecting: nothing to order yet, no second session either.
    CHECK(p.step(t0).orders.empty());
    CHECK_FALSE(p.want_session(t0).has_value());
    p.on_idle(10, {}, t0);
    auto s = p.step(t0);
    auto* give = order_for(s, 10);
    REQUIRE(give);
    CHECK(give->what == kind::give);
    CHECK(give->address == "ann@d.test");
    CHECK(give->catch_all_probe);
    so_far r;
    r.add("ann@d.test", rcpt_verdict::accepted, 250);
    r.r.catch_all = false;
    r.r.rcpt_sent = 2;
    p.on_idle(10, r.r, t0 + millis{5});
    s = p.step(t0 + millis{5});
    auto* a = answer_for(s, 1);
    REQUIRE(a);
    CHECK(a->outcome.rcpt.verdict == rcpt_verdict::accepted);
    CHECK(a->outcome.answered);
    CHECK(a->outcome.attempts == 1);
    CHECK(a->outcome.host == "mx1.d.test");
    CHECK(a->outcome.catch_all == false);
    CHECK(a->outcome.source == answer_source::probe);
    CHECK(s.learnt_catch_all == false);
    REQUIRE(s.settled.size() == 1);
    // Nothing left: the idle session quits (no linger).
    auto* quit = order_for(s, 10);
    REQUIRE(quit);
    CHECK(quit->what == kind::finish);
    CHECK_FALSE(p.idle());
    p.on_closed(10, ended(r.r), t0 + millis{6});
    CHECK(p.idle());
  }

  TEST_CASE("concurrent callers share a session: each address in turn") {
    route_plan p{targets(1), 0, settings()};
    p.add("a@d.test", waiter(1), t0);
    p.add("b@d.test", waiter(2), t0);
    open(p, 10);
    // Two addresses for one connecting session: no second one.
    CHECK_FALSE(p.want_session(t0).has_value());
    p.on_idle(10, {}, t0);
    auto s = p.step(t0);
    REQUIRE(order_for(s, 10));
    CHECK(order_for(s, 10)->address == "a@d.test");
    so_far r;
    r.add("a@d.test", rcpt_verdict::accepted, 250);
    r.r.catch_all = false;
    p.on_idle(10, r.r, t0);
    s = p.step(t0);
    CHECK(answer_for(s, 1));
    REQUIRE(order_for(s, 10));
    CHECK(order_for(s, 10)->what == kind::give);
    CHECK(order_for(s, 10)->address == "b@d.test");
    // The verdict is known: no probe with b.
    CHECK_FALSE(order_for(s, 10)->catch_all_probe);
    r.add("b@d.test", rcpt_verdict::no_such_user, 550);
    p.on_idle(10, r.r, t0);
    s = p.step(t0);
    REQUIRE(answer_for(s, 2));
    CHECK(answer_for(s, 2)->outcome.rcpt.verdict == rcpt_verdict::no_such_user);
    CHECK(order_for(s, 10)->what == kind::finish);
  }

  TEST_CASE("a driver may report only the answers it has not sent yet") {
    route_plan p{targets(1), 0, settings(), false};
    p.add("a@d.test", waiter(1), t0);
    p.add("b@d.test", waiter(2), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    p.step(t0);
    so_far first;
    first.add("a@d.test", rcpt_verdict::accepted, 250);
    p.on_idle(10, first.r, t0, 0);
    auto s = p.step(t0);
    REQUIRE(answer_for(s, 1));
    CHECK(order_for(s, 10)->address == "b@d.test");
    // Only b's answer, the second address given.
    so_far second;
    second.add("b@d.test", rcpt_verdict::no_such_user, 550);
    second.r.rcpt_sent = 2;
    p.on_idle(10, second.r, t0, 1);
    s = p.step(t0);
    REQUIRE(answer_for(s, 2));
    CHECK(answer_for(s, 2)->outcome.rcpt.verdict == rcpt_verdict::no_such_user);
    // The final report holds everything; nothing is applied twice.
    so_far all;
    all.add("a@d.test", rcpt_verdict::accepted, 250);
    all.add("b@d.test", rcpt_verdict::no_such_user, 550);
    p.on_closed(10, ended(all.r), t0);
    CHECK(p.step(t0).answers.empty());
    CHECK(p.idle());
  }

  TEST_CASE("identical addresses in flight are asked once; the second caller "
            "joins") {
    route_plan p{targets(1), 0, settings(), false};
    p.add("a@d.test", waiter(1), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    auto s = p.step(t0);
    REQUIRE(order_for(s, 10));
    // Asked already: the second caller joins the flight.
    p.add("a@d.test", waiter(2), t0);
    CHECK_FALSE(p.want_session(t0).has_value());
    so_far r;
    r.add("a@d.test", rcpt_verdict::accepted, 250);
    p.on_idle(10, r.r, t0);
    s = p.step(t0);
    REQUIRE(answer_for(s, 1));
    REQUIRE(answer_for(s, 2));
    CHECK(answer_for(s, 1)->outcome.source == answer_source::probe);
    CHECK(answer_for(s, 2)->outcome.source == answer_source::joined);
    CHECK(answer_for(s, 2)->outcome.rcpt.verdict == rcpt_verdict::accepted);
    CHECK(answer_for(s, 2)->outcome.answered);
    CHECK(s.settled.size() == 1);
  }

  TEST_CASE("opens more sessions as the backlog outgrows the open ones") {
    route_plan p{targets(1), 0, settings(), false};
    for (std::uint64_t i = 1; i <= 6; ++i)
      p.add(user(i), waiter(i), t0);
    // 6 waiting: more than 2 per session for 1 and 2 sessions, not for 3.
    open(p, 10);
    open(p, 11);
    open(p, 12);
    CHECK_FALSE(p.want_session(t0).has_value());
    CHECK(p.counts().sessions == 3);
    // Ready sessions take addresses in arrival order.
    p.on_idle(10, {}, t0);
    p.on_idle(11, {}, t0);
    auto s = p.step(t0);
    CHECK(order_for(s, 10)->address == "u1@d.test");
    CHECK(order_for(s, 11)->address == "u2@d.test");
  }

  TEST_CASE("caps the RCPTs of a session; the rest goes to the next") {
    auto cfg = settings();
    cfg.max_rcpts_per_session = 2;
    route_plan p{targets(1), 0, cfg, false};
    for (std::uint64_t i = 1; i <= 3; ++i)
      p.add(user(i), waiter(i), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    so_far r;
    for (int i = 1; i <= 2; ++i) {
      auto s = p.step(t0);
      REQUIRE(order_for(s, 10));
      CHECK(order_for(s, 10)->what == kind::give);
      r.add(user(i), rcpt_verdict::accepted, 250);
      p.on_idle(10, r.r, t0);
    }
    auto s = p.step(t0);
    REQUIRE(order_for(s, 10));
    CHECK(order_for(s, 10)->what == kind::finish);
    // u3 needs another session.
    auto w = p.want_session(t0);
    REQUIRE(w.has_value());
  }

  TEST_CASE("a reloaded RCPT cap reaches a route planned before it, but "
            "never lifts a cap a server taught") {
    auto cfg = settings();
    cfg.max_rcpts_per_session = 20;
    route_plan p{targets(1), 0, cfg, false};
    CHECK(p.rcpt_cap() == 20);
    p.set_max_rcpts_per_session(5);
    CHECK(p.rcpt_cap() == 5);
    p.set_max_rcpts_per_session(30);
    CHECK(p.rcpt_cap() == 30);
    p.set_max_rcpts_per_session(0);
    CHECK(p.rcpt_cap() == 1);
  }

  TEST_CASE("a 452 mid-session moves the address to the next session and "
            "caps the route at what the server took") {
    auto cfg = settings();
    cfg.backlog_per_session = 10;
    route_plan p{targets(1), 0, cfg, false};
    for (std::uint64_t i = 1; i <= 4; ++i)
      p.add(user(i), waiter(i), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    so_far r;
    for (int i = 1; i <= 3; ++i) {
      auto s = p.step(t0);
      REQUIRE(order_for(s, 10));
      auto address = order_for(s, 10)->address;
      CHECK(address == user(i));
      if (i < 3) {
        r.add(address, rcpt_verdict::accepted, 250);
        p.on_idle(10, r.r, t0);
      } else {
        // The server refuses the third RCPT of the session and we QUIT.
        r.add(address, rcpt_verdict::too_many_recipients, 452);
        p.on_closed(10, ended(r.r), t0);
      }
    }
    CHECK(p.rcpt_cap() == 2);
    // A reload to a higher cap keeps what the server took.
    p.set_max_rcpts_per_session(50);
    CHECK(p.rcpt_cap() == 2);
    auto s = p.step(t0);
    CHECK(s.answers.empty()); // u1, u2 were answered before
    CHECK(p.counts().open == 2);
    // u3 and u4 go to the next session, two RCPTs at most.
    open(p, 11);
    p.on_idle(11, {}, t0);
    s = p.step(t0);
    CHECK(order_for(s, 11)->address == "u3@d.test");
  }

  TEST_CASE("a 452 to the first RCPT of a session is throttling: retried like "
            "greylisting") {
    route_plan p{targets(1), 0, settings(), false};
    p.add("a@d.test", waiter(1), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    p.step(t0);
    so_far r;
    r.add("a@d.test", rcpt_verdict::too_many_recipients, 452);
    p.on_closed(10, ended(r.r), t0);
    auto s = p.step(t0);
    CHECK(s.answers.empty());
    CHECK(p.counts().waiting == 1);
    CHECK(s.wake_at == t0 + millis{300});
  }

  TEST_CASE("greylisted, then accepted after the retry delay") {
    route_plan p{targets(1), 0, settings(), false};
    p.add("a@d.test", waiter(1), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    p.step(t0);
    so_far r;
    r.add("a@d.test", rcpt_verdict::greylisted_or_throttled, 450);
    p.on_idle(10, r.r, t0);
    auto s = p.step(t0);
    CHECK(s.answers.empty());
    // Waiting for its retry: the idle session quits meanwhile.
    REQUIRE(order_for(s, 10));
    CHECK(order_for(s, 10)->what == kind::finish);
    CHECK(s.wake_at == t0 + millis{300});
    p.on_closed(10, ended(r.r), t0);
    CHECK_FALSE(p.want_session(t0 + millis{299}).has_value());
    p.step(t0 + millis{300});
    open(p, 11, t0 + millis{300});
    p.on_idle(11, {}, t0 + millis{300});
    s = p.step(t0 + millis{300});
    REQUIRE(order_for(s, 11));
    so_far again;
    again.add("a@d.test", rcpt_verdict::accepted, 250);
    p.on_idle(11, again.r, t0 + millis{310});
    s = p.step(t0 + millis{310});
    auto* a = answer_for(s, 1);
    REQUIRE(a);
    CHECK(a->outcome.rcpt.verdict == rcpt_verdict::accepted);
    CHECK(a->outcome.deferrals == 1);
    CHECK(a->outcome.attempts == 2);
  }

  TEST_CASE("a caller that parks deferrals itself gets one at once; the "
            "others wait for the retry") {
    route_plan p{targets(1), 0, settings(), false};
    p.add("a@d.test", waiter(1), t0);
    p.add("a@d.test", waiter(2, t0 + millis{5000}, false, true), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    p.step(t0);
    so_far r;
    r.add("a@d.test", rcpt_verdict::greylisted_or_throttled, 450);
    p.on_idle(10, r.r, t0);
    auto s = p.step(t0);
    REQUIRE(answer_for(s, 2));
    CHECK(answer_for(s, 2)->outcome.greylisted());
    CHECK(answer_for(s, 2)->outcome.deferrals == 1);
    CHECK_FALSE(answer_for(s, 1));
    // A late batch caller joining the waiting entry is answered at once too.
    p.add("a@d.test", waiter(3, t0 + millis{5000}, false, true), t0);
    s = p.step(t0);
    REQUIRE(answer_for(s, 3));
    CHECK(answer_for(s, 3)->outcome.greylisted());
  }

  TEST_CASE("no time left for a retry: final, greylisted") {
    route_plan p{targets(1), 0, settings(), false};
    p.add("a@d.test", waiter(1, t0 + millis{350}), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    p.step(t0);
    so_far r;
    r.add("a@d.test", rcpt_verdict::greylisted_or_throttled, 450);
    p.on_idle(10, r.r, t0);
    auto s = p.step(t0);
    REQUIRE(answer_for(s, 1));
    CHECK(answer_for(s, 1)->outcome.greylisted());
    CHECK_FALSE(answer_for(s, 1)->outcome.timed_out);
  }

  TEST_CASE("each caller's deadline ends its own wait; a late answer is "
            "still settled") {
    route_plan p{targets(1), 0, settings(), false};
    p.add("a@d.test", waiter(1, t0 + millis{1000}), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    p.step(t0);
    p.add("a@d.test", waiter(2, t0 + millis{3000}), t0);
    auto s = p.step(t0 + millis{1000});
    REQUIRE(answer_for(s, 1));
    CHECK(answer_for(s, 1)->outcome.timed_out);
    CHECK(answer_for(s, 1)->outcome.rcpt.why_unasked == unasked_reason::budget);
    CHECK_FALSE(answer_for(s, 1)->outcome.answered);
    CHECK_FALSE(answer_for(s, 2));
    s = p.step(t0 + millis{3000});
    REQUIRE(answer_for(s, 2));
    CHECK(answer_for(s, 2)->outcome.timed_out);
    // Nobody waits, yet the reply that comes is kept for the cache.
    so_far r;
    r.add("a@d.test", rcpt_verdict::accepted, 250);
    p.on_idle(10, r.r, t0 + millis{4000});
    s = p.step(t0 + millis{4000});
    CHECK(s.answers.empty());
    REQUIRE(s.settled.size() == 1);
    CHECK(s.settled[0].rcpt.verdict == rcpt_verdict::accepted);
  }

  TEST_CASE("a target that fails moves the route to the next MX; none left "
            "ends the addresses") {
    route_plan p{targets(2), 0, settings(), false};
    p.add("a@d.test", waiter(1), t0);
    CHECK(open(p, 10).target == 0);
    p.on_closed(10, refused(), t0);
    CHECK(open(p, 11).target == 1);
    p.on_closed(11, refused(), t0);
    CHECK_FALSE(p.want_session(t0).has_value());
    auto s = p.step(t0);
    REQUIRE(answer_for(s, 1));
    CHECK(answer_for(s, 1)->outcome.rcpt.why_unasked ==
          unasked_reason::all_hosts_failed);
    CHECK_FALSE(answer_for(s, 1)->outcome.answered);
    CHECK(p.idle());
  }

  TEST_CASE("no target: unroutable when the policy refused every address") {
    route_plan blocked{{}, 2, settings()};
    blocked.add("a@d.test", waiter(1), t0);
    auto s = blocked.step(t0);
    REQUIRE(answer_for(s, 1));
    CHECK(answer_for(s, 1)->outcome.unroutable);
    CHECK(answer_for(s, 1)->outcome.rcpt.why_unasked ==
          unasked_reason::unroutable_mx);
    route_plan none{{}, 0, settings()};
    none.add("a@d.test", waiter(1), t0);
    s = none.step(t0);
    CHECK(answer_for(s, 1)->outcome.rcpt.why_unasked ==
          unasked_reason::no_mx_address);
  }

  TEST_CASE("a session that decided something before it broke keeps its "
            "target; the address in flight goes last") {
    route_plan p{targets(2), 0, settings(), false};
    p.add("a@d.test", waiter(1), t0);
    p.add("b@d.test", waiter(2), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    p.step(t0);
    so_far r;
    r.add("a@d.test", rcpt_verdict::accepted, 250);
    p.on_idle(10, r.r, t0);
    auto s = p.step(t0);
    CHECK(order_for(s, 10)->address == "b@d.test");
    r.add("b@d.test", rcpt_verdict::other_temporary, 0);
    p.on_closed(10, ended(r.r, session_failure::connection_closed), t0);
    // Same target again.
    CHECK(open(p, 11).target == 0);
    p.on_idle(11, {}, t0);
    s = p.step(t0);
    REQUIRE(order_for(s, 11));
    so_far again;
    again.add("b@d.test", rcpt_verdict::other_temporary, 0);
    p.on_closed(11, ended(again.r, session_failure::timeout), t0);
    // Broke two sessions: given up, timed out.
    s = p.step(t0);
    REQUIRE(answer_for(s, 2));
    CHECK(answer_for(s, 2)->outcome.timed_out);
    CHECK(answer_for(s, 2)->outcome.attempts == 2);
  }

  TEST_CASE("a failed TLS handshake is retried in clear on the same target") {
    route_plan p{targets(1), 0, settings(), false};
    p.add("a@d.test", waiter(1), t0);
    CHECK(open(p, 10).tls == tls_policy::opportunistic);
    p.on_closed(10, ended({}, session_failure::tls_failed), t0);
    auto w = open(p, 11);
    CHECK(w.target == 0);
    CHECK(w.tls == tls_policy::never);
  }

  TEST_CASE("one session carries the catch-all probe; an address accepted "
            "elsewhere waits for its verdict") {
    route_plan p{targets(1), 0, settings()};
    p.add("a@d.test", waiter(1), t0);
    p.add("b@d.test", waiter(2), t0);
    p.add("c@d.test", waiter(3), t0);
    open(p, 10);
    open(p, 11);
    p.on_idle(10, {}, t0);
    p.on_idle(11, {}, t0);
    auto s = p.step(t0);
    CHECK(order_for(s, 10)->catch_all_probe);
    CHECK_FALSE(order_for(s, 11)->catch_all_probe);
    // b is accepted in session 11 before the probe's verdict: parked.
    so_far r11;
    r11.add(order_for(s, 11)->address, rcpt_verdict::accepted, 250);
    p.on_idle(11, r11.r, t0);
    s = p.step(t0);
    CHECK(s.answers.empty());
    // The probe says catch-all: the parked answer carries it.
    so_far r10;
    r10.add("a@d.test", rcpt_verdict::accepted, 250);
    r10.r.catch_all = true;
    p.on_idle(10, r10.r, t0);
    s = p.step(t0);
    REQUIRE(answer_for(s, 1));
    REQUIRE(answer_for(s, 2));
    CHECK(answer_for(s, 2)->outcome.catch_all == true);
    CHECK(s.learnt_catch_all == true);
    // A mailbox refused as unknown later turns it false, for good.
    so_far more;
    more.add("c@d.test", rcpt_verdict::no_such_user, 550);
    more.r.catch_all = false;
    p.on_idle(11, more.r, t0);
    s = p.step(t0);
    CHECK(s.learnt_catch_all == false);
    CHECK(p.catch_all() == false);
  }

  TEST_CASE("a probe without a verdict releases the parked answers with null") {
    route_plan p{targets(1), 0, settings()};
    p.add("a@d.test", waiter(1), t0);
    p.add("b@d.test", waiter(2), t0);
    p.add("c@d.test", waiter(3), t0);
    open(p, 10);
    open(p, 11);
    p.on_idle(10, {}, t0);
    p.on_idle(11, {}, t0);
    auto s = p.step(t0);
    so_far r11;
    r11.add(order_for(s, 11)->address, rcpt_verdict::accepted, 250);
    p.on_idle(11, r11.r, t0);
    p.step(t0);
    // The probing session dies before any verdict.
    so_far r10;
    r10.add("a@d.test", rcpt_verdict::other_temporary, 0);
    p.on_closed(10, ended(r10.r, session_failure::connection_closed), t0);
    s = p.step(t0);
    REQUIRE(answer_for(s, 2));
    CHECK_FALSE(answer_for(s, 2)->outcome.catch_all.has_value());
  }

  TEST_CASE("real-time addresses are asked before batch ones") {
    route_plan p{targets(1), 0, settings(), false};
    p.add("batch@d.test", waiter(1, t0 + millis{5000}, false, true), t0);
    p.add("now@d.test", waiter(2), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    auto s = p.step(t0);
    CHECK(order_for(s, 10)->address == "now@d.test");
  }

  TEST_CASE("an idle session lingers for work, then quits; retired, at once") {
    auto cfg = settings();
    cfg.linger = millis{500};
    route_plan p{targets(1), 0, cfg, false};
    p.add("a@d.test", waiter(1), t0);
    open(p, 10);
    p.on_idle(10, {}, t0);
    p.step(t0);
    so_far r;
    r.add("a@d.test", rcpt_verdict::accepted, 250);
    p.on_idle(10, r.r, t0);
    auto s = p.step(t0);
    CHECK_FALSE(order_for(s, 10));
    CHECK(s.wake_at == t0 + millis{500});
    // Work arrives while it lingers: it takes it, no new session.
    p.add("b@d.test", waiter(2), t0 + millis{100});
    CHECK_FALSE(p.want_session(t0 + millis{100}).has_value());
    s = p.step(t0 + millis{100});
    REQUIRE(order_for(s, 10));
    CHECK(order_for(s, 10)->address == "b@d.test");
    r.add("b@d.test", rcpt_verdict::accepted, 250);
    p.on_idle(10, r.r, t0 + millis{110});
    CHECK_FALSE(order_for(p.step(t0 + millis{110}), 10));
    CHECK(order_for(p.step(t0 + millis{610}), 10)->what == kind::finish);
    // Retired: ends without waiting for its linger.
    route_plan q{targets(1), 0, cfg, false};
    q.add("a@d.test", waiter(1), t0);
    open(q, 20);
    q.on_idle(20, {}, t0);
    q.step(t0);
    so_far qr;
    qr.add("a@d.test", rcpt_verdict::accepted, 250);
    q.on_idle(20, qr.r, t0);
    CHECK_FALSE(order_for(q.step(t0), 20));
    CHECK(q.retire(20));
    CHECK(order_for(q.step(t0), 20)->what == kind::finish);
  }

  TEST_CASE("shares the time left among the targets still to try") {
    auto cfg = settings();
    cfg.min_step = millis{200};
    route_plan p{targets(3), 0, cfg, false};
    p.add("a@d.test", waiter(1, t0 + millis{3000}), t0);
    auto w = open(p, 10);
    CHECK(w.step_timeout == millis{1000});
    p.on_closed(10, refused(), t0 + millis{1000});
    w = open(p, 11, t0 + millis{1000});
    CHECK(w.step_timeout == millis{1000});
    // Less than the floor left: all of it.
    route_plan q{targets(1), 0, cfg, false};
    q.add("a@d.test", waiter(1, t0 + millis{150}), t0);
    CHECK(open(q, 10).step_timeout == millis{150});
  }

  TEST_CASE("an address that cannot go on the wire is answered at once") {
    route_plan p{targets(1), 0, settings()};
    p.add("evil@d.test>\r\nDATA", waiter(1), t0);
    auto s = p.step(t0);
    REQUIRE(answer_for(s, 1));
    CHECK(answer_for(s, 1)->outcome.rcpt.verdict ==
          rcpt_verdict::protocol_error);
    CHECK_FALSE(p.want_session(t0).has_value());
  }

  TEST_CASE("no session opens for callers about to give up") {
    route_plan p{targets(1), 0, settings()};
    // 99 ms left: below min_time_to_connect (100 ms).
    p.add(user(1), waiter(1, t0 + millis{99}), t0);
    CHECK_FALSE(p.want_session(t0).has_value());
    // A caller with time left: the session opens, for both.
    p.add(user(2), waiter(2, t0 + millis{5000}), t0);
    CHECK(p.want_session(t0).has_value());
    // With the minimum at 0, any time left will do.
    auto s = settings();
    s.min_time_to_connect = millis{0};
    route_plan q{targets(1), 0, s};
    q.add(user(1), waiter(1, t0 + millis{1}), t0);
    CHECK(q.want_session(t0).has_value());
  }
}
