// Webhook endpoints, the delivery outbox and its attempts
// (docs/webhooks.md).
#include "storage/soci_rows.hpp"
#include "storage/soci_store.hpp"

#include <algorithm>

namespace mailassay::storage {

namespace {

using core::errc;
using soci::into;
using soci::use;
namespace wh = core::webhooks;

constexpr const char* webhook_columns =
    "SELECT id, organization_id, url, description, events, status, secret, "
    "previous_secret, previous_secret_expires_at, credits_low_threshold, "
    "created_at, updated_at FROM webhooks ";

constexpr const char* delivery_columns =
    "SELECT id, webhook_id, organization_id, event, subject_id, balance, "
    "threshold, created_ms, status, attempts, next_attempt_ms, "
    "last_status_code, last_error, delivered_ms FROM webhook_deliveries ";

// An endpoint as its columns.
struct webhook_row {
  wh::endpoint w;
  std::string events;
  std::string status;

  // One `into` per column in `webhook_columns` order: a column list, written
  // out by design.
  void bind_into(soci::statement& st) {
    st.exchange(into(w.id));
    st.exchange(into(w.organization_id));
    st.exchange(into(w.url));
    st.exchange(into(w.description));
    st.exchange(into(events));
    st.exchange(into(status));
    st.exchange(into(w.sealed_secret));
    st.exchange(into(w.sealed_previous_secret));
    st.exchange(into(w.previous_secret_expires_at));
    st.exchange(into(w.credits_low_threshold));
    st.exchange(into(w.created_at));
    st.exchange(into(w.updated_at));
  }

  wh::endpoint get() const {
    auto out = w;
    out.events = wh::split_events(events);
    out.status = wh::parse_endpoint_status(status).value_or(
        wh::endpoint_status::disabled);
    return out;
  }
};

// A delivery as its columns.
struct delivery_row {
  wh::delivery d;
  std::string event;
  std::string status;

  // One `into` per column in `delivery_columns` order: a column list, written
  // out by design.
  void bind_into(soci::statement& st) {
    st.exchange(into(d.id));
    st.exchange(into(d.webhook_id));
    st.exchange(into(d.organization_id));
    st.exchange(into(event));
    st.exchange(into(d.subject_id));
    st.exchange(into(d.balance));
    st.exchange(into(d.threshold));
    st.exchange(into(d.created_ms));
    st.exchange(into(status));
    st.exchange(into(d.attempts));
    st.exchange(into(d.next_attempt_ms));
    st.exchange(into(d.last_status_code));
    st.exchange(into(d.last_error));
    st.exchange(into(d.delivered_ms));
  }

  wh::delivery get() const {
    auto out = d;
    out.event = wh::parse_event_type(event).value_or(wh::event_type::ping);
    out.status =
        wh::parse_delivery_status(status).value_or(wh::delivery_status::failed);
    return out;
  }
};

// A delivery id made by the database's random generator (so every process
// and both dialects make them alike): "whd_" + 24 hex digits.
std::string random_id_sql(dialect d) {
  return d == dialect::sqlite
             ? "'whd_' || lower(hex(randomblob(12)))"
             : "'whd_' || substr(md5(CAST(gen_random_uuid() AS TEXT)), 1, 24)";
}

// The subscription test of one event, on the stored comma-separated list.
bool subscribed(const wh::endpoint& w, wh::event_type e) {
  return std::find(w.events.begin(), w.events.end(), e) != w.events.end();
}

} // namespace

wh::endpoint soci_store::load_webhook(const std::string* organization_id,
                                      const std::string& webhook_id) {
  auto rows =
      organization_id != nullptr
          ? select_rows<webhook_row>(sql_, webhook_columns,
                                     "WHERE organization_id = :o AND id = :id",
                                     *organization_id, webhook_id)
          : select_rows<webhook_row>(sql_, webhook_columns, "WHERE id = :id",
                                     webhook_id);
  if (rows.empty())
    refuse(errc::not_found, "webhook not found");
  return rows.front();
}

std::string soci_store::insert_delivery(const wh::delivery& d) {
  std::string event{wh::to_string(d.event)};
  std::string id;
  sql_ << "INSERT INTO webhook_deliveries (id, webhook_id, organization_id, "
          "event, subject_id, balance, threshold, created_ms, status, "
          "next_attempt_ms) VALUES (" +
              random_id_sql(url_.kind) +
              ", :w, :o, :e, :s, :b, :t, :c, 'pending', :n) RETURNING id",
      use(d.webhook_id), use(d.organization_id), use(event), use(d.subject_id),
      use(d.balance), use(d.threshold), use(d.created_ms), use(d.created_ms),
      into(id);
  return id;
}

void soci_store::emit_webhook_event(const std::string& organization_id,
                                    wh::event_type e,
                                    const std::string& subject_id,
                                    std::int64_t now) {
  auto endpoints = select_rows<webhook_row>(
      sql_, webhook_columns, "WHERE organization_id = :o AND status = 'active'",
      organization_id);
  for (const auto& w : endpoints) {
    if (!subscribed(w, e))
      continue;
    wh::delivery d;
    d.webhook_id = w.id;
    d.organization_id = organization_id;
    d.event = e;
    d.subject_id = subject_id;
    d.created_ms = now * 1000;
    insert_delivery(d);
  }
}

void soci_store::emit_credits_low(const std::string& organization_id,
                                  std::int64_t before, std::int64_t after,
                                  std::int64_t now) {
  // Every debit passes here (one indexed read of a small table); nearly
  // always it finds no endpoint and writes nothing.
  std::string id, events;
  std::int64_t threshold = 0;
  soci::statement st =
      (sql_.prepare << "SELECT id, events, credits_low_threshold "
                       "FROM webhooks WHERE organization_id = :o "
                       "AND status = 'active'",
       use(organization_id), into(id), into(events), into(threshold));
  st.execute();
  std::vector<wh::delivery> due;
  while (st.fetch()) {
    auto list = wh::split_events(events);
    if (std::find(list.begin(), list.end(), wh::event_type::credits_low) ==
            list.end() ||
        !wh::crossed_below(before, after, threshold))
      continue;
    wh::delivery d;
    d.webhook_id = id;
    d.organization_id = organization_id;
    d.event = wh::event_type::credits_low;
    d.balance = after;
    d.threshold = threshold;
    d.created_ms = now * 1000;
    due.push_back(std::move(d));
  }
  for (const auto& d : due)
    insert_delivery(d);
}

expected<unit> soci_store::insert_webhook(const wh::endpoint& w) {
  return run<unit>(false, [&] {
    auto events = wh::join_events(w.events);
    std::string status{wh::to_string(w.status)};
    sql_ << "INSERT INTO webhooks (id, organization_id, url, description, "
            "events, status, secret, previous_secret, "
            "previous_secret_expires_at, credits_low_threshold, created_at, "
            "updated_at) VALUES (:id, :o, :u, :d, :e, :s, :sec, :ps, :pe, "
            ":t, :c, :up)",
        use(w.id), use(w.organization_id), use(w.url), use(w.description),
        use(events), use(status), use(w.sealed_secret),
        use(w.sealed_previous_secret), use(w.previous_secret_expires_at),
        use(w.credits_low_threshold), use(w.created_at), use(w.updated_at);
    return unit{};
  });
}

expected<std::vector<wh::endpoint>>
soci_store::list_webhooks(const std::string& organization_id) {
  return run<std::vector<wh::endpoint>>(true, [&] {
    return select_rows<webhook_row>(
        sql_, webhook_columns,
        "WHERE organization_id = :o ORDER BY created_at, id", organization_id);
  });
}

expected<wh::endpoint>
soci_store::get_webhook(const std::string& organization_id,
                        const std::string& webhook_id) {
  return run<wh::endpoint>(
      true, [&] { return load_webhook(&organization_id, webhook_id); });
}

expected<wh::endpoint>
soci_store::update_webhook(const std::string& organization_id,
                           const std::string& webhook_id,
                           const webhook_update& u, std::int64_t now) {
  return run<wh::endpoint>(false, [&] {
    transaction tx{*this};
    auto w = load_webhook(&organization_id, webhook_id);
    // One line per field the patch may carry: written out by design.
    if (u.url)
      w.url = *u.url;
    if (u.description)
      w.description = *u.description;
    if (u.events)
      w.events = *u.events;
    if (u.status)
      w.status = *u.status;
    if (u.credits_low_threshold)
      w.credits_low_threshold = *u.credits_low_threshold;
    if (u.sealed_secret) {
      w.sealed_previous_secret = w.sealed_secret;
      w.previous_secret_expires_at = u.previous_secret_expires_at;
      w.sealed_secret = *u.sealed_secret;
    }
    w.updated_at = now;
    auto events = wh::join_events(w.events);
    std::string status{wh::to_string(w.status)};
    sql_ << "UPDATE webhooks SET url = :u, description = :d, events = :e, "
            "status = :s, secret = :sec, previous_secret = :ps, "
            "previous_secret_expires_at = :pe, credits_low_threshold = :t, "
            "updated_at = :up WHERE organization_id = :o AND id = :id",
        use(w.url), use(w.description), use(events), use(status),
        use(w.sealed_secret), use(w.sealed_previous_secret),
        use(w.previous_secret_expires_at), use(w.credits_low_threshold),
        use(w.updated_at), use(organization_id), use(webhook_id);
    tx.commit();
    return w;
  });
}

expected<unit> soci_store::delete_webhook(const std::string& organization_id,
                                          const std::string& webhook_id) {
  return run<unit>(false, [&] {
    // Deliveries and their attempts go with it (ON DELETE CASCADE).
    soci::statement st =
        (sql_.prepare << "DELETE FROM webhooks "
                         "WHERE organization_id = :o AND id = :id",
         use(organization_id), use(webhook_id));
    st.execute(true);
    if (st.get_affected_rows() == 0)
      refuse(errc::not_found, "webhook not found");
    return unit{};
  });
}

expected<wh::delivery> soci_store::enqueue_webhook_ping(
    const std::string& organization_id, const std::string& webhook_id,
    std::int64_t now_ms, const wh::ping_limits& limits) {
  return run<wh::delivery>(false, [&] {
    transaction tx{*this};
    auto w = load_webhook(&organization_id, webhook_id);
    // Concurrent calls of one organization wait here for each other, so
    // none counts before another's insert is visible (SQLite's
    // BEGIN IMMEDIATE already serializes writers).
    if (url_.kind == dialect::postgresql) {
      std::string locked;
      sql_ << "SELECT id FROM organizations WHERE id = :o FOR UPDATE",
          use(organization_id), into(locked);
    }
    wh::ping_counts counts;
    std::int64_t since = now_ms - limits.window_ms;
    soci::indicator oldest_ind = soci::i_ok;
    sql_ << "SELECT COUNT(*), MIN(created_ms) FROM webhook_deliveries "
            "WHERE webhook_id = :w AND event = 'ping' AND created_ms > :s",
        use(webhook_id), use(since), into(counts.endpoint_recent),
        into(counts.endpoint_oldest_ms, oldest_ind);
    if (oldest_ind != soci::i_ok)
      counts.endpoint_oldest_ms = 0;
    sql_ << "SELECT COUNT(*), MIN(created_ms) FROM webhook_deliveries "
            "WHERE organization_id = :o AND event = 'ping' "
            "AND created_ms > :s",
        use(organization_id), use(since), into(counts.organization_recent),
        into(counts.organization_oldest_ms, oldest_ind);
    if (oldest_ind != soci::i_ok)
      counts.organization_oldest_ms = 0;
    sql_ << "SELECT COUNT(*) FROM webhook_deliveries "
            "WHERE organization_id = :o AND status = 'pending'",
        use(organization_id), into(counts.organization_pending);
    auto decision = wh::admit_ping(counts, limits, now_ms);
    if (!decision.allowed) {
      auto e = core::make_error(errc::rate_limited, decision.reason);
      e.retry_after = decision.retry_after_seconds;
      throw refusal{std::move(e)};
    }
    wh::delivery d;
    d.webhook_id = w.id;
    d.organization_id = organization_id;
    d.event = wh::event_type::ping;
    d.subject_id = w.id;
    d.created_ms = now_ms;
    d.next_attempt_ms = now_ms;
    d.id = insert_delivery(d);
    tx.commit();
    return d;
  });
}

expected<std::vector<wh::delivery>>
soci_store::list_webhook_deliveries(const std::string& organization_id,
                                    const std::string& webhook_id,
                                    std::int64_t limit) {
  return run<std::vector<wh::delivery>>(true, [&] {
    load_webhook(&organization_id, webhook_id);
    if (limit <= 0)
      return std::vector<wh::delivery>{};
    auto out = select_rows<delivery_row>(
        sql_, delivery_columns,
        "WHERE webhook_id = :w ORDER BY created_ms DESC, id DESC LIMIT :l",
        webhook_id, limit);
    std::string id;
    wh::attempt a;
    soci::statement st =
        (sql_.prepare << "SELECT number, at_ms, duration_ms, status_code, "
                         "error FROM webhook_attempts WHERE delivery_id = :d "
                         "ORDER BY number",
         use(id), into(a.number), into(a.at_ms), into(a.duration_ms),
         into(a.status_code), into(a.error));
    for (auto& d : out) {
      id = d.id;
      st.execute();
      while (st.fetch())
        d.log.push_back(a);
    }
    return out;
  });
}

expected<std::vector<claimed_delivery>>
soci_store::claim_webhook_deliveries(const std::string& owner,
                                     std::int64_t limit, std::int64_t lease_ms,
                                     std::int64_t now_ms) {
  return claim_deliveries(owner, nullptr, limit, lease_ms, now_ms);
}

expected<std::vector<claimed_delivery>>
soci_store::claim_organization_webhook_deliveries(
    const std::string& owner, const std::string& organization_id,
    std::int64_t limit, std::int64_t lease_ms, std::int64_t now_ms) {
  return claim_deliveries(owner, &organization_id, limit, lease_ms, now_ms);
}

namespace {

const std::string due_deliveries =
    "FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id "
    "WHERE d.status = 'pending' AND d.next_attempt_ms <= :n "
    "AND d.lease_expires_ms < :n2 AND w.status = 'active' ";

} // namespace

expected<std::vector<std::string>>
soci_store::due_webhook_organizations(std::int64_t now_ms, std::int64_t limit) {
  return run<std::vector<std::string>>(true, [&] {
    std::vector<std::string> out;
    std::string org;
    std::int64_t oldest = 0;
    soci::statement st =
        (sql_.prepare << "SELECT d.organization_id, MIN(d.next_attempt_ms) "
                         "AS oldest " +
                             due_deliveries +
                             "GROUP BY d.organization_id "
                             "ORDER BY oldest, d.organization_id LIMIT :l",
         use(now_ms), use(now_ms), use(limit), into(org), into(oldest));
    st.execute();
    while (st.fetch())
      out.push_back(org);
    return out;
  });
}

expected<std::vector<claimed_delivery>> soci_store::claim_deliveries(
    const std::string& owner, const std::string* organization_id,
    std::int64_t limit, std::int64_t lease_ms, std::int64_t now_ms) {
  return run<std::vector<claimed_delivery>>(false, [&] {
    std::vector<claimed_delivery> out;
    if (limit <= 0)
      return out;
    // Every organization's, or one's: the same binding either way (an
    // empty name matches every row).
    const std::string org = organization_id ? *organization_id : "";
    const std::string due =
        due_deliveries + "AND (:o = '' OR d.organization_id = :o2) ";
    // Polled every `poll_ms` by every process: a plain read first, so an
    // idle poll never takes a write lock (SQLite) or a row lock.
    {
      int one = 0;
      sql_ << "SELECT 1 " + due + "LIMIT 1", use(now_ms), use(now_ms), use(org),
          use(org), into(one);
      if (!sql_.got_data())
        return out;
    }
    transaction tx{*this};
    std::string query =
        "SELECT d.id " + due + "ORDER BY d.next_attempt_ms, d.id LIMIT :l";
    // Another process's claim in progress is skipped, not waited for;
    // SQLite serializes claimers by its write lock instead.
    if (url_.kind == dialect::postgresql)
      query += " FOR UPDATE OF d SKIP LOCKED";
    std::vector<std::string> ids;
    {
      std::string id;
      soci::statement st = (sql_.prepare << query, use(now_ms), use(now_ms),
                            use(org), use(org), use(limit), into(id));
      st.execute();
      while (st.fetch())
        ids.push_back(id);
    }
    std::int64_t expires = now_ms + lease_ms;
    for (const auto& id : ids) {
      sql_ << "UPDATE webhook_deliveries SET lease_owner = :o, "
              "lease_expires_ms = :e WHERE id = :id",
          use(owner), use(expires), use(id);
      auto rows = select_rows<delivery_row>(sql_, delivery_columns,
                                            "WHERE id = :id", id);
      if (rows.empty())
        continue;
      claimed_delivery c;
      c.delivery = std::move(rows.front());
      c.endpoint = load_webhook(nullptr, c.delivery.webhook_id);
      out.push_back(std::move(c));
    }
    tx.commit();
    return out;
  });
}

expected<bool> soci_store::record_webhook_attempt(
    const std::string& delivery_id, const std::string& owner,
    const std::optional<wh::attempt>& a, const delivery_outcome& outcome) {
  return run<bool>(false, [&] {
    transaction tx{*this};
    std::string status{wh::to_string(outcome.status)};
    int made = a ? 1 : 0;
    int code = a ? a->status_code : 0;
    std::string error = a ? a->error : std::string{"retry window passed"};
    soci::statement st =
        (sql_.prepare << "UPDATE webhook_deliveries SET status = :s, "
                         "attempts = attempts + :m, next_attempt_ms = :n, "
                         "last_status_code = :c, last_error = :e, "
                         "delivered_ms = :d, lease_owner = '', "
                         "lease_expires_ms = 0 WHERE id = :id "
                         "AND lease_owner = :o AND status = 'pending'",
         use(status), use(made), use(outcome.next_attempt_ms), use(code),
         use(error), use(outcome.delivered_ms), use(delivery_id), use(owner));
    st.execute(true);
    if (st.get_affected_rows() == 0)
      return false;
    if (a) {
      sql_ << "INSERT INTO webhook_attempts (delivery_id, number, at_ms, "
              "duration_ms, status_code, error) SELECT id, attempts, :a, "
              ":du, :c, :e FROM webhook_deliveries WHERE id = :id",
          use(a->at_ms), use(a->duration_ms), use(a->status_code),
          use(a->error), use(delivery_id);
    }
    tx.commit();
    return true;
  });
}

expected<unit> soci_store::release_webhook_leases(const std::string& owner) {
  return run<unit>(false, [&] {
    sql_ << "UPDATE webhook_deliveries SET lease_owner = '', "
            "lease_expires_ms = 0 WHERE lease_owner = :o AND status = "
            "'pending'",
        use(owner);
    return unit{};
  });
}

expected<std::int64_t>
soci_store::prune_webhook_deliveries(std::int64_t before_ms) {
  return run<std::int64_t>(false, [&] {
    soci::statement st =
        (sql_.prepare << "DELETE FROM webhook_deliveries WHERE status IN "
                         "('delivered', 'failed') AND created_ms < :b",
         use(before_ms));
    st.execute(true);
    return static_cast<std::int64_t>(st.get_affected_rows());
  });
}

} // namespace mailassay::storage
