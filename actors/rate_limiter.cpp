#include "actors/rate_limiter.hpp"

#include "actors/rate_limiter_shards.hpp"
#include "core/limits/bucket_table.hpp"
#include "core/limits/multi_window.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <bit>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>

namespace mailassay::actors {

namespace {

using core::limits::bucket_table;
using core::limits::millis;
using core::limits::multi_window;
using core::limits::token_bucket;
using core::limits::window_spec;

// Up to 1 IP + 3 key windows + device + widget IP + 3 auth buckets per
// check.
template <class Bucket>
struct bucket_list {
  // Only [0, size) is read: left uninitialised (filled on every check).
  Bucket* buckets[12];
  limit_scope scopes[12];
  std::size_t size = 0;

  void add(Bucket* b, limit_scope scope) {
    buckets[size] = b;
    scopes[size] = scope;
    ++size;
  }
};

token_bucket& one_window(text_table& table, const hashed_id& id,
                         window_spec spec, millis now) {
  auto& b =
      table.find_or_insert(id, now, [&] { return token_bucket(spec, now); });
  // A changed limit applies to this request (no-op when unchanged).
  b.reshape(spec, now);
  return b;
}

template <class Bucket>
limit_decision to_decision(const bucket_list<Bucket>& list,
                           const core::limits::combined_decision& r) {
  if (list.size == 0)
    return decision_of(r, limit_scope::none, millis{0});
  return decision_of(r, list.scopes[r.index],
                     list.buckets[r.index]->spec().period);
}

std::optional<window_spec> ip_window(std::int64_t ip_per_minute,
                                     const ip_scope& ip) {
  auto limit = ip.per_minute.value_or(ip_per_minute);
  if (limit <= 0)
    return std::nullopt;
  return window_spec{limit, core::limits::minute};
}

// A key's windows without allocating: checks run for every request, and
// the vector `multi_window` keeps is built only when they change.
struct key_specs {
  window_spec specs[3];
  std::size_t size = 0;

  explicit key_specs(const core::account::rate_limits& l) {
    auto add = [this](const std::optional<std::int64_t>& limit, millis per) {
      if (limit && *limit > 0)
        specs[size++] = {*limit, per};
    };
    add(l.per_minute, core::limits::minute);
    add(l.per_hour, core::limits::hour);
    add(l.per_day, core::limits::day);
  }

  bool empty() const { return size == 0; }

  bool same_as(const std::vector<window_spec>& v) const {
    return std::equal(v.begin(), v.end(), specs, specs + size);
  }

  std::vector<window_spec> vector() const { return {specs, specs + size}; }
};

std::optional<window_spec> widget_window(const widget_scope& w) {
  if (w.limit <= 0)
    return std::nullopt;
  return window_spec{w.limit, w.period};
}

// Calls `f(scope, name)` for each account-endpoint scope `c` names.
template <class F>
void for_auth_scopes(const limit_check& c, F f) {
  if (c.login_ip)
    f(*c.login_ip, limit_scope::login_ip);
  if (c.login_account)
    f(*c.login_account, limit_scope::login_account);
  if (c.signup_ip)
    f(*c.signup_ip, limit_scope::signup_ip);
}

// The id of an account-endpoint bucket in the shared table.
std::string auth_id(limit_scope scope, const window_scope& w) {
  std::string id{to_string(scope)};
  id += ':';
  id += w.id;
  return id;
}

} // namespace

limit_decision decision_of(const core::limits::combined_decision& r,
                           limit_scope reported, core::limits::millis period) {
  limit_decision out;
  out.allowed = r.result.allowed;
  out.limit = r.result.limit;
  out.remaining = r.result.remaining;
  out.reset_seconds = r.result.reset_seconds;
  out.retry_after_seconds = r.result.retry_after_seconds;
  out.reported = reported;
  out.period = period;
  if (!out.allowed)
    out.refused_by = reported;
  return out;
}

std::string_view to_string(limit_scope s) {
  switch (s) {
    case limit_scope::none: return "";
    case limit_scope::ip: return "ip";
    case limit_scope::key: return "key";
    case limit_scope::device: return "device";
    case limit_scope::login_ip: return "login_ip";
    case limit_scope::login_account: return "login_account";
    case limit_scope::signup_ip: return "signup_ip";
  }
  return "";
}

namespace {

// The shards the buckets of one check live in, locked in index order (two
// checks never wait for each other in a cycle) for as long as it lives: a
// check is all-or-nothing across its scopes, whichever shards they hash to.
class locked_shards {
public:
  locked_shards(const limiter_shared& sh, const scope_ids& ids) {
    std::size_t index[7];
    ids.for_each([&](const hashed_id& id) { add(index, sh.index_of(id)); });
    for (std::size_t i = 0; i < size_; ++i) {
      shard_[i] = sh.shards[index[i]].get();
      shard_[i]->mtx.lock();
    }
  }

  ~locked_shards() {
    for (std::size_t i = size_; i > 0; --i)
      shard_[i - 1]->mtx.unlock();
  }

  locked_shards(const locked_shards&) = delete;
  locked_shards& operator=(const locked_shards&) = delete;

  // After a change at caller time `now`: every shard held records the time
  // and adds what changed in its tables to the gauges.
  void done(core::limits::millis now, caf::actor_system& sys,
            limiter_gauges& g) {
    for (std::size_t i = 0; i < size_; ++i) {
      shard_[i]->saw(now, sys);
      shard_[i]->publish(g);
    }
  }

private:
  // Inserts `value` into `index` in order, once (a handful of entries: no
  // sort call).
  void add(std::size_t* index, std::size_t value) {
    auto i = size_;
    while (i > 0 && index[i - 1] > value)
      --i;
    if (i > 0 && index[i - 1] == value)
      return;
    for (auto j = size_; j > i; --j)
      index[j] = index[j - 1];
    index[i] = value;
    ++size_;
  }

  // One per scope a check can name: ip, key, device, widget ip, 3 auth; in
  // index order.
  limiter_shard* shard_[7];
  std::size_t size_ = 0;
};

} // namespace

scope_ids::scope_ids(const limit_check& c) {
  if (c.ip)
    ip.emplace(c.ip->ip);
  if (c.key)
    key.emplace(c.key->key_id);
  if (c.device)
    device.emplace(c.device->id);
  if (c.widget_ip)
    widget_ip.emplace(c.widget_ip->id);
  for_auth_scopes(c, [&](const window_scope& w, limit_scope scope) {
    if (!auth_text)
      auth_text.emplace();
    auto& text = (*auth_text)[auth_size];
    text = auth_id(scope, w);
    auth[auth_size] = hashed_id{text};
    ++auth_size;
  });
}

limit_decision limiter_shared::check(const limit_check& c, const scope_ids& ids,
                                     std::int64_t ip_limit) {
  auto now = c.now;
  bucket_list<token_bucket> list;
  if (c.ip)
    if (auto spec = ip_window(ip_limit, *c.ip))
      list.add(&one_window(tables_of(*ids.ip).ip, *ids.ip, *spec, now),
               limit_scope::ip);
  if (c.key) {
    key_specs specs{c.key->limits};
    auto& keys = tables_of(*ids.key).keys;
    if (specs.empty()) {
      keys.erase(*ids.key);
    } else {
      auto& w = keys.find_or_insert(
          *ids.key, now, [&] { return multi_window(specs.vector(), now); });
      // Changed limits apply to this request.
      if (!specs.same_as(w.specs()))
        w.reshape(specs.vector(), now);
      for (auto& b : w.buckets())
        list.add(&b, limit_scope::key);
    }
  }
  if (c.device)
    if (auto spec = widget_window(*c.device))
      list.add(
          &one_window(tables_of(*ids.device).device, *ids.device, *spec, now),
          limit_scope::device);
  if (c.widget_ip)
    if (auto spec = widget_window(*c.widget_ip))
      list.add(&one_window(tables_of(*ids.widget_ip).widget_ip, *ids.widget_ip,
                           *spec, now),
               limit_scope::ip);
  std::size_t auth_index = 0;
  for_auth_scopes(c, [&](const window_scope& w, limit_scope scope) {
    const auto& id = ids.auth[auth_index++];
    if (auto spec = widget_window(w))
      list.add(&one_window(tables_of(id).auth, id, *spec, now), scope);
  });
  auto d =
      to_decision(list, core::limits::take_all({list.buckets, list.size}, now));
  (d.allowed ? gauges.allowed : gauges.refused)
      .fetch_add(1, std::memory_order_relaxed);
  return d;
}

limit_decision limiter_shared::peek(const limit_check& c, const scope_ids& ids,
                                    std::int64_t ip_limit) const {
  auto now = c.now;
  bucket_list<const token_bucket> list;
  // An absent bucket behaves like a new, full one.
  std::optional<token_bucket> fresh[12];
  std::size_t fresh_used = 0;
  auto one = [&](const text_table& table, const hashed_id& id, window_spec spec,
                 limit_scope scope) {
    const auto* b = table.peek(id);
    if (!b || !(b->spec() == spec)) {
      auto& tmp = fresh[fresh_used++];
      tmp.emplace(b ? *b : token_bucket(spec, now));
      tmp->reshape(spec, now);
      b = &*tmp;
    }
    list.add(b, scope);
  };
  if (c.ip)
    if (auto spec = ip_window(ip_limit, *c.ip))
      one(tables_of(*ids.ip).ip, *ids.ip, *spec, limit_scope::ip);
  std::optional<multi_window> reshaped;
  if (c.key) {
    key_specs specs{c.key->limits};
    if (!specs.empty()) {
      const auto* w = tables_of(*ids.key).keys.peek(*ids.key);
      if (!w || !specs.same_as(w->specs())) {
        // Limits changed since the last check: report them already.
        reshaped.emplace(w ? *w : multi_window(specs.vector(), now));
        reshaped->reshape(specs.vector(), now);
        w = &*reshaped;
      }
      for (const auto& b : w->buckets())
        list.add(&b, limit_scope::key);
    }
  }
  if (c.device)
    if (auto spec = widget_window(*c.device))
      one(tables_of(*ids.device).device, *ids.device, *spec,
          limit_scope::device);
  if (c.widget_ip)
    if (auto spec = widget_window(*c.widget_ip))
      one(tables_of(*ids.widget_ip).widget_ip, *ids.widget_ip, *spec,
          limit_scope::ip);
  std::size_t auth_index = 0;
  for_auth_scopes(c, [&](const window_scope& w, limit_scope scope) {
    const auto& id = ids.auth[auth_index++];
    if (auto spec = widget_window(w))
      one(tables_of(id).auth, id, *spec, scope);
  });
  return to_decision(list,
                     core::limits::peek_all({list.buckets, list.size}, now));
}

namespace {

struct sweeper_state {
  std::shared_ptr<limiter_shared> shared;
  bool sweeping = false; // a pass is under way (steps queued)
  // Per shard: the table its pass is on (ip, keys, device, widget ip,
  // auth; 5: done) and the time it sweeps at.
  std::vector<int> table;
  std::vector<millis> at;
  static inline const char* name = "rate_limiter";
};

// Runs one step of the pass: `sweep_step` entries examined in all, split
// over the shards still sweeping, each under its own lock for its part.
// Returns whether the pass is finished.
bool sweep_step(sweeper_state& st) {
  auto& sh = *st.shared;
  auto n = sh.shards.size();
  bool finished = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (st.table[i] > 4)
      continue;
    auto budget = std::max<std::size_t>(
        1, sh.opts.sweep_step / n + (i < sh.opts.sweep_step % n ? 1 : 0));
    auto& shard = *sh.shards[i];
    std::lock_guard<std::mutex> guard{shard.mtx};
    auto& t = shard.tables;
    auto at = st.at[i];
    bool done = false;
    switch (st.table[i]) {
      case 0: done = t.ip.sweep_some(at, budget); break;
      case 1: done = t.keys.sweep_some(at, budget); break;
      case 2: done = t.device.sweep_some(at, budget); break;
      case 3: done = t.widget_ip.sweep_some(at, budget); break;
      default: done = t.auth.sweep_some(at, budget); break;
    }
    shard.publish(sh.gauges);
    if (done)
      ++st.table[i];
    finished = finished && st.table[i] > 4;
  }
  return finished;
}

rate_limiter_actor::behavior_type
sweeper(rate_limiter_actor::stateful_pointer<sweeper_state> self,
        std::shared_ptr<limiter_shared> shared) {
  self->state.shared = std::move(shared);
  self->delayed_send(self, self->state.shared->opts.sweep_interval,
                     limiter_tick{});
  return {
      [self](const limit_check& c) -> limit_decision {
        auto& sh = *self->state.shared;
        scope_ids ids{c};
        locked_shards held{sh, ids};
        auto d = sh.check(c, ids, sh.ip_per_minute.load());
        held.done(c.now, self->system(), sh.gauges);
        return d;
      },
      [self](limiter_tick) {
        auto& st = self->state;
        self->delayed_send(self, st.shared->opts.sweep_interval,
                           limiter_tick{});
        if (st.sweeping)
          return;
        auto& sh = *st.shared;
        auto n = sh.shards.size();
        st.table.assign(n, 0);
        st.at.assign(n, millis{0});
        auto now = self->clock().now();
        for (std::size_t i = 0; i < n; ++i) {
          std::lock_guard<std::mutex> guard{sh.shards[i]->mtx};
          st.at[i] = sh.shards[i]->estimated_now(now);
        }
        st.sweeping = true;
        self->send(self, limiter_sweep{});
      },
      [self](limiter_sweep) {
        auto& st = self->state;
        if (sweep_step(st))
          st.sweeping = false;
        else
          self->send(self, limiter_sweep{});
      },
  };
}

} // namespace

rate_limiter::rate_limiter(caf::actor_system& sys, rate_limiter_options opts)
    : sys_(sys), shared_(std::make_shared<limiter_shared>(opts)) {
  for (auto& shard : shared_->shards)
    shard->last_seen = sys.clock().now();
  actor_ = sys.spawn(sweeper, shared_);
}

rate_limiter::~rate_limiter() {
  stop();
}

limit_decision rate_limiter::check(const limit_check& c) {
  auto& sh = *shared_;
  scope_ids ids{c};
  locked_shards held{sh, ids};
  auto d = sh.check(c, ids, sh.ip_per_minute.load());
  held.done(c.now, sys_, sh.gauges);
  return d;
}

limit_decision rate_limiter::peek(const limit_check& c) const {
  auto& sh = *shared_;
  scope_ids ids{c};
  locked_shards held{sh, ids};
  return sh.peek(c, ids, sh.ip_per_minute.load());
}

void rate_limiter::set_ip_per_minute(std::int64_t limit) {
  shared_->ip_per_minute.store(limit);
}

std::vector<limit_window> windows_of(const limit_check& c,
                                     std::int64_t ip_per_minute) {
  std::vector<limit_window> out;
  if (c.ip)
    if (auto spec = ip_window(ip_per_minute, *c.ip))
      out.push_back({limiter_table::ip, c.ip->ip, *spec, limit_scope::ip});
  if (c.key) {
    key_specs specs{c.key->limits};
    for (std::size_t i = 0; i < specs.size; ++i)
      out.push_back({limiter_table::key, std::string{c.key->key_id},
                     specs.specs[i], limit_scope::key});
  }
  if (c.device)
    if (auto spec = widget_window(*c.device))
      out.push_back(
          {limiter_table::device, c.device->id, *spec, limit_scope::device});
  if (c.widget_ip)
    if (auto spec = widget_window(*c.widget_ip))
      out.push_back(
          {limiter_table::widget_ip, c.widget_ip->id, *spec, limit_scope::ip});
  for_auth_scopes(c, [&](const window_scope& w, limit_scope scope) {
    if (auto spec = widget_window(w))
      out.push_back({limiter_table::auth, auth_id(scope, w), *spec, scope});
  });
  return out;
}

void rate_limiter::adopt(const limit_check& c,
                         std::span<const std::int64_t> levels) {
  auto& sh = *shared_;
  scope_ids ids{c};
  locked_shards held{sh, ids};
  auto windows = windows_of(c, sh.ip_per_minute.load());
  auto now = c.now;
  std::size_t key_index = 0;
  for (std::size_t i = 0; i < windows.size() && i < levels.size(); ++i) {
    const auto& w = windows[i];
    hashed_id id{w.id};
    auto& t = sh.tables_of(id);
    auto set = [&](text_table& table) {
      auto& b = table.find_or_insert(id, now,
                                     [&] { return token_bucket(w.spec, now); });
      b = token_bucket::at_level(w.spec, levels[i], now);
    };
    switch (w.table) {
      case limiter_table::ip: set(t.ip); break;
      case limiter_table::device: set(t.device); break;
      case limiter_table::widget_ip: set(t.widget_ip); break;
      case limiter_table::auth: set(t.auth); break;
      case limiter_table::key: {
        key_specs specs{c.key->limits};
        auto& mw = t.keys.find_or_insert(
            id, now, [&] { return multi_window(specs.vector(), now); });
        if (!specs.same_as(mw.specs()))
          mw.reshape(specs.vector(), now);
        if (key_index < mw.buckets().size())
          mw.buckets()[key_index] =
              token_bucket::at_level(w.spec, levels[i], now);
        ++key_index;
        break;
      }
    }
  }
  held.done(c.now, sys_, sh.gauges);
}

std::int64_t rate_limiter::ip_per_minute() const {
  return shared_->ip_per_minute.load();
}

const limiter_gauges& rate_limiter::gauges() const {
  return shared_->gauges;
}

void rate_limiter::stop() {
  if (actor_)
    caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

} // namespace mailassay::actors
