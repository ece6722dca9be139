#include "actors/webhooks/dispatcher.hpp"

#include "actors/blocking_ask.hpp"
#include "actors/storage_call.hpp"
#include "core/webhooks/fair_share.hpp"
#include "core/webhooks/retry.hpp"
#include "core/webhooks/signature.hpp"
#include "core/webhooks/target_url.hpp"
#include "log/log.hpp"
#include "security/secret_box.hpp"
#include "security/webhook_signing.hpp"

#include <caf/all.hpp>

#include <map>
#include <random>
#include <vector>

namespace mailassay::actors::webhooks {

namespace {

namespace wh = core::webhooks;

/// A claimed delivery made ready to send, or to settle without sending.
struct prepared {
  wh::delivery d;
  std::string host; ///< For logs (never the path: it may be a token).
  std::optional<wh::target_url> url;
  std::string body;
  std::vector<std::string> secrets; ///< Current first; the previous one
                                    ///< while its grace lasts.
  std::string error;    ///< Could not be prepared: a failed attempt.
  std::string detail;   ///< Why an attempt failed, for the log only.
  bool expired = false; ///< Past its window: given up, not sent.
};

/// An attempt's outcome, back at the dispatcher.
struct attempt_done {
  std::shared_ptr<prepared> p;
  std::int64_t started_ms = 0;
  net::http_result r;
};

using wh_tick_atom = caf::atom_constant<caf::atom("whk_tick")>;
using wh_wake_atom = caf::atom_constant<caf::atom("whk_wake")>;
using wh_stop_atom = caf::atom_constant<caf::atom("whk_stop")>;

} // namespace
} // namespace mailassay::actors::webhooks

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::webhooks::attempt_done)

namespace mailassay::actors::webhooks {

namespace {

wh::retry_schedule schedule_of(const config::webhooks_settings& cfg) {
  return {cfg.retry_first_ms, cfg.retry_max_ms,
          cfg.retry_window_seconds * 1000};
}

// A lease outlives any attempt: after three time-outs its holder is taken
// for dead and the delivery is sent again by whoever claims it.
std::int64_t lease_ms(const config::webhooks_settings& cfg) {
  return 3 * cfg.timeout_ms;
}

// On the storage worker: what sending `c` needs.
prepared prepare(storage::store& db, const dispatcher_env& env,
                 const std::string& key, const storage::claimed_delivery& c,
                 std::int64_t now_ms) {
  prepared p;
  p.d = c.delivery;
  if (wh::expired(schedule_of(env.cfg), p.d.created_ms, now_ms)) {
    p.expired = true;
    return p;
  }
  auto url = wh::parse_target_url(c.endpoint.url);
  if (!url) {
    p.error = "the stored URL is no longer valid";
    return p;
  }
  p.host = url->host;
  p.url = std::move(*url);
  auto secret =
      security::open_sealed(key, c.endpoint.sealed_secret, c.endpoint.id);
  if (!secret) {
    p.error = "cannot open the signing secret (webhooks.secret_key differs "
              "from the key it was sealed with)";
    return p;
  }
  p.secrets.push_back(std::move(*secret));
  if (!c.endpoint.sealed_previous_secret.empty() &&
      c.endpoint.previous_secret_expires_at * 1000 > now_ms)
    if (auto previous = security::open_sealed(
            key, c.endpoint.sealed_previous_secret, c.endpoint.id))
      p.secrets.push_back(std::move(*previous));
  auto body = env.render(db, p.d);
  if (!body) {
    p.error = "cannot render the event: " + body.error_value().message;
    return p;
  }
  p.body = std::move(*body);
  return p;
}

// What a tenant reads of a failed attempt (docs/webhooks.md, "Delivery
// log"): a class, never the addresses the resolver returned or other
// detail of the service's network; the log keeps the detail.
std::string error_class(net::http_failure f) {
  switch (f) {
    case net::http_failure::resolve: return "dns_failed";
    case net::http_failure::blocked: return "refused_address";
    case net::http_failure::connect: return "connect_failed";
    case net::http_failure::tls: return "tls_failed";
    case net::http_failure::timeout: return "timeout";
    case net::http_failure::protocol: return "bad_response";
    case net::http_failure::none:
    case net::http_failure::bad_request:
    case net::http_failure::shutdown: break;
  }
  return "internal_error";
}

struct dispatcher_state {
  std::shared_ptr<dispatcher_env> env;
  std::shared_ptr<dispatcher_gauges> gauges;
  std::string key; ///< The server key's 32 bytes.
  int in_flight = 0;
  /// Attempts running per organization: the fair share's input.
  std::map<std::string, std::int64_t> in_flight_by_org;
  bool claiming = false;
  bool stopping = false;
  std::int64_t next_prune_ms = 0;
  std::mt19937_64 rng{std::random_device{}()};
  static inline const char* name = "webhook_dispatcher";
};

using dispatcher_actor = caf::stateful_actor<dispatcher_state>;

void claim(dispatcher_actor* self);

// Writes how a delivery went, then looks for more work.
void record(dispatcher_actor* self, std::shared_ptr<prepared> p,
            std::optional<wh::attempt> a, storage::delivery_outcome outcome) {
  auto& st = self->state;
  auto id = p->d.id;
  auto owner = st.env->owner;
  storage_call(
      self, *st.env->storage,
      [id, owner, a, outcome](storage::store& db) {
        return db.record_webhook_attempt(id, owner, a, outcome);
      },
      [self, p, a, outcome](core::expected<bool>& r) {
        auto& st = self->state;
        if (!r || !*r) {
          log::event(log::level::warn, "webhook_record_failed",
                     {{"delivery_id", p->d.id},
                      {"error", r ? std::string{"lease lost"}
                                  : r.error_value().message}});
        } else {
          if (a)
            ++st.gauges->attempts;
          if (outcome.status == wh::delivery_status::delivered)
            ++st.gauges->delivered;
          if (outcome.status == wh::delivery_status::failed)
            ++st.gauges->given_up;
          auto level = outcome.status == wh::delivery_status::delivered
                           ? log::level::info
                           : log::level::warn;
          log::event(level, "webhook_attempt",
                     {{"delivery_id", p->d.id},
                      {"webhook_id", p->d.webhook_id},
                      {"event", std::string{wh::to_string(p->d.event)}},
                      {"host", p->host},
                      {"status", std::string{wh::to_string(outcome.status)}},
                      {"code", std::to_string(a ? a->status_code : 0)},
                      {"error", a ? a->error : p->error},
                      {"detail", p->detail}});
        }
        claim(self);
      });
}

// Decides what an attempt (or its absence) means for the delivery.
void settle(dispatcher_actor* self, std::shared_ptr<prepared> p,
            std::int64_t started_ms, const net::http_result& r) {
  auto& st = self->state;
  auto now = st.env->now_ms();
  wh::attempt a;
  a.at_ms = started_ms;
  a.duration_ms = r.elapsed.count();
  if (!p->error.empty()) {
    a.error = "internal_error";
    p->detail = p->error;
  } else if (r.failure != net::http_failure::none) {
    a.error = error_class(r.failure);
    p->detail = std::string{net::to_string(r.failure)} + ": " + r.detail;
  } else {
    a.status_code = r.status_code;
  }
  storage::delivery_outcome outcome;
  if (a.error.empty() && wh::accepted(a.status_code)) {
    outcome.status = wh::delivery_status::delivered;
    outcome.delivered_ms = now;
  } else {
    std::uniform_real_distribution<double> spread{0.0, 1.0};
    auto next = wh::next_attempt_ms(schedule_of(st.env->cfg), p->d.attempts + 1,
                                    p->d.created_ms, now, spread(st.rng));
    outcome.status =
        next ? wh::delivery_status::pending : wh::delivery_status::failed;
    outcome.next_attempt_ms = next.value_or(0);
  }
  record(self, std::move(p), a, outcome);
}

void send(dispatcher_actor* self, std::shared_ptr<prepared> p) {
  auto& st = self->state;
  auto started = st.env->now_ms();
  auto t = started / 1000;
  std::vector<std::string> sigs;
  for (const auto& s : p->secrets)
    sigs.push_back(security::webhook_signature(s, t, p->body));
  net::http_post post;
  post.url = *p->url;
  post.fields = {
      {"Content-Type", "application/json"},
      {"User-Agent", "mailassay-webhooks/2"},
      {"Mailassay-Event", std::string{wh::to_string(p->d.event)}},
      {"Mailassay-Delivery", p->d.id},
      {"Mailassay-Signature", wh::signature_header(t, sigs)},
  };
  post.body = p->body;
  post.timeout = std::chrono::milliseconds(st.env->cfg.timeout_ms);
  ++st.in_flight;
  ++st.in_flight_by_org[p->d.organization_id];
  ++st.gauges->in_flight;
  auto me = caf::actor_cast<caf::actor>(self);
  st.env->client->post(std::move(post), [me, p, started](net::http_result r) {
    caf::anon_send(me, attempt_done{p, started, std::move(r)});
  });
}

void claim(dispatcher_actor* self) {
  auto& st = self->state;
  auto room = st.env->cfg.concurrency - st.in_flight;
  if (st.claiming || st.stopping || room <= 0)
    return;
  st.claiming = true;
  auto env = st.env;
  auto key = st.key;
  auto now = env->now_ms();
  auto in_flight = st.in_flight_by_org;
  storage_call(
      self, *env->storage,
      [env, key, in_flight,
       now](storage::store& db) -> core::expected<std::vector<prepared>> {
        // Which organizations wait, then how many of each this claim may
        // take: an organization at its share waits for its own attempts.
        auto waiting = db.due_webhook_organizations(now, 1000);
        if (!waiting)
          return std::move(waiting).error_value();
        wh::slot_limits limits{env->cfg.concurrency,
                               env->cfg.organization_concurrency};
        std::vector<prepared> out;
        for (const auto& a : wh::allot(limits, in_flight, *waiting)) {
          auto claimed = db.claim_organization_webhook_deliveries(
              env->owner, a.organization_id, a.slots, lease_ms(env->cfg), now);
          if (!claimed)
            return std::move(claimed).error_value();
          for (const auto& c : *claimed)
            out.push_back(prepare(db, *env, key, c, now));
        }
        return out;
      },
      [self](core::expected<std::vector<prepared>>& r) {
        auto& st = self->state;
        st.claiming = false;
        if (!r) {
          log::event(log::level::warn, "webhook_claim_failed",
                     {{"error", r.error_value().message}});
          return;
        }
        if (st.stopping)
          return; // the leases are handed back by stop
        for (auto& item : *r) {
          auto p = std::make_shared<prepared>(std::move(item));
          if (p->expired)
            record(self, p, std::nullopt, {wh::delivery_status::failed, 0, 0});
          else if (!p->error.empty())
            settle(self, p, st.env->now_ms(), {});
          else
            send(self, p);
        }
        if (!r->empty())
          claim(self); // there may be more
      });
}

// Deletes finished deliveries older than the retention, once an hour.
void maybe_prune(dispatcher_actor* self) {
  auto& st = self->state;
  auto now = st.env->now_ms();
  if (now < st.next_prune_ms)
    return;
  st.next_prune_ms = now + 3600 * 1000;
  auto before = now - st.env->cfg.retention_days * 86400 * 1000;
  storage_call(
      self, *st.env->storage,
      [before](storage::store& db) {
        return db.prune_webhook_deliveries(before);
      },
      [](core::expected<std::int64_t>& r) {
        if (r && *r > 0)
          log::event(log::level::info, "webhook_deliveries_pruned",
                     {{"count", std::to_string(*r)}});
      });
}

caf::behavior dispatcher_fn(dispatcher_actor* self,
                            std::shared_ptr<dispatcher_env> env,
                            std::shared_ptr<dispatcher_gauges> gauges) {
  auto& st = self->state;
  st.env = std::move(env);
  st.gauges = std::move(gauges);
  st.key = security::secret_box_key_from_hex(st.env->cfg.secret_key)
               .value_or(std::string{});
  self->send(self, wh_tick_atom::value);
  return {
      [self](in_actor& f) { f.run(); },
      [self](wh_tick_atom) {
        auto& st = self->state;
        if (st.stopping)
          return;
        self->delayed_send(self, std::chrono::milliseconds(st.env->cfg.poll_ms),
                           wh_tick_atom::value);
        maybe_prune(self);
        claim(self);
      },
      [self](wh_wake_atom) { claim(self); },
      [self](attempt_done& done) {
        auto& st = self->state;
        --st.in_flight;
        auto org = st.in_flight_by_org.find(done.p->d.organization_id);
        if (org != st.in_flight_by_org.end() && --org->second <= 0)
          st.in_flight_by_org.erase(org);
        --st.gauges->in_flight;
        if (st.stopping)
          return; // its lease was handed back
        settle(self, std::move(done.p), done.started_ms, done.r);
      },
      [self](wh_stop_atom) -> caf::result<bool> {
        auto& st = self->state;
        st.stopping = true;
        auto rp = self->make_response_promise<bool>();
        auto owner = st.env->owner;
        storage_call(
            self, *st.env->storage,
            [owner](storage::store& db) {
              return db.release_webhook_leases(owner);
            },
            [rp](core::expected<core::unit>&) mutable { rp.deliver(true); });
        return rp;
      },
  };
}

} // namespace

dispatcher::dispatcher(caf::actor_system& sys, dispatcher_env env)
    : sys_(sys), client_(env.client),
      gauges_(std::make_shared<dispatcher_gauges>()) {
  actor_ = sys.spawn(dispatcher_fn,
                     std::make_shared<dispatcher_env>(std::move(env)), gauges_);
}

dispatcher::~dispatcher() {
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

void dispatcher::wake() {
  caf::anon_send(actor_, wh_wake_atom::value);
}

void dispatcher::stop(std::chrono::milliseconds timeout) {
  blocking_ask(sys_, actor_, timeout, log::level::warn, "webhook_stop_timeout",
               wh_stop_atom::value);
  // Calls still in flight end now; their answers are ignored.
  if (client_)
    client_->shutdown();
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

} // namespace mailassay::actors::webhooks
