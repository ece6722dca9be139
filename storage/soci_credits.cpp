// Credit accounts and the ledger.
// One SQL statement per store operation, written out by design: the
// statements alike in shape (a SELECT over a day range, an UPDATE counting
// the rows it changed) ask different questions of different tables.
#include "storage/soci_store.hpp"

#include <limits>

namespace mailassay::storage {

namespace {

using core::errc;
using soci::into;
using soci::use;

void insert_entry(soci::session& sql, const std::string& organization_id,
                  std::int64_t delta, const std::string& kind,
                  const std::string& reference, std::int64_t balance_after,
                  acc::unix_time now) {
  sql << "INSERT INTO credit_ledger (organization_id, delta, kind, "
         "reference, balance_after, created_at) "
         "VALUES (:o, :d, :k, :r, :b, :t)",
      use(organization_id), use(delta), use(kind), use(reference),
      use(balance_after), use(now);
}

} // namespace

acc::credit_balance
soci_store::read_balance(const std::string& organization_id) {
  acc::credit_balance b;
  b.organization_id = organization_id;
  sql_ << "SELECT balance, consumed, updated_at FROM credit_accounts "
          "WHERE organization_id = :o",
      use(organization_id), into(b.balance), into(b.consumed),
      into(b.updated_at);
  if (!sql_.got_data())
    refuse(errc::not_found, "credit account not found");
  return b;
}

expected<acc::credit_balance>
soci_store::get_balance(const std::string& organization_id) {
  return run<acc::credit_balance>(
      true, [&] { return read_balance(organization_id); });
}

acc::credit_balance
soci_store::credit_account(const std::string& organization_id,
                           std::int64_t amount, std::int64_t consumed,
                           const std::string& kind,
                           const std::string& reference, acc::unix_time now) {
  soci::statement st =
      (sql_.prepare << "UPDATE credit_accounts SET balance = balance + :a, "
                       "consumed = consumed + :c, updated_at = :t "
                       "WHERE organization_id = :o",
       use(amount), use(consumed), use(now), use(organization_id));
  st.execute(true);
  if (st.get_affected_rows() == 0)
    refuse(errc::not_found, "credit account not found");
  auto b = read_balance(organization_id);
  if (amount != 0)
    insert_entry(sql_, organization_id, amount, kind, reference, b.balance,
                 now);
  return b;
}

acc::credit_balance
soci_store::debit_account(const std::string& organization_id,
                          std::int64_t amount, std::int64_t consumed,
                          const std::string& kind, const std::string& reference,
                          acc::unix_time now) {
  // One conditional update: the row lock (PostgreSQL) or the write lock
  // (SQLite) makes the check and the subtraction a single step, so
  // concurrent takers can never overspend.
  soci::statement st =
      (sql_.prepare << "UPDATE credit_accounts SET balance = balance - :a, "
                       "consumed = consumed + :c, updated_at = :t "
                       "WHERE organization_id = :o AND balance >= :a2",
       use(amount), use(consumed), use(now), use(organization_id), use(amount));
  st.execute(true);
  if (st.get_affected_rows() == 0) {
    read_balance(organization_id); // not_found when there is no account
    refuse(errc::insufficient_credits, "not enough credits");
  }
  auto b = read_balance(organization_id);
  insert_entry(sql_, organization_id, -amount, kind, reference, b.balance, now);
  emit_credits_low(organization_id, b.balance + amount, b.balance, now);
  return b;
}

expected<acc::credit_balance>
soci_store::add_credits(const std::string& organization_id, std::int64_t amount,
                        const std::string& kind, const std::string& reference,
                        acc::unix_time now) {
  return run<acc::credit_balance>(false, [&] {
    if (amount <= 0)
      refuse(errc::validation_failed, "amount must be positive");
    transaction tx{*this};
    auto b = credit_account(organization_id, amount, 0, kind, reference, now);
    tx.commit();
    return b;
  });
}

expected<acc::credit_balance>
soci_store::take_credits(const std::string& organization_id,
                         std::int64_t amount, const std::string& kind,
                         const std::string& reference, bool counts_as_consumed,
                         acc::unix_time now) {
  return run<acc::credit_balance>(false, [&] {
    if (amount <= 0)
      refuse(errc::validation_failed, "amount must be positive");
    transaction tx{*this};
    auto b =
        debit_account(organization_id, amount, counts_as_consumed ? amount : 0,
                      kind, reference, now);
    tx.commit();
    return b;
  });
}

expected<acc::credit_balance>
soci_store::refund_credits(const std::string& organization_id,
                           std::int64_t amount, const std::string& kind,
                           const std::string& reference, acc::unix_time now) {
  return run<acc::credit_balance>(false, [&] {
    if (amount <= 0)
      refuse(errc::validation_failed, "amount must be positive");
    transaction tx{*this};
    auto b =
        credit_account(organization_id, amount, -amount, kind, reference, now);
    tx.commit();
    return b;
  });
}

expected<std::vector<acc::credit_entry>>
soci_store::list_credit_entries(const std::string& organization_id,
                                std::int64_t limit, std::int64_t before_id) {
  return run<std::vector<acc::credit_entry>>(true, [&] {
    if (limit <= 0)
      return std::vector<acc::credit_entry>{};
    std::int64_t before =
        before_id > 0 ? before_id : std::numeric_limits<std::int64_t>::max();
    acc::credit_entry e;
    soci::statement st =
        (sql_.prepare << "SELECT id, organization_id, delta, kind, reference, "
                         "balance_after, created_at FROM credit_ledger "
                         "WHERE organization_id = :o AND id < :b "
                         "ORDER BY id DESC LIMIT :l",
         use(organization_id), use(before), use(limit), into(e.id),
         into(e.organization_id), into(e.delta), into(e.kind),
         into(e.reference), into(e.balance_after), into(e.created_at));
    st.execute();
    std::vector<acc::credit_entry> out;
    while (st.fetch())
      out.push_back(e);
    return out;
  });
}

} // namespace mailassay::storage
