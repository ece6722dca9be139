#include "core/batch/intake.hpp"
#include "http/codec/batch_job.hpp"
#include "http/codec/batch_results.hpp"
#include "http/codec/batch_upload.hpp"
#include "http/handler_support.hpp"
#include "security/random.hpp"

#include <malloc.h>

namespace mailassay::http {

namespace uc = actors::accounts;
using core::batch::job;
using core::batch::job_status;

namespace {

// Reads a job of the caller's organization, then runs `f(env, job)`.
template <class F>
void with_job(call c, F f) {
  auto id = c.req().params.at("jobId");
  with_principal(c, false,
                 [c, id, f = std::move(f)](uc::account_env& env,
                                           const uc::principal& who) {
                   auto j = env.db.get_batch_job(who.organization_id(), id);
                   if (!j)
                     return c.ex->fail(j.error_value());
                   f(env, *j);
                 });
}

// The results of one export, streamed a page at a time: a page is read on a
// storage worker only after the previous one was written to the socket, so
// an export holds one page in memory whatever the job's size.
//
//   read page --> encode --> write chunk --written--> read next page ...
//        \--short page--> write last chunk + end of body
//        \--storage error--> close the connection (the head is sent)
struct results_export : std::enable_shared_from_this<results_export> {
  // Rows per page (~100 bytes each in the export).
  static constexpr std::size_t page_rows = 2000;

  services* svc = nullptr;
  body_stream_ptr out;
  std::string job_id;
  codec::results_query query;
  std::int64_t after = -1; // seq of the last row read
  bool first = true;       // no row written yet (JSON separators)

  // Done rows only: a running job exports what is finished so far.
  core::expected<std::vector<core::batch::item>> read(storage::store& db) {
    auto page = db.batch_items(job_id, after, page_rows, true, query.statuses);
    if (page && !page->empty())
      after = page->back().seq;
    return page;
  }

  // Writes `prefix` and the rows of `page`; then reads the next page, or
  // ends the body after a short one.
  void send(std::string prefix, const std::vector<core::batch::item>& page) {
    auto chunk = std::move(prefix);
    for (auto& it : page) {
      codec::append_result(chunk, it, query.csv, first);
      first = false;
    }
    if (page.size() < page_rows) {
      codec::append_results_tail(chunk, query.csv);
      return out->finish(std::move(chunk));
    }
    out->write(std::move(chunk), [self = shared_from_this()](bool ok) {
      if (!ok)
        return self->out->abort(core::make_error(
            core::errc::unavailable, "the client connection failed"));
      self->next();
    });
  }

  void next() {
    svc->storage.submit({[self = shared_from_this()](actors::job_context& ctx) {
      if (!ctx.db)
        return self->out->abort(ctx.open_error);
      auto page = self->read(*ctx.db);
      if (!page)
        return self->out->abort(page.error_value());
      self->send({}, *page);
    }});
  }
};

} // namespace

void handle_batch_upload(call c) {
  // The server's body gate refuses larger bodies while they arrive (the
  // file's limit plus room for a multipart envelope); the file itself is
  // measured once the body is read.
  if (static_cast<std::int64_t>(c.req().body.size()) >
      c.svc->cfg.batch.max_file_bytes + multipart_allowance)
    return c.ex->fail(file_too_large(*c.svc));
  with_principal(c, false, [c](uc::account_env& env, const uc::principal& who) {
    auto in = codec::batch_upload(c.req(), c.svc->cfg.batch.max_file_bytes);
    if (!in) {
      if (in.error_value().code == core::errc::payload_too_large)
        return c.ex->fail(file_too_large(*c.svc));
      return c.ex->fail(in.error_value());
    }
    if (in->smtp && who.key && !who.key->config.smtp)
      return c.ex->fail(core::make_error(
          core::errc::forbidden,
          "SMTP verification is not enabled for this API key (config.smtp)"));
    core::batch::intake_options opts;
    opts.deduplicate = in->deduplicate;
    opts.email_column = in->email_column;
    opts.max_addresses =
        static_cast<std::size_t>(c.svc->cfg.batch.max_addresses);
    opts.syntax = c.svc->syntax;
    auto read = core::batch::read_csv(in->csv, opts);
    if (!read)
      return c.ex->fail(read.error_value());
    job j;
    j.id = "job_" + security::random_base62(20);
    j.organization_id = who.organization_id();
    j.status = job_status::queued;
    j.file_name = in->file_name;
    j.smtp = in->smtp;
    j.deduplicate = in->deduplicate;
    // A test key's job runs in the sandbox: nothing to reserve.
    j.sandbox = who.sandbox();
    core::batch::fill_job(j, *read);
    j.processed = read->invalid_rows;
    j.counts.invalid = read->invalid_rows;
    j.credits_reserved = in->smtp && !j.sandbox ? read->unique_emails : 0;
    j.created_at = env.now;
    auto stored = env.db.create_batch_job(j, read->items);
    if (!stored) {
      auto e = stored.error_value();
      // The spec's message (the ledger says it in its own words).
      if (e.code == core::errc::insufficient_credits)
        e.message = "Insufficient credits for SMTP validation";
      return c.ex->fail(e);
    }
    if (c.svc->batches)
      c.svc->batches->wake();
    // An upload briefly holds ~100 MB on this worker; give it back to the
    // system rather than keep each worker's high-water mark (glibc arenas).
    read = core::batch::intake_result{};
    malloc_trim(0);
    c.ex->json(201, codec::text_of(codec::job_record(j, env.now)));
  });
}

void handle_list_batches(call c) {
  with_principal(c, false, [c](uc::account_env& env, const uc::principal& who) {
    auto jobs = env.db.list_batch_jobs(who.organization_id(), 100);
    if (!jobs)
      return c.ex->fail(jobs.error_value());
    c.ex->json(200, codec::text_of(codec::job_list(*jobs, env.now)));
  });
}

void handle_get_batch(call c) {
  with_job(c, [c](uc::account_env& env, const job& j) {
    c.ex->json(200, codec::text_of(codec::job_record(j, env.now)));
  });
}

void handle_cancel_batch(call c) {
  auto id = c.req().params.at("jobId");
  with_principal(
      c, false, [c, id](uc::account_env& env, const uc::principal& who) {
        auto j = env.db.cancel_batch_job(who.organization_id(), id,
                                         storage::database_clock);
        if (!j) {
          auto e = j.error_value();
          if (e.code == core::errc::conflict)
            e.message = "The batch job is no longer active";
          return c.ex->fail(e);
        }
        if (c.svc->batches)
          c.svc->batches->cancelled(id);
        c.ex->json(200, codec::text_of(codec::job_record(*j, env.now)));
      });
}

void handle_batch_results(call c) {
  auto query = codec::batch_results_query(c.req());
  with_job(c, [c, query](uc::account_env& env, const job& j) {
    if (!query)
      return c.ex->fail(query.error_value());
    auto x = std::make_shared<results_export>();
    x->svc = c.svc;
    x->job_id = j.id;
    x->query = *query;
    // The first page is read before the head is sent, so a storage error
    // still gets its status and error body.
    auto page = x->read(env.db);
    if (!page)
      return c.ex->fail(page.error_value());
    auto name = j.id + "-results." + query->format;
    x->out = c.ex->stream(response{
        200,
        {},
        query->csv ? "text/csv; charset=utf-8" : "application/json",
        {{"Content-Disposition", "attachment; filename=\"" + name + "\""}}});
    if (!x->out)
      return;
    std::string head;
    codec::append_results_head(head, j, query->csv);
    x->send(std::move(head), *page);
  });
}

} // namespace mailassay::http
