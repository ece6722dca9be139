// Batch jobs and their items (the items written in bulk per backend:
// soci_batch_items.cpp).
// One SQL statement per store operation, written out by design: statements
// alike in shape (a SELECT read row by row, an UPDATE counting the rows it
// changed) ask different questions of different tables.
#include "storage/soci_batch_items.hpp"
#include "storage/soci_rows.hpp"
#include "storage/soci_store.hpp"

#include <algorithm>

namespace mailassay::storage {

namespace {

using batch_items::insert_items_postgresql;
using batch_items::insert_items_sqlite;
using batch_items::store_results_postgresql;
using batch_items::store_results_sqlite;
using core::errc;
using core::batch::item;
using core::batch::job;
using core::batch::job_status;
using soci::into;
using soci::use;

// Seqs one paging query covers at least (see page_items).
constexpr std::int64_t window_seqs = 5000;

constexpr const char* job_columns =
    "SELECT id, organization_id, status, file_name, smtp, deduplicate, "
    "email_column, total_rows, unique_emails, duplicates_removed, "
    "invalid_rows, processed, count_valid, count_invalid, count_risky, "
    "count_unknown, credits_reserved, credits_used, created_at, started_at, "
    "finished_at, lease_owner, lease_expires_at, sandbox, restarts, "
    "error_code, error_message, results_erased_at FROM batch_jobs ";

constexpr const char* item_columns =
    "SELECT seq, email, done, status, reason, score, detail, credits "
    "FROM batch_items ";

// A job as its columns: flags as 0/1, nullable times with indicators.
struct job_row {
  job j;
  std::string status;
  int smtp = 0;
  int deduplicate = 0;
  int sandbox = 0;
  std::string error_code;
  std::string error_message;
  std::int64_t started_at = 0;
  std::int64_t finished_at = 0;
  std::int64_t erased_at = 0;
  soci::indicator started_ind = soci::i_null;
  soci::indicator finished_ind = soci::i_null;
  soci::indicator erased_ind = soci::i_null;

  // One `into` per column in `job_columns` order: a column list, written out
  // by design.
  void bind_into(soci::statement& st) {
    st.exchange(into(j.id));
    st.exchange(into(j.organization_id));
    st.exchange(into(status));
    st.exchange(into(j.file_name));
    st.exchange(into(smtp));
    st.exchange(into(deduplicate));
    st.exchange(into(j.email_column));
    st.exchange(into(j.total_rows));
    st.exchange(into(j.unique_emails));
    st.exchange(into(j.duplicates_removed));
    st.exchange(into(j.invalid_rows));
    st.exchange(into(j.processed));
    st.exchange(into(j.counts.valid));
    st.exchange(into(j.counts.invalid));
    st.exchange(into(j.counts.risky));
    st.exchange(into(j.counts.unknown));
    st.exchange(into(j.credits_reserved));
    st.exchange(into(j.credits_used));
    st.exchange(into(j.created_at));
    st.exchange(into(started_at, started_ind));
    st.exchange(into(finished_at, finished_ind));
    st.exchange(into(j.lease_owner));
    st.exchange(into(j.lease_expires_at));
    st.exchange(into(sandbox));
    st.exchange(into(j.restarts));
    st.exchange(into(error_code));
    st.exchange(into(error_message));
    st.exchange(into(erased_at, erased_ind));
  }

  job get() const {
    auto out = j;
    out.status =
        core::batch::parse_job_status(status).value_or(job_status::failed);
    out.smtp = smtp != 0;
    out.deduplicate = deduplicate != 0;
    out.sandbox = sandbox != 0;
    if (!error_code.empty())
      out.error = core::batch::job_error{error_code, error_message};
    out.started_at = started_ind == soci::i_ok
                         ? std::optional<std::int64_t>{started_at}
                         : std::nullopt;
    out.finished_at = finished_ind == soci::i_ok
                          ? std::optional<std::int64_t>{finished_at}
                          : std::nullopt;
    out.results_erased_at = erased_ind == soci::i_ok
                                ? std::optional<std::int64_t>{erased_at}
                                : std::nullopt;
    return out;
  }
};

// Runs `job_columns + tail` with `args` bound in order.
template <class... Args>
std::vector<job> select_jobs(soci::session& sql, const std::string& tail,
                             const Args&... args) {
  return select_rows<job_row>(sql, job_columns, tail, args...);
}

// An item as its columns.
struct item_row {
  item it;
  int done = 0;
  std::string status;

  // One `into` per column in `item_columns` order: a column list, written out
  // by design.
  void bind_into(soci::statement& st) {
    st.exchange(into(it.seq));
    st.exchange(into(it.email));
    st.exchange(into(done));
    st.exchange(into(status));
    st.exchange(into(it.reason));
    st.exchange(into(it.score));
    st.exchange(into(it.detail));
    st.exchange(into(it.credits));
  }

  item get() const {
    auto out = it;
    out.done = done != 0;
    out.status = core::validation::parse_status(status).value_or(
        core::validation::status::unknown);
    return out;
  }
};

// Returns up to `limit` items with seq > after_seq matching `filter` (SQL
// after the seq bounds, its parameters bound by `bind_filter`), ascending.
// Each query reads one window of seqs: PostgreSQL has no statistics for a
// job created since its last ANALYZE and then plans a bitmap scan plus sort
// of everything after `after_seq`, per page; a window bounds that work.
template <class BindFilter>
std::vector<item> page_items(soci::session& sql, const std::string& job_id,
                             std::int64_t after_seq, std::int64_t limit,
                             const std::string& filter,
                             BindFilter bind_filter) {
  std::vector<item> out;
  if (limit <= 0)
    return out;
  std::int64_t last = 0;
  soci::indicator last_ind = soci::i_null;
  sql << "SELECT MAX(seq) FROM batch_items WHERE job_id = :j", use(job_id),
      into(last, last_ind);
  if (last_ind != soci::i_ok)
    return out;
  const std::int64_t window = std::max<std::int64_t>(limit, window_seqs);
  // Seqs start at 0; the clamp also keeps `last - low` from overflowing.
  std::int64_t low = std::max<std::int64_t>(after_seq, -1);
  std::int64_t high = 0;
  std::int64_t want = 0;
  item_row row;
  soci::statement st(sql);
  row.bind_into(st);
  st.exchange(use(job_id));
  st.exchange(use(low));
  st.exchange(use(high));
  bind_filter(st);
  st.exchange(use(want));
  st.alloc();
  st.prepare(std::string{item_columns} +
             "WHERE job_id = :j AND seq > :lo AND seq <= :hi" + filter +
             " ORDER BY seq LIMIT :l");
  st.define_and_bind();
  while (static_cast<std::int64_t>(out.size()) < limit && low < last) {
    high = last - low > window ? low + window : last;
    want = limit - static_cast<std::int64_t>(out.size());
    st.execute();
    while (st.fetch())
      out.push_back(row.get());
    low = high;
  }
  return out;
}

} // namespace

job soci_store::load_batch_job(const std::string* organization_id,
                               const std::string& job_id, bool lock) {
  // SQLite's BEGIN IMMEDIATE already serializes writers.
  std::string lock_clause =
      lock && url_.kind == dialect::postgresql ? " FOR UPDATE" : "";
  auto rows =
      organization_id != nullptr
          ? select_jobs(sql_,
                        "WHERE organization_id = :o AND id = :id" + lock_clause,
                        *organization_id, job_id)
          : select_jobs(sql_, "WHERE id = :id" + lock_clause, job_id);
  if (rows.empty())
    refuse(errc::not_found, "batch job not found");
  return rows.front();
}

job soci_store::close_batch_job(const job& j, job_status final_status,
                                std::int64_t now) {
  std::string status{core::batch::to_string(final_status)};
  sql_ << "UPDATE batch_jobs SET status = :s, finished_at = :f, "
          "lease_owner = '', lease_expires_at = 0 WHERE id = :id",
      use(status), use(now), use(j.id);
  // The outbox row commits or rolls back with the end it reports. A
  // sandbox job (a test key) sends none: test keys cause no network
  // traffic (docs/webhooks.md, "Sandbox jobs").
  if (!j.sandbox)
    emit_webhook_event(j.organization_id,
                       *core::webhooks::batch_end_event(final_status), j.id,
                       now);
  // The reservation was taken from the balance without counting as
  // consumed; now the used part counts and the rest goes back.
  std::int64_t used = std::min(j.credits_used, j.credits_reserved);
  std::int64_t refund = j.credits_reserved - used;
  if (refund > 0 || used > 0)
    credit_account(j.organization_id, refund, used, "batch_refund", j.id, now);
  return load_batch_job(nullptr, j.id, false);
}

expected<unit> soci_store::create_batch_job(const job& j,
                                            const std::vector<item>& items) {
  return run<unit>(false, [&] {
    if (j.credits_reserved < 0)
      refuse(errc::validation_failed, "credits reserved must not be negative");
    transaction tx{*this};
    int smtp = j.smtp ? 1 : 0;
    int deduplicate = j.deduplicate ? 1 : 0;
    int sandbox = j.sandbox ? 1 : 0;
    try {
      sql_ << "INSERT INTO batch_jobs (id, organization_id, status, "
              "file_name, smtp, deduplicate, email_column, total_rows, "
              "unique_emails, duplicates_removed, invalid_rows, processed, "
              "count_valid, count_invalid, count_risky, count_unknown, "
              "credits_reserved, credits_used, created_at, sandbox) VALUES "
              "(:id, :o, 'queued', :f, :sm, :dd, :ec, :tr, :ue, :dr, :ir, :p, "
              ":cv, :ci, :cr, :cu, :res, :used, :c, :sb)",
          use(j.id), use(j.organization_id), use(j.file_name), use(smtp),
          use(deduplicate), use(j.email_column), use(j.total_rows),
          use(j.unique_emails), use(j.duplicates_removed), use(j.invalid_rows),
          use(j.processed), use(j.counts.valid), use(j.counts.invalid),
          use(j.counts.risky), use(j.counts.unknown), use(j.credits_reserved),
          use(j.credits_used), use(j.created_at), use(sandbox);
    } catch (const std::exception& e) {
      // Another active job of the organization (batch_jobs_one_active).
      if (is_unique_violation(e, "batch_jobs_one_active",
                              "batch_jobs.organization_id"))
        refuse(errc::active_job_exists,
               "A batch job is already running for this organization");
      throw;
    }
    if (j.credits_reserved > 0)
      debit_account(j.organization_id, j.credits_reserved, 0, "batch_reserve",
                    j.id, j.created_at);
    if (url_.kind == dialect::sqlite)
      insert_items_sqlite(sql_, j.id, items);
    else
      insert_items_postgresql(sql_, j.id, items);
    tx.commit();
    return unit{};
  });
}

expected<job> soci_store::get_batch_job(const std::string& organization_id,
                                        const std::string& job_id) {
  return run<job>(
      true, [&] { return load_batch_job(&organization_id, job_id, false); });
}

expected<std::vector<job>>
soci_store::list_batch_jobs(const std::string& organization_id,
                            std::int64_t limit, std::optional<bool> sandbox) {
  return run<std::vector<job>>(true, [&] {
    if (limit <= 0)
      return std::vector<job>{};
    if (sandbox)
      return select_jobs(sql_,
                         "WHERE organization_id = :o AND sandbox = :s "
                         "ORDER BY created_at DESC, id DESC LIMIT :l",
                         organization_id, *sandbox ? 1 : 0, limit);
    return select_jobs(sql_,
                       "WHERE organization_id = :o "
                       "ORDER BY created_at DESC, id DESC LIMIT :l",
                       organization_id, limit);
  });
}

expected<job> soci_store::cancel_batch_job(const std::string& organization_id,
                                           const std::string& job_id,
                                           std::int64_t now) {
  return run<job>(false, [&] {
    transaction tx{*this};
    auto j = load_batch_job(&organization_id, job_id, true);
    if (!core::batch::is_active(j.status))
      refuse(errc::conflict, "batch job is no longer active");
    auto out = close_batch_job(j, job_status::cancelled, time_of(now));
    notify(change_kind::batch_cancel, job_id);
    tx.commit();
    return out;
  });
}

expected<job> soci_store::delete_batch_job(const std::string& organization_id,
                                           const std::string& job_id,
                                           std::int64_t now) {
  auto erased = run<job>(false, [&] {
    transaction tx{*this};
    auto j = load_batch_job(&organization_id, job_id, true);
    if (core::batch::is_active(j.status)) {
      // Settled first, so the ledger keeps the refund of an erased job.
      j = close_batch_job(j, job_status::cancelled, time_of(now));
      notify(change_kind::batch_cancel, job_id);
    }
    // Items first: the rows of the upload, whatever the foreign keys say.
    sql_ << "DELETE FROM batch_items WHERE job_id = :id", use(job_id);
    sql_ << "DELETE FROM batch_jobs WHERE id = :id", use(job_id);
    tx.commit();
    return j;
  });
  if (erased)
    after_erase();
  return erased;
}

std::int64_t
soci_store::erase_due_batch_jobs(const std::string& organization_id,
                                 std::int64_t cutoff, std::int64_t now,
                                 std::int64_t limit) {
  // Read first, outside a transaction: most ticks find nothing due and
  // then take no write lock (SQLite) at all.
  std::vector<std::string> due;
  {
    std::string id;
    soci::statement st =
        (sql_.prepare << "SELECT id FROM batch_jobs WHERE organization_id = "
                         ":o AND results_erased_at IS NULL AND status IN "
                         "('completed', 'failed', 'cancelled') AND "
                         "finished_at <= :c ORDER BY finished_at, id LIMIT :l",
         use(organization_id), use(cutoff), use(limit), into(id));
    st.execute();
    while (st.fetch())
      due.push_back(id);
  }
  if (due.empty())
    return 0;
  transaction tx{*this};
  auto at = time_of(now);
  std::string id;
  // The claim: a job another process erased first (committed, or holding
  // the row until it commits) has no row left to update here.
  soci::statement claim =
      (sql_.prepare << "UPDATE batch_jobs SET results_erased_at = :n "
                       "WHERE id = :id AND results_erased_at IS NULL",
       use(at), use(id));
  soci::statement wipe =
      (sql_.prepare << "DELETE FROM batch_items WHERE job_id = :id", use(id));
  std::int64_t count = 0;
  for (const auto& job_id : due) {
    id = job_id;
    claim.execute(true);
    if (claim.get_affected_rows() == 0)
      continue;
    wipe.execute(true);
    ++count;
  }
  tx.commit();
  return count;
}

expected<std::int64_t>
soci_store::erase_expired_batch_results(const std::string& organization_id,
                                        std::int64_t cutoff, std::int64_t now,
                                        std::int64_t limit) {
  long long audit_rows = 0;
  auto erased = run<std::int64_t>(false, [&] {
    auto jobs = erase_due_batch_jobs(organization_id, cutoff, now, limit);
    // The organization's audit entries follow its retention too.
    soci::statement st =
        (sql_.prepare << "DELETE FROM audit_log WHERE organization_id = :o "
                         "AND at <= :c",
         use(organization_id), use(cutoff));
    st.execute(true);
    audit_rows = st.get_affected_rows();
    return jobs;
  });
  if (erased && (*erased > 0 || audit_rows > 0))
    after_erase();
  return erased;
}

expected<std::optional<job>>
soci_store::claim_batch_job(const std::string& owner,
                            std::int64_t lease_seconds, std::int64_t now,
                            std::int64_t max_restarts) {
  return run<std::optional<job>>(false, [&] {
    transaction tx{*this};
    // Read inside the transaction: on PostgreSQL the clock of its start,
    // the same for the comparison and the new lease.
    auto at = time_of(now);
    std::string query =
        "SELECT id, status, lease_owner FROM batch_jobs WHERE status = "
        "'queued' OR (status = 'processing' AND lease_expires_at < :n) "
        "ORDER BY created_at, id LIMIT 1";
    // Another process's claim in progress is skipped, not waited for; SQLite
    // serializes claimers by its write lock instead.
    if (url_.kind == dialect::postgresql)
      query += " FOR UPDATE SKIP LOCKED";
    std::string id;
    std::string status;
    std::string previous_owner;
    sql_ << query, use(at), into(id), into(status), into(previous_owner);
    if (!sql_.got_data())
      return std::optional<job>{};
    // A lease that ran out while still held means its owner died (a clean
    // stop hands the lease back with the owner cleared).
    if (status == "processing" && !previous_owner.empty()) {
      sql_ << "UPDATE batch_jobs SET restarts = restarts + 1 WHERE id = :id",
          use(id);
      auto j = load_batch_job(nullptr, id, false);
      if (core::batch::restarts_exhausted(j.restarts, max_restarts)) {
        // Started again it would most likely take its next process down
        // too: it ends here, with its refund and batch.failed, in this
        // transaction.
        auto error = core::batch::kept_stopping_error(j.restarts);
        sql_ << "UPDATE batch_jobs SET error_code = :c, error_message = :m "
                "WHERE id = :id",
            use(error.code), use(error.message), use(id);
        auto out = close_batch_job(j, job_status::failed, at);
        tx.commit();
        return std::optional<job>{std::move(out)};
      }
    }
    std::int64_t expires = at + lease_seconds;
    sql_ << "UPDATE batch_jobs SET status = 'processing', lease_owner = :o, "
            "lease_expires_at = :e, started_at = COALESCE(started_at, :n) "
            "WHERE id = :id",
        use(owner), use(expires), use(at), use(id);
    auto j = load_batch_job(nullptr, id, false);
    tx.commit();
    return std::optional<job>{std::move(j)};
  });
}

expected<bool> soci_store::renew_batch_lease(const std::string& job_id,
                                             const std::string& owner,
                                             std::int64_t lease_seconds,
                                             std::int64_t now) {
  return run<bool>(false, [&] {
    std::int64_t expires = time_of(now) + lease_seconds;
    // A zero lease hands the job back: the owner is cleared too, so the
    // next claim knows nobody died holding it.
    std::string next_owner = lease_seconds > 0 ? owner : std::string{};
    soci::statement st =
        (sql_.prepare << "UPDATE batch_jobs SET lease_expires_at = :e, "
                         "lease_owner = :n WHERE id = :id AND "
                         "status = 'processing' AND lease_owner = :o",
         use(expires), use(next_owner), use(job_id), use(owner));
    st.execute(true);
    return st.get_affected_rows() > 0;
  });
}

expected<std::vector<item>>
soci_store::pending_batch_items(const std::string& job_id,
                                std::int64_t after_seq, std::int64_t limit) {
  return run<std::vector<item>>(true, [&] {
    return page_items(sql_, job_id, after_seq, limit, " AND done = 0",
                      [](soci::statement&) {});
  });
}

expected<job> soci_store::save_batch_results(const std::string& job_id,
                                             const std::string& owner,
                                             const std::vector<item>& done,
                                             std::int64_t lease_seconds,
                                             std::int64_t now) {
  return run<job>(false, [&] {
    for (const auto& it : done) {
      if (!it.done)
        refuse(errc::validation_failed,
               "item " + std::to_string(it.seq) + " has no result");
      if (it.credits < 0)
        refuse(errc::validation_failed, "item credits must not be negative");
    }
    transaction tx{*this};
    auto j = load_batch_job(nullptr, job_id, true);
    if (j.status != job_status::processing || j.lease_owner != owner)
      refuse(errc::conflict, "batch job is not processing for this owner");
    auto t = url_.kind == dialect::sqlite
                 ? store_results_sqlite(sql_, job_id, done)
                 : store_results_postgresql(sql_, job_id, done);
    std::int64_t expires = time_of(now) + lease_seconds;
    // Progress: the restarts before it were not the job's fault.
    std::string reset = t.processed > 0 ? "restarts = 0, " : "";
    sql_ << "UPDATE batch_jobs SET " + reset +
                "processed = processed + :p, "
                "count_valid = count_valid + :v, "
                "count_invalid = count_invalid + :i, "
                "count_risky = count_risky + :r, "
                "count_unknown = count_unknown + :u, "
                "credits_used = credits_used + :c, lease_expires_at = :e "
                "WHERE id = :id",
        use(t.processed), use(t.counts.valid), use(t.counts.invalid),
        use(t.counts.risky), use(t.counts.unknown), use(t.credits),
        use(expires), use(job_id);
    auto out = load_batch_job(nullptr, job_id, false);
    tx.commit();
    return out;
  });
}

expected<job> soci_store::finish_batch_job(const std::string& job_id,
                                           const std::string& owner,
                                           job_status final_status,
                                           std::int64_t now) {
  return run<job>(false, [&] {
    if (final_status != job_status::completed &&
        final_status != job_status::failed)
      refuse(errc::validation_failed,
             "a batch job finishes as completed or failed");
    transaction tx{*this};
    auto j = load_batch_job(nullptr, job_id, true);
    if (j.status != job_status::processing || j.lease_owner != owner)
      refuse(errc::conflict, "batch job is not processing for this owner");
    auto out = close_batch_job(j, final_status, time_of(now));
    tx.commit();
    return out;
  });
}

expected<std::vector<item>>
soci_store::batch_items(const std::string& job_id, std::int64_t after_seq,
                        std::int64_t limit, bool done_only,
                        const std::vector<core::validation::status>& statuses) {
  return run<std::vector<item>>(true, [&] {
    std::string filter;
    std::vector<std::string> names;
    for (auto status : statuses)
      names.emplace_back(core::validation::to_string(status));
    if (done_only || !statuses.empty())
      filter += " AND done = 1";
    if (!statuses.empty()) {
      filter += " AND status IN (";
      for (std::size_t i = 0; i < statuses.size(); ++i)
        filter += (i == 0 ? ":s" : ", :s") + std::to_string(i);
      filter += ")";
    }
    return page_items(sql_, job_id, after_seq, limit, filter,
                      [&](soci::statement& st) {
                        for (const auto& name : names)
                          st.exchange(use(name));
                      });
  });
}

} // namespace mailassay::storage
