// /v2/batch (docs/batch.md): uploads, the job list, one job, cancels, and
// the results export streamed a page at a time.
#include "http/admission.hpp"
#include "http/codec/batch_job.hpp"
#include "http/codec/batch_results.hpp"
#include "http/codec/batch_upload.hpp"
#include "http/handler_support.hpp"
#include "use_cases/accounts/batches.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;
using core::batch::job;

namespace {

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

  // `prefix` and the rows of `page`, and whether the body ends with them
  // (a short page is the last).
  std::pair<std::string, bool>
  encode(std::string prefix, const std::vector<core::batch::item>& page) {
    auto chunk = std::move(prefix);
    for (auto& it : page) {
      codec::append_result(chunk, it, query.csv, first);
      first = false;
    }
    bool last = page.size() < page_rows;
    if (last)
      codec::append_results_tail(chunk, query.csv);
    return {std::move(chunk), last};
  }

  // Writes an encoded chunk; then reads the next page, or ends the body.
  void emit(std::string chunk, bool last) {
    if (last)
      return out->finish(std::move(chunk));
    out->write(std::move(chunk), [self = shared_from_this()](bool ok) {
      if (!ok)
        return self->out->abort(core::make_error(
            core::errc::unavailable, "the client connection failed"));
      self->next();
    });
  }

  // Writes `prefix` and the rows of `page`; then reads the next page, or
  // ends the body after a short one.
  void send(std::string prefix, const std::vector<core::batch::item>& page) {
    auto [chunk, last] = encode(std::move(prefix), page);
    emit(std::move(chunk), last);
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
    auto j = uc::create_batch_job(env, who, *in, c.svc->syntax);
    if (j && c.svc->batches)
      c.svc->batches->wake();
    reply(c, j, 201,
          [&](const job& j) { return codec::job_record(j, env.now); });
  });
}

void handle_list_batches(call c) {
  with_principal(c, false, [c](uc::account_env& env, const uc::principal& who) {
    reply(c, uc::list_batch_jobs(env, who), 200,
          [&](const auto& jobs) { return codec::job_list(jobs, env.now); });
  });
}

void handle_get_batch(call c) {
  auto id = c.req().params.at("jobId");
  with_principal(
      c, false, [c, id](uc::account_env& env, const uc::principal& who) {
        reply(c, uc::get_batch_job(env, who, id), 200,
              [&](const job& j) { return codec::job_record(j, env.now); });
      });
}

void handle_cancel_batch(call c) {
  auto id = c.req().params.at("jobId");
  with_principal(
      c, false, [c, id](uc::account_env& env, const uc::principal& who) {
        auto j = uc::cancel_batch_job(env, who, id);
        if (j && c.svc->batches)
          c.svc->batches->cancelled(id);
        reply(c, j, 200,
              [&](const job& j) { return codec::job_record(j, env.now); });
      });
}

void handle_delete_batch(call c) {
  auto id = c.req().params.at("jobId");
  with_principal(c, false,
                 [c, id](uc::account_env& env, const uc::principal& who) {
                   auto erased = uc::delete_batch_job(env, who, id);
                   // A job this process runs stops at once (no-op otherwise).
                   if (erased && c.svc->batches)
                     c.svc->batches->cancelled(id);
                   reply_empty(c, erased);
                 });
}

void handle_batch_results(call c) {
  auto query = codec::batch_results_query(c.req());
  auto id = c.req().params.at("jobId");
  with_principal(
      c, false, [c, query, id](uc::account_env& env, const uc::principal& who) {
        auto found = uc::batch_job_with_results(env, who, id);
        if (!found)
          return c.ex->fail(found.error_value());
        const auto& j = *found;
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
        std::string head;
        codec::append_results_head(head, j, query->csv);
        // Encoded here, off the event loop; the stream starts on it.
        auto first_chunk = std::make_shared<std::pair<std::string, bool>>(
            x->encode(std::move(head), *page));
        c.ex->stream(response{200,
                              {},
                              query->csv ? "text/csv; charset=utf-8"
                                         : "application/json",
                              {{"Content-Disposition",
                                "attachment; filename=\"" + name + "\""}}},
                     [x, first_chunk](body_stream_ptr out) {
                       if (!out)
                         return;
                       x->out = std::move(out);
                       x->emit(std::move(first_chunk->first),
                               first_chunk->second);
                     });
      });
}

} // namespace mailassay::http
