// Access-token signing keys (docs/deployment.md).
// One SQL statement per store operation, written out by design: statements
// alike in shape (a SELECT read row by row, an UPDATE counting the rows it
// changed) ask different questions of different tables.
#include "storage/soci_store.hpp"

namespace mailassay::storage {

namespace {

using core::errc;
using soci::into;
using soci::use;

} // namespace

std::vector<acc::signing_key> soci_store::select_signing_keys() {
  acc::signing_key k;
  std::string state;
  soci::statement st =
      (sql_.prepare << "SELECT kid, secret, state, created_at, retired_at "
                       "FROM signing_keys ORDER BY "
                       "CASE WHEN state = 'current' THEN 0 ELSE 1 END, "
                       "created_at DESC, kid",
       into(k.kid), into(k.secret), into(state), into(k.created_at),
       into(k.retired_at));
  st.execute();
  std::vector<acc::signing_key> out;
  while (st.fetch())
    out.push_back(k);
  return out;
}

expected<std::vector<acc::signing_key>>
soci_store::ensure_signing_key(const acc::signing_key& candidate) {
  return run<std::vector<acc::signing_key>>(false, [&] {
    transaction tx{*this};
    int current = 0;
    sql_ << "SELECT COUNT(*) FROM signing_keys WHERE state = 'current'",
        into(current);
    if (current == 0) {
      auto now = db_clock();
      // Two processes starting together both see none; the unique index
      // keeps the first one's, and the second reads it back below.
      sql_ << "INSERT INTO signing_keys (kid, secret, state, created_at) "
              "VALUES (:k, :s, 'current', :c) ON CONFLICT DO NOTHING",
          use(candidate.kid), use(candidate.secret), use(now);
    }
    auto keys = select_signing_keys();
    tx.commit();
    return keys;
  });
}

expected<std::vector<acc::signing_key>> soci_store::signing_keys() {
  return run<std::vector<acc::signing_key>>(
      true, [&] { return select_signing_keys(); });
}

expected<std::vector<acc::signing_key>>
soci_store::rotate_signing_key(const acc::signing_key& next,
                               std::int64_t keep_seconds) {
  return run<std::vector<acc::signing_key>>(false, [&] {
    transaction tx{*this};
    auto now = db_clock();
    sql_ << "UPDATE signing_keys SET state = 'retired', retired_at = :r "
            "WHERE state = 'current'",
        use(now);
    if (keep_seconds < 0) {
      sql_ << "DELETE FROM signing_keys";
    } else {
      std::int64_t before = now - keep_seconds;
      sql_ << "DELETE FROM signing_keys "
              "WHERE state = 'retired' AND retired_at < :b",
          use(before);
    }
    try {
      sql_ << "INSERT INTO signing_keys (kid, secret, state, created_at) "
              "VALUES (:k, :s, 'current', :c)",
          use(next.kid), use(next.secret), use(now);
    } catch (const std::exception& e) {
      // Another rotation committed between our UPDATE and INSERT.
      if (is_unique_violation(e, "signing_keys_one_current",
                              "signing_keys.state"))
        refuse(errc::conflict, "another rotation of the signing key is "
                               "under way; try again");
      throw;
    }
    notify(change_kind::signing_key, next.kid);
    auto keys = select_signing_keys();
    tx.commit();
    return keys;
  });
}

expected<bool> soci_store::seal_signing_key(const std::string& kid,
                                            const std::string& plain,
                                            const std::string& sealed) {
  return run<bool>(false, [&] {
    soci::statement st = (sql_.prepare << "UPDATE signing_keys SET secret = :s "
                                          "WHERE kid = :k AND secret = :p",
                          use(sealed), use(kid), use(plain));
    st.execute(true);
    return st.get_affected_rows() == 1;
  });
}

} // namespace mailassay::storage
