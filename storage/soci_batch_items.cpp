// Batch items written in bulk: new items when a job is created, results at
// each checkpoint, one way per backend (SOCI binds whole columns on SQLite;
// on PostgreSQL it would run a bulk statement once per row).
#include "storage/soci_batch_items.hpp"

#include <algorithm>
#include <span>

namespace mailassay::storage::batch_items {

namespace {

using core::batch::item;
using soci::into;
using soci::use;

// Rows per statement when writing items: big enough that the per-statement
// cost vanishes, small enough to keep the bound buffers modest.
constexpr std::size_t chunk_rows = 5000;

// -- PostgreSQL: a chunk of rows per round trip, as arrays -----------------

// SOCI 4.0 runs a bulk-bound statement once per row on PostgreSQL (a round
// trip each), so whole columns travel as array literals and unnest() turns
// them back into rows.
using item_refs = std::span<const item* const>;

template <class Project>
std::string text_array(item_refs items, Project field) {
  std::string out = "{";
  for (const item* it : items) {
    if (out.size() > 1)
      out += ',';
    out += '"';
    for (char c : field(*it)) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

template <class Project>
std::string number_array(item_refs items, Project field) {
  std::string out = "{";
  for (const item* it : items) {
    if (out.size() > 1)
      out += ',';
    out += std::to_string(field(*it));
  }
  out += '}';
  return out;
}

const std::string& email_of(const item& it) {
  return it.email;
}
std::string_view status_of(const item& it) {
  return core::batch::status_text(it);
}
const std::string& reason_of(const item& it) {
  return it.reason;
}
const std::string& detail_of(const item& it) {
  return it.detail;
}
long long seq_of(const item& it) {
  return it.seq;
}
long long score_of(const item& it) {
  return it.score;
}
long long credits_of(const item& it) {
  return it.credits;
}

// Calls `f` with consecutive chunks of at most `chunk_rows` items.
template <class F>
void for_each_chunk(const std::vector<const item*>& items, F f) {
  for (std::size_t begin = 0; begin < items.size(); begin += chunk_rows)
    f(item_refs{items}.subspan(begin,
                               std::min(chunk_rows, items.size() - begin)));
}

// The result columns of a chunk of items as PostgreSQL array literals, for
// unnest(): what storing finished items sends, on insert and on checkpoint.
struct result_arrays {
  std::string statuses, reasons, scores, details, credits;

  void fill(item_refs part) {
    statuses = text_array(part, status_of);
    reasons = text_array(part, reason_of);
    scores = number_array(part, score_of);
    details = text_array(part, detail_of);
    credits = number_array(part, credits_of);
  }
};

} // namespace

// -- SQLite: one prepared statement, rows bound in bulk ----------------------

void insert_items_sqlite(soci::session& sql, const std::string& job_id,
                         const std::vector<item>& items) {
  std::vector<std::string> ids, emails, statuses, reasons, details;
  std::vector<long long> seqs, credits;
  std::vector<int> done, scores;
  soci::statement st =
      (sql.prepare << "INSERT INTO batch_items (job_id, seq, email, done, "
                      "status, reason, score, detail, credits) "
                      "VALUES (:j, :s, :e, :d, :st, :r, :sc, :de, :c)",
       use(ids), use(seqs), use(emails), use(done), use(statuses), use(reasons),
       use(scores), use(details), use(credits));
  for (std::size_t begin = 0; begin < items.size(); begin += chunk_rows) {
    auto part = std::span{items}.subspan(
        begin, std::min(chunk_rows, items.size() - begin));
    ids.assign(part.size(), job_id);
    seqs.clear();
    emails.clear();
    done.clear();
    statuses.clear();
    reasons.clear();
    scores.clear();
    details.clear();
    credits.clear();
    for (const auto& it : part) {
      seqs.push_back(it.seq);
      emails.push_back(it.email);
      done.push_back(it.done ? 1 : 0);
      statuses.emplace_back(core::batch::status_text(it));
      reasons.push_back(it.reason);
      scores.push_back(it.score);
      details.push_back(it.detail);
      credits.push_back(it.credits);
    }
    st.execute(true);
  }
}

tally store_results_sqlite(soci::session& sql, const std::string& job_id,
                           const std::vector<item>& results) {
  item cur;
  std::string status;
  // `done = 0` skips items stored by an earlier try of this checkpoint, and
  // the affected-row count says which items are new.
  soci::statement st =
      (sql.prepare << "UPDATE batch_items SET done = 1, status = :st, "
                      "reason = :r, score = :sc, detail = :de, credits = :c "
                      "WHERE job_id = :j AND seq = :s AND done = 0",
       use(status), use(cur.reason), use(cur.score), use(cur.detail),
       use(cur.credits), use(job_id), use(cur.seq));
  tally out;
  for (const auto& it : results) {
    cur = it;
    status = core::validation::to_string(it.status);
    st.execute(true);
    if (st.get_affected_rows() > 0)
      out.add(it.status, it.credits);
  }
  return out;
}

void insert_items_postgresql(soci::session& sql, const std::string& job_id,
                             const std::vector<item>& items) {
  // Nearly every item starts pending with default result columns: those
  // send two arrays instead of eight (parsing them is most of the work).
  std::vector<const item*> pending, done;
  for (const auto& it : items)
    (it.done ? done : pending).push_back(&it);
  std::string seqs, emails;
  result_arrays r;
  if (!pending.empty()) {
    soci::statement st =
        (sql.prepare << "INSERT INTO batch_items (job_id, seq, email) "
                        "SELECT CAST(:j AS TEXT), u.seq, u.email FROM unnest("
                        "CAST(:s AS BIGINT[]), CAST(:e AS TEXT[])) "
                        "AS u (seq, email)",
         use(job_id), use(seqs), use(emails));
    for_each_chunk(pending, [&](item_refs part) {
      seqs = number_array(part, seq_of);
      emails = text_array(part, email_of);
      st.execute(true);
    });
  }
  if (!done.empty()) {
    soci::statement st =
        (sql.prepare << "INSERT INTO batch_items (job_id, seq, email, done, "
                        "status, reason, score, detail, credits) "
                        "SELECT CAST(:j AS TEXT), u.seq, u.email, 1, "
                        "u.status, u.reason, u.score, u.detail, u.credits "
                        "FROM unnest(CAST(:s AS BIGINT[]), "
                        "CAST(:e AS TEXT[]), CAST(:st AS TEXT[]), "
                        "CAST(:r AS TEXT[]), CAST(:sc AS INTEGER[]), "
                        "CAST(:de AS TEXT[]), CAST(:c AS BIGINT[])) "
                        "AS u (seq, email, status, reason, score, detail, "
                        "credits)",
         use(job_id), use(seqs), use(emails), use(r.statuses), use(r.reasons),
         use(r.scores), use(r.details), use(r.credits));
    for_each_chunk(done, [&](item_refs part) {
      seqs = number_array(part, seq_of);
      emails = text_array(part, email_of);
      r.fill(part);
      st.execute(true);
    });
  }
}

tally store_results_postgresql(soci::session& sql, const std::string& job_id,
                               const std::vector<item>& results) {
  std::vector<const item*> refs;
  refs.reserve(results.size());
  for (const auto& it : results)
    refs.push_back(&it);
  std::string seqs;
  result_arrays r;
  std::int64_t low = 0, high = 0;
  std::string stored_status;
  std::int64_t stored_credits = 0;
  // `done = 0` skips items stored by an earlier try of this checkpoint;
  // RETURNING lists the rows that changed, as stored. The seq bounds keep
  // the scan of the job's rows to the chunk's range (see page_items).
  soci::statement st =
      (sql.prepare << "UPDATE batch_items AS b SET done = 1, "
                      "status = u.status, reason = u.reason, "
                      "score = u.score, detail = u.detail, "
                      "credits = u.credits FROM unnest("
                      "CAST(:s AS BIGINT[]), CAST(:st AS TEXT[]), "
                      "CAST(:r AS TEXT[]), CAST(:sc AS INTEGER[]), "
                      "CAST(:de AS TEXT[]), CAST(:c AS BIGINT[])) "
                      "AS u (seq, status, reason, score, detail, credits) "
                      "WHERE b.job_id = :j AND b.seq >= :lo AND b.seq <= :hi "
                      "AND b.seq = u.seq AND b.done = 0 "
                      "RETURNING b.status, b.credits",
       use(seqs), use(r.statuses), use(r.reasons), use(r.scores),
       use(r.details), use(r.credits), use(job_id), use(low), use(high),
       into(stored_status), into(stored_credits));
  tally out;
  for_each_chunk(refs, [&](item_refs part) {
    seqs = number_array(part, seq_of);
    r.fill(part);
    auto [first, last] = std::minmax_element(
        part.begin(), part.end(),
        [](const item* a, const item* b) { return a->seq < b->seq; });
    low = (*first)->seq;
    high = (*last)->seq;
    st.execute();
    while (st.fetch())
      out.add(core::validation::parse_status(stored_status)
                  .value_or(core::validation::status::unknown),
              stored_credits);
  });
  return out;
}

} // namespace mailassay::storage::batch_items
