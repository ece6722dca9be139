// Per-key daily usage counters and distinct addresses.
// One SQL statement per store operation, written out by design: the
// statements alike in shape (a SELECT over a day range, an UPDATE counting
// the rows it changed) ask different questions of different tables.
#include "storage/soci_store.hpp"

namespace mailassay::storage {

namespace {

using soci::into;
using soci::use;

// Rows of usage counters over a day range: `query` selects a label (a day
// or a key id) and the sums of requests, successful and credits for one
// id (:i) from one day (:f) to another (:t), in the order it wants.
template <class Row>
std::vector<Row> counter_rows(soci::session& sql, const std::string& query,
                              std::string Row::*label, const std::string& id,
                              const std::string& from_day,
                              const std::string& to_day) {
  Row row;
  soci::statement st = (sql.prepare << query, use(id), use(from_day),
                        use(to_day), into(row.*label), into(row.requests),
                        into(row.successful), into(row.credits));
  st.execute();
  std::vector<Row> out;
  while (st.fetch())
    out.push_back(row);
  return out;
}

} // namespace

expected<unit>
soci_store::add_usage(const std::vector<usage_increment>& batch) {
  return run<unit>(false, [&] {
    if (batch.empty())
      return unit{};
    transaction tx{*this};
    usage_increment cur;
    std::string hash;
    // Both dialects speak INSERT ... ON CONFLICT (SQLite >= 3.24).
    soci::statement counters =
        (sql_.prepare << "INSERT INTO usage_daily (key_id, organization_id, "
                         "day, requests, successful, credits) "
                         "VALUES (:k, :o, :d, :r, :s, :c) "
                         "ON CONFLICT (key_id, day) DO UPDATE SET "
                         "requests = usage_daily.requests + excluded.requests, "
                         "successful = usage_daily.successful + "
                         "excluded.successful, "
                         "credits = usage_daily.credits + excluded.credits",
         use(cur.key_id), use(cur.organization_id), use(cur.day),
         use(cur.requests), use(cur.successful), use(cur.credits));
    soci::statement addresses =
        (sql_.prepare << "INSERT INTO usage_addresses (key_id, day, "
                         "address_hash) VALUES (:k, :d, :h) "
                         "ON CONFLICT DO NOTHING",
         use(cur.key_id), use(cur.day), use(hash));
    for (const auto& inc : batch) {
      cur.key_id = inc.key_id;
      cur.organization_id = inc.organization_id;
      cur.day = inc.day;
      cur.requests = inc.requests;
      cur.successful = inc.successful;
      cur.credits = inc.credits;
      counters.execute(true);
      for (const auto& h : inc.address_hashes) {
        hash = h;
        addresses.execute(true);
      }
    }
    tx.commit();
    return unit{};
  });
}

expected<std::vector<usage_day>>
soci_store::usage_between(const std::string& key_id,
                          const std::string& from_day,
                          const std::string& to_day) {
  return run<std::vector<usage_day>>(true, [&] {
    return counter_rows(sql_,
                        "SELECT day, requests, successful, credits "
                        "FROM usage_daily WHERE key_id = :i "
                        "AND day >= :f AND day <= :t ORDER BY day",
                        &usage_day::day, key_id, from_day, to_day);
  });
}

expected<std::int64_t>
soci_store::distinct_addresses(const std::string& key_id,
                               const std::string& from_day,
                               const std::string& to_day) {
  return run<std::int64_t>(true, [&] {
    std::int64_t count = 0;
    sql_ << "SELECT COUNT(DISTINCT address_hash) FROM usage_addresses "
            "WHERE key_id = :k AND day >= :f AND day <= :t",
        use(key_id), use(from_day), use(to_day), into(count);
    return count;
  });
}

expected<std::vector<usage_day>>
soci_store::organization_usage_between(const std::string& organization_id,
                                       const std::string& from_day,
                                       const std::string& to_day) {
  return run<std::vector<usage_day>>(true, [&] {
    // usage_daily carries the organization, so no join: the primary key
    // does not cover this filter, but an organization has few keys and a
    // window few days.
    return counter_rows(sql_,
                        "SELECT day, SUM(requests), SUM(successful), "
                        "SUM(credits) FROM usage_daily "
                        "WHERE organization_id = :i "
                        "AND day >= :f AND day <= :t "
                        "GROUP BY day ORDER BY day",
                        &usage_day::day, organization_id, from_day, to_day);
  });
}

expected<std::vector<key_usage>>
soci_store::organization_usage_by_key(const std::string& organization_id,
                                      const std::string& from_day,
                                      const std::string& to_day) {
  return run<std::vector<key_usage>>(true, [&] {
    return counter_rows(sql_,
                        "SELECT key_id, SUM(requests) AS r, "
                        "SUM(successful), SUM(credits) FROM usage_daily "
                        "WHERE organization_id = :i "
                        "AND day >= :f AND day <= :t "
                        "GROUP BY key_id ORDER BY r DESC, key_id",
                        &key_usage::key_id, organization_id, from_day, to_day);
  });
}

expected<std::int64_t>
soci_store::organization_distinct_addresses(const std::string& organization_id,
                                            const std::string& from_day,
                                            const std::string& to_day) {
  return run<std::int64_t>(true, [&] {
    std::int64_t count = 0;
    sql_ << "SELECT COUNT(DISTINCT a.address_hash) FROM usage_addresses a "
            "JOIN api_keys k ON k.id = a.key_id "
            "WHERE k.organization_id = :o AND a.day >= :f AND a.day <= :t",
        use(organization_id), use(from_day), use(to_day), into(count);
    return count;
  });
}

} // namespace mailassay::storage
