#include "actors/rate_limiter.hpp"

#include "core/limits/bucket_table.hpp"
#include "core/limits/multi_window.hpp"

#include <caf/all.hpp>

namespace mailassay::actors {

namespace {

using core::limits::bucket_table;
using core::limits::millis;
using core::limits::multi_window;
using core::limits::token_bucket;
using core::limits::window_spec;

struct limiter_tables {
  explicit limiter_tables(const rate_limiter_options& o)
      : ip(o.max_ip_buckets), keys(o.max_key_buckets),
        device(o.max_device_buckets), widget_ip(o.max_widget_ip_buckets) {}
  bucket_table<std::string> ip;
  bucket_table<std::string, multi_window> keys;
  bucket_table<std::string> device;
  bucket_table<std::string> widget_ip;
};

struct limiter_state {
  rate_limiter_options opts;
  std::unique_ptr<limiter_tables> tables;
  std::shared_ptr<limiter_gauges> gauges;
  // Caller time is the only truth for buckets; the actor clock only
  // measures how long ago the last check came, so the tick can sweep at
  // "last caller time + elapsed" when traffic has stopped.
  millis last_now{0};
  caf::actor_clock::time_point last_seen{};
  static inline const char* name = "rate_limiter";
};

// Up to 1 IP + 3 key windows + device + widget IP buckets per check.
struct bucket_list {
  token_bucket* buckets[8] = {};
  std::string_view scopes[8];
  std::size_t size = 0;

  void add(token_bucket* b, std::string_view scope) {
    buckets[size] = b;
    scopes[size] = scope;
    ++size;
  }
};

token_bucket& one_window(bucket_table<std::string>& table,
                         const std::string& id, window_spec spec, millis now) {
  auto& b =
      table.find_or_insert(id, now, [&] { return token_bucket(spec, now); });
  // A changed limit applies to this request (no-op when unchanged).
  b.reshape(spec, now);
  return b;
}

limit_decision evaluate(limiter_state& st, const limit_check& c) {
  auto& t = *st.tables;
  auto now = c.now;
  bucket_list list;
  if (c.ip) {
    auto limit = c.ip->per_minute.value_or(st.opts.ip_per_minute);
    if (limit > 0)
      list.add(&one_window(t.ip, c.ip->ip, {limit, core::limits::minute}, now),
               "ip");
  }
  if (c.key) {
    const auto& l = c.key->limits;
    auto specs = core::limits::key_windows(l.per_minute, l.per_hour, l.per_day);
    if (specs.empty()) {
      t.keys.erase(c.key->key_id);
    } else {
      auto& w = t.keys.find_or_insert(c.key->key_id, now,
                                      [&] { return multi_window(specs, now); });
      w.reshape(specs, now);
      for (auto& b : w.buckets())
        list.add(&b, "key");
    }
  }
  if (c.device && c.device->limit > 0)
    list.add(&one_window(t.device, c.device->id,
                         {c.device->limit, c.device->period}, now),
             "device");
  if (c.widget_ip && c.widget_ip->limit > 0)
    list.add(&one_window(t.widget_ip, c.widget_ip->id,
                         {c.widget_ip->limit, c.widget_ip->period}, now),
             "ip");
  auto r = core::limits::take_all({list.buckets, list.size}, now);
  limit_decision out;
  out.allowed = r.result.allowed;
  out.limit = r.result.limit;
  out.remaining = r.result.remaining;
  out.reset_seconds = r.result.reset_seconds;
  out.retry_after_seconds = r.result.retry_after_seconds;
  if (list.size > 0)
    out.reported = list.scopes[r.index];
  if (!out.allowed)
    out.refused_by = out.reported;
  return out;
}

void publish(limiter_state& st) {
  auto& t = *st.tables;
  auto& g = *st.gauges;
  auto rel = std::memory_order_relaxed;
  g.ip_buckets.store(static_cast<std::int64_t>(t.ip.size()), rel);
  g.key_buckets.store(static_cast<std::int64_t>(t.keys.size()), rel);
  g.device_buckets.store(static_cast<std::int64_t>(t.device.size()), rel);
  g.widget_ip_buckets.store(static_cast<std::int64_t>(t.widget_ip.size()), rel);
  g.evictions.store(
      static_cast<std::int64_t>(t.ip.evictions() + t.keys.evictions() +
                                t.device.evictions() + t.widget_ip.evictions()),
      rel);
  g.active_evictions.store(
      static_cast<std::int64_t>(
          t.ip.active_evictions() + t.keys.active_evictions() +
          t.device.active_evictions() + t.widget_ip.active_evictions()),
      rel);
  g.swept.store(static_cast<std::int64_t>(t.ip.swept() + t.keys.swept() +
                                          t.device.swept() +
                                          t.widget_ip.swept()),
                rel);
}

rate_limiter_actor::behavior_type
limiter(rate_limiter_actor::stateful_pointer<limiter_state> self,
        rate_limiter_options opts, std::shared_ptr<limiter_gauges> gauges) {
  self->state.opts = opts;
  self->state.tables = std::make_unique<limiter_tables>(opts);
  self->state.gauges = std::move(gauges);
  self->state.last_seen = self->clock().now();
  self->delayed_send(self, opts.sweep_interval, limiter_tick{});
  auto decide = [self](const limit_check& c) {
    auto& st = self->state;
    st.last_now = std::max(st.last_now, c.now);
    st.last_seen = self->clock().now();
    auto d = evaluate(st, c);
    (d.allowed ? st.gauges->allowed : st.gauges->refused)
        .fetch_add(1, std::memory_order_relaxed);
    publish(st);
    return d;
  };
  return {
      [decide](limit_job& job) {
        auto d = decide(job.check);
        if (job.done)
          job.done(d);
      },
      [decide](const limit_check& c) -> limit_decision { return decide(c); },
      [self](limiter_tick) {
        auto& st = self->state;
        auto elapsed = std::chrono::duration_cast<millis>(self->clock().now() -
                                                          st.last_seen);
        auto now = st.last_now + std::max(elapsed, millis{0});
        auto& t = *st.tables;
        t.ip.sweep(now);
        t.keys.sweep(now);
        t.device.sweep(now);
        t.widget_ip.sweep(now);
        publish(st);
        self->delayed_send(self, st.opts.sweep_interval, limiter_tick{});
      },
  };
}

} // namespace

rate_limiter::rate_limiter(caf::actor_system& sys, rate_limiter_options opts)
    : gauges_(std::make_shared<limiter_gauges>()) {
  actor_ = sys.spawn(limiter, opts, gauges_);
}

rate_limiter::~rate_limiter() {
  stop();
}

void rate_limiter::check(limit_check check,
                         std::function<void(limit_decision)> done) {
  caf::anon_send(actor_, limit_job{std::move(check), std::move(done)});
}

void rate_limiter::stop() {
  if (actor_)
    caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

} // namespace mailassay::actors
