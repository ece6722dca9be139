// Organizations, users, memberships and refresh tokens.
// One SQL statement per store operation, written out by design: statements
// alike in shape (a SELECT read row by row, an UPDATE counting the rows it
// changed) ask different questions of different tables.
#include "storage/soci_rows.hpp"
#include "storage/soci_store.hpp"

namespace mailassay::storage {

namespace {

using core::errc;
using soci::into;
using soci::use;

constexpr const char* member_columns =
    "SELECT u.id, u.email, u.name, u.password_hash, u.created_at, "
    "m.organization_id, m.role FROM users u "
    "JOIN memberships m ON m.user_id = u.id ";

// One row of `member_columns`.
struct member_row {
  acc::member m;
  std::string role;

  // One `into` per column in `member_columns` order: a column list, written out
  // by design.
  void bind_into(soci::statement& st) {
    st.exchange(into(m.person.id));
    st.exchange(into(m.person.email));
    st.exchange(into(m.person.name));
    st.exchange(into(m.person.password_hash));
    st.exchange(into(m.person.created_at));
    st.exchange(into(m.organization_id));
    st.exchange(into(role));
  }

  acc::member get() const {
    auto out = m;
    out.member_role = acc::parse_role(role).value_or(acc::role::member);
    return out;
  }
};

std::vector<acc::member> select_members(soci::session& sql,
                                        const std::string& where,
                                        const std::string& arg) {
  return select_rows<member_row>(sql, member_columns, where, arg);
}

void insert_user(soci::session& sql, const acc::user& u) {
  sql << "INSERT INTO users (id, email, name, password_hash, created_at) "
         "VALUES (:id, :email, :name, :hash, :created)",
      use(u.id), use(u.email), use(u.name), use(u.password_hash),
      use(u.created_at);
}

void insert_membership(soci::session& sql, const std::string& user_id,
                       const std::string& organization_id, acc::role r) {
  std::string role{acc::to_string(r)};
  sql << "INSERT INTO memberships (user_id, organization_id, role) "
         "VALUES (:u, :o, :r)",
      use(user_id), use(organization_id), use(role);
}

} // namespace

expected<unit> soci_store::create_organization(const acc::organization& org,
                                               const acc::user& owner,
                                               std::int64_t initial_credits,
                                               acc::unix_time now) {
  return run<unit>(false, [&] {
    if (initial_credits < 0)
      refuse(errc::validation_failed, "initial credits must not be negative");
    transaction tx{*this};
    sql_ << "INSERT INTO organizations (id, name, created_at) "
            "VALUES (:id, :name, :created)",
        use(org.id), use(org.name), use(org.created_at);
    insert_user(sql_, owner);
    insert_membership(sql_, owner.id, org.id, acc::role::owner);
    sql_ << "INSERT INTO credit_accounts "
            "(organization_id, balance, consumed, updated_at) "
            "VALUES (:o, :b, 0, :t)",
        use(org.id), use(initial_credits), use(now);
    if (initial_credits > 0) {
      std::string kind = "signup";
      std::string reference;
      sql_ << "INSERT INTO credit_ledger (organization_id, delta, kind, "
              "reference, balance_after, created_at) "
              "VALUES (:o, :d, :k, :r, :b, :t)",
          use(org.id), use(initial_credits), use(kind), use(reference),
          use(initial_credits), use(now);
    }
    tx.commit();
    return unit{};
  });
}

expected<unit> soci_store::add_member(const std::string& organization_id,
                                      const acc::user& person, acc::role r) {
  return run<unit>(false, [&] {
    transaction tx{*this};
    int found = 0;
    sql_ << "SELECT COUNT(*) FROM organizations WHERE id = :o",
        use(organization_id), into(found);
    if (found == 0)
      refuse(errc::not_found, "organization not found");
    insert_user(sql_, person);
    insert_membership(sql_, person.id, organization_id, r);
    tx.commit();
    return unit{};
  });
}

expected<acc::member>
soci_store::find_member_by_email(const std::string& email) {
  return run<acc::member>(true, [&] {
    auto rows = select_members(sql_, "WHERE u.email = :e", email);
    if (rows.empty())
      refuse(errc::not_found, "user not found");
    return rows.front();
  });
}

expected<acc::member> soci_store::find_member(const std::string& user_id) {
  return run<acc::member>(true, [&] {
    auto rows = select_members(sql_, "WHERE u.id = :id", user_id);
    if (rows.empty())
      refuse(errc::not_found, "user not found");
    return rows.front();
  });
}

expected<acc::organization>
soci_store::get_organization(const std::string& organization_id) {
  return run<acc::organization>(true, [&] {
    acc::organization org;
    std::int64_t retention = 0;
    soci::indicator retention_ind = soci::i_null;
    sql_ << "SELECT id, name, created_at, batch_retention_seconds "
            "FROM organizations WHERE id = :id",
        use(organization_id), into(org.id), into(org.name),
        into(org.created_at), into(retention, retention_ind);
    if (!sql_.got_data())
      refuse(errc::not_found, "organization not found");
    if (retention_ind == soci::i_ok)
      org.batch_retention_seconds = retention;
    return org;
  });
}

expected<acc::organization>
soci_store::set_batch_retention(const std::string& organization_id,
                                std::optional<std::int64_t> seconds) {
  auto changed = run<unit>(false, [&] {
    std::int64_t value = seconds.value_or(0);
    soci::indicator ind = seconds ? soci::i_ok : soci::i_null;
    soci::statement st =
        (sql_.prepare << "UPDATE organizations SET batch_retention_seconds "
                         "= :s WHERE id = :id",
         use(value, ind), use(organization_id));
    st.execute(true);
    if (st.get_affected_rows() == 0)
      refuse(errc::not_found, "organization not found");
    return unit{};
  });
  if (!changed)
    return std::move(changed).error_value();
  return get_organization(organization_id);
}

expected<std::vector<retention_policy>> soci_store::list_retention_policies() {
  return run<std::vector<retention_policy>>(true, [&] {
    retention_policy row;
    std::int64_t seconds = 0;
    soci::indicator ind = soci::i_null;
    soci::statement st = (sql_.prepare << "SELECT id, batch_retention_seconds "
                                          "FROM organizations ORDER BY id",
                          into(row.organization_id), into(seconds, ind));
    st.execute();
    std::vector<retention_policy> out;
    while (st.fetch()) {
      row.batch_retention_seconds = ind == soci::i_ok
                                        ? std::optional<std::int64_t>{seconds}
                                        : std::nullopt;
      out.push_back(row);
    }
    return out;
  });
}

expected<std::vector<acc::organization_summary>>
soci_store::list_organizations() {
  return run<std::vector<acc::organization_summary>>(true, [&] {
    acc::organization_summary row;
    soci::statement st =
        (sql_.prepare << "SELECT o.id, o.name, o.created_at, "
                         "(SELECT COUNT(*) FROM memberships m "
                         " WHERE m.organization_id = o.id), "
                         "COALESCE(c.balance, 0) FROM organizations o "
                         "LEFT JOIN credit_accounts c "
                         "ON c.organization_id = o.id "
                         "ORDER BY o.created_at, o.id",
         into(row.org.id), into(row.org.name), into(row.org.created_at),
         into(row.members), into(row.balance));
    st.execute();
    std::vector<acc::organization_summary> out;
    while (st.fetch())
      out.push_back(row);
    return out;
  });
}

expected<std::vector<acc::member>>
soci_store::list_members(const std::string& organization_id) {
  return run<std::vector<acc::member>>(true, [&] {
    auto rows = select_members(sql_,
                               "WHERE m.organization_id = :o "
                               "ORDER BY u.created_at, u.id",
                               organization_id);
    // Every organization keeps an owner, so no rows means no organization.
    if (rows.empty())
      refuse(errc::not_found, "organization not found");
    return rows;
  });
}

namespace {

// Inside a transaction: locks the organization's memberships (PostgreSQL)
// and returns the target's role and the number of owners.
struct owner_check {
  std::optional<acc::role> target;
  int owners = 0;
};

owner_check check_owners(soci::session& sql, dialect d,
                         const std::string& organization_id,
                         const std::string& user_id) {
  std::string query = "SELECT user_id, role FROM memberships "
                      "WHERE organization_id = :o";
  // SQLite's BEGIN IMMEDIATE already serializes writers.
  if (d == dialect::postgresql)
    query += " FOR UPDATE";
  std::string id;
  std::string role;
  soci::statement st =
      (sql.prepare << query, use(organization_id), into(id), into(role));
  st.execute();
  owner_check out;
  while (st.fetch()) {
    auto r = acc::parse_role(role).value_or(acc::role::member);
    if (r == acc::role::owner)
      ++out.owners;
    if (id == user_id)
      out.target = r;
  }
  return out;
}

} // namespace

expected<unit>
soci_store::update_member_role(const std::string& organization_id,
                               const std::string& user_id, acc::role r) {
  return run<unit>(false, [&] {
    transaction tx{*this};
    auto check = check_owners(sql_, url_.kind, organization_id, user_id);
    if (!check.target)
      refuse(errc::not_found, "member not found");
    if (*check.target == acc::role::owner && r != acc::role::owner &&
        check.owners <= 1)
      refuse(errc::conflict, "organization must keep an owner");
    std::string role{acc::to_string(r)};
    sql_ << "UPDATE memberships SET role = :r "
            "WHERE user_id = :u AND organization_id = :o",
        use(role), use(user_id), use(organization_id);
    notify(change_kind::member, user_id);
    tx.commit();
    return unit{};
  });
}

expected<unit> soci_store::remove_member(const std::string& organization_id,
                                         const std::string& user_id) {
  return run<unit>(false, [&] {
    transaction tx{*this};
    auto check = check_owners(sql_, url_.kind, organization_id, user_id);
    if (!check.target)
      refuse(errc::not_found, "member not found");
    if (*check.target == acc::role::owner && check.owners <= 1)
      refuse(errc::conflict, "organization must keep an owner");
    // Memberships and refresh tokens go with the user (ON DELETE CASCADE).
    sql_ << "DELETE FROM users WHERE id = :u", use(user_id);
    notify(change_kind::member, user_id);
    tx.commit();
    return unit{};
  });
}

expected<organization_erase>
soci_store::erase_organization(const std::string& organization_id) {
  auto erased = run<organization_erase>(false, [&] {
    transaction tx{*this};
    int found = 0;
    sql_ << "SELECT COUNT(*) FROM organizations WHERE id = :o",
        use(organization_id), into(found);
    if (found == 0)
      refuse(errc::not_found, "organization not found");
    auto ids_of = [&](const char* query) {
      std::vector<std::string> out;
      std::string id;
      soci::statement st =
          (sql_.prepare << query, use(organization_id), into(id));
      st.execute();
      while (st.fetch())
        out.push_back(id);
      return out;
    };
    organization_erase out;
    out.key_hashes =
        ids_of("SELECT key_hash FROM api_keys WHERE organization_id = :o");
    out.active_jobs =
        ids_of("SELECT id FROM batch_jobs WHERE organization_id = :o AND "
               "status IN ('queued', 'processing')");
    auto users =
        ids_of("SELECT user_id FROM memberships WHERE organization_id = :o");
    // The rows holding addresses first, whatever the foreign keys say (as
    // delete_batch_job); deliveries name the organization without a key.
    sql_ << "DELETE FROM batch_items WHERE job_id IN (SELECT id FROM "
            "batch_jobs WHERE organization_id = :o)",
        use(organization_id);
    sql_ << "DELETE FROM webhook_deliveries WHERE organization_id = :o",
        use(organization_id);
    // Users are not owned by the organization's row: memberships and
    // refresh tokens go with them (ON DELETE CASCADE).
    sql_ << "DELETE FROM users WHERE id IN (SELECT user_id FROM memberships "
            "WHERE organization_id = :o)",
        use(organization_id);
    // Keys, usage, credits, ledger, jobs, webhooks (and any table added
    // later with ON DELETE CASCADE) go with the organization.
    sql_ << "DELETE FROM organizations WHERE id = :o", use(organization_id);
    for (const auto& h : out.key_hashes)
      notify(change_kind::api_key, h);
    for (const auto& u : users)
      notify(change_kind::member, u);
    for (const auto& j : out.active_jobs)
      notify(change_kind::batch_cancel, j);
    tx.commit();
    return out;
  });
  if (erased)
    after_erase();
  return erased;
}

// -- refresh tokens ---------------------------------------------------------

expected<unit> soci_store::insert_refresh_token(const acc::refresh_token& t) {
  return run<unit>(false, [&] {
    int spent = t.spent ? 1 : 0;
    int revoked = t.revoked ? 1 : 0;
    sql_ << "INSERT INTO refresh_tokens (id, token_hash, family_id, user_id, "
            "organization_id, expires_at, spent, revoked, created_at) "
            "VALUES (:id, :h, :f, :u, :o, :e, :s, :r, :c)",
        use(t.id), use(t.token_hash), use(t.family_id), use(t.user_id),
        use(t.organization_id), use(t.expires_at), use(spent), use(revoked),
        use(t.created_at);
    return unit{};
  });
}

expected<acc::refresh_token>
soci_store::find_refresh_token(const std::string& token_hash) {
  return run<acc::refresh_token>(true, [&] {
    acc::refresh_token t;
    int spent = 0;
    int revoked = 0;
    sql_ << "SELECT id, token_hash, family_id, user_id, organization_id, "
            "expires_at, spent, revoked, created_at FROM refresh_tokens "
            "WHERE token_hash = :h",
        use(token_hash), into(t.id), into(t.token_hash), into(t.family_id),
        into(t.user_id), into(t.organization_id), into(t.expires_at),
        into(spent), into(revoked), into(t.created_at);
    if (!sql_.got_data())
      refuse(errc::not_found, "refresh token not found");
    t.spent = spent != 0;
    t.revoked = revoked != 0;
    return t;
  });
}

expected<bool> soci_store::spend_refresh_token(const std::string& token_id) {
  return run<bool>(false, [&] {
    // The condition makes the update the arbiter: of two concurrent
    // spenders exactly one changes the row.
    soci::statement st =
        (sql_.prepare << "UPDATE refresh_tokens SET spent = 1 "
                         "WHERE id = :id AND spent = 0 AND revoked = 0",
         use(token_id));
    st.execute(true);
    if (st.get_affected_rows() == 1)
      return true;
    int found = 0;
    sql_ << "SELECT COUNT(*) FROM refresh_tokens WHERE id = :id", use(token_id),
        into(found);
    if (found == 0)
      refuse(errc::not_found, "refresh token not found");
    return false;
  });
}

expected<unit> soci_store::revoke_token_family(const std::string& family_id) {
  return run<unit>(false, [&] {
    sql_ << "UPDATE refresh_tokens SET revoked = 1 WHERE family_id = :f",
        use(family_id);
    return unit{};
  });
}

} // namespace mailassay::storage
