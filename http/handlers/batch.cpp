#include "actors/batch/result_row.hpp"
#include "core/base/ascii.hpp"
#include "core/base/time_format.hpp"
#include "core/base/utf8.hpp"
#include "core/batch/intake.hpp"
#include "core/batch/multipart.hpp"
#include "http/handler_support.hpp"
#include "http/job_codec.hpp"
#include "security/random.hpp"

#include <algorithm>
#include <cmath>
#include <malloc.h>
#include <map>

namespace mailassay::http {

namespace uc = actors::accounts;
using core::batch::job;
using core::batch::job_status;

namespace {

// -- encoding
// -------------------------------------------------------------------

codec::json time_or_null(const std::optional<std::int64_t>& t) {
  return t ? codec::json(core::iso8601(*t)) : codec::json(nullptr);
}

// Seconds left at the average speed since the job started; null while
// there is nothing to measure.
codec::json eta_seconds(const job& j, std::int64_t now) {
  if (j.status == job_status::completed || j.status == job_status::cancelled ||
      j.status == job_status::failed)
    return 0;
  auto left = j.items() - j.processed;
  auto done_here = j.processed - j.invalid_rows;
  if (j.status != job_status::processing || !j.started_at || done_here <= 0)
    return nullptr;
  auto elapsed = std::max<std::int64_t>(1, now - *j.started_at);
  auto rate = static_cast<double>(done_here) / static_cast<double>(elapsed);
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(left) / rate));
}

} // namespace

// Shared with the webhook events (http/job_codec.hpp).
codec::json job_json(const job& j, std::int64_t now) {
  auto items = j.items();
  auto progress = items == 0
                      ? 100.0
                      : std::floor(1000.0 * static_cast<double>(j.processed) /
                                   static_cast<double>(items)) /
                            10.0;
  return {{"id", j.id},
          {"organizationId", j.organization_id},
          {"status", core::batch::to_string(j.status)},
          {"fileName", j.file_name},
          {"emailColumn", j.email_column.empty() ? codec::json(nullptr)
                                                 : codec::json(j.email_column)},
          {"totalRows", j.total_rows},
          {"uniqueEmails", j.unique_emails},
          {"duplicatesRemoved", j.duplicates_removed},
          {"invalidRows", j.invalid_rows},
          {"processed", j.processed},
          {"progress", progress},
          {"counts",
           {{"valid", j.counts.valid},
            {"invalid", j.counts.invalid},
            {"risky", j.counts.risky},
            {"unknown", j.counts.unknown}}},
          {"smtp", j.smtp},
          {"sandbox", j.sandbox},
          {"deduplicate", j.deduplicate},
          {"creditsReserved", j.credits_reserved},
          {"creditsUsed", j.credits_used},
          {"createdAt", core::iso8601(j.created_at)},
          {"startedAt", time_or_null(j.started_at)},
          {"finishedAt", time_or_null(j.finished_at)},
          {"etaSeconds", eta_seconds(j, now)}};
}

namespace {

// -- upload options
// -------------------------------------------------------------

core::error unprocessable(std::string message) {
  auto e = core::make_error(core::errc::validation_failed, "");
  e.details = {std::move(message)};
  return e;
}

core::error bad_request(std::string message) {
  return core::make_error(core::errc::bad_request, std::move(message));
}

struct upload_input {
  std::string_view csv;
  std::string file_name = "upload.csv";
  bool deduplicate = true;
  bool smtp = false;
  std::string email_column;
};

// Reads a boolean option.
std::optional<core::error> read_flag(const std::optional<std::string>& text,
                                     const char* name, bool& out) {
  if (!text)
    return std::nullopt;
  auto v = core::ascii_lower(*text);
  if (v == "true" || v == "1")
    out = true;
  else if (v == "false" || v == "0")
    out = false;
  else
    return unprocessable(std::string{name} + " must be a boolean value");
  return std::nullopt;
}

// The options a multipart form may carry besides its `file`; each may also
// come as a query parameter, but not both ways at once.
constexpr const char* form_options[] = {"deduplicate", "smtp", "emailColumn"};

// Reads the options and the CSV. One rule for names, as for JSON fields:
// a field the endpoint does not read is 422 (`multipart field x should not
// exist`), a name given twice (two `file` parts, a field twice, or a field
// and a query parameter of the same name) is 422 naming it (docs/api.md).
core::expected<upload_input> upload_of(const request_view& req,
                                       std::int64_t max_file_bytes) {
  upload_input in;
  std::map<std::string, std::optional<std::string>> options;
  for (auto* name : form_options)
    options[name] = req.query_param(name);
  if (auto name = req.query_param("fileName"))
    in.file_name = *name;
  auto type =
      core::ascii_lower(std::string{req.header("Content-Type").value_or("")});
  if (type.rfind("multipart/form-data", 0) == 0) {
    auto parts = core::batch::parse_multipart(
        std::string{req.header("Content-Type").value_or("")}, req.body);
    if (!parts)
      return parts.error_value();
    std::vector<std::string> problems;
    // One message per name, in the order met.
    auto problem = [&](std::string m) {
      if (std::find(problems.begin(), problems.end(), m) == problems.end())
        problems.push_back(std::move(m));
    };
    std::map<std::string, bool> from_form;
    bool found = false;
    for (auto& p : *parts) {
      auto shown = core::utf8_scrub(p.name, 64);
      if (p.name == "file") {
        if (found) {
          problem("multipart field file must be given only once");
          continue;
        }
        in.csv = p.body;
        if (!p.filename.empty())
          in.file_name = p.filename;
        found = true;
        continue;
      }
      auto option = options.find(p.name);
      if (option == options.end()) {
        problem("multipart field " + shown + " should not exist");
      } else if (from_form[p.name]) {
        problem("multipart field " + shown + " must be given only once");
      } else if (option->second) {
        problem(shown + " must be given either as a query parameter or as a "
                        "form field, not both");
      } else {
        option->second = std::string{p.body};
        from_form[p.name] = true;
      }
    }
    if (!problems.empty()) {
      auto e = core::make_error(core::errc::validation_failed, "");
      e.details = std::move(problems);
      return e;
    }
    if (!found)
      return bad_request("The multipart body has no 'file' part with the CSV");
  } else if (type.rfind("text/csv", 0) == 0 ||
             type.rfind("text/plain", 0) == 0 ||
             type.rfind("application/csv", 0) == 0 ||
             type.rfind("application/octet-stream", 0) == 0) {
    in.csv = req.body;
  } else {
    return bad_request("Upload the CSV as multipart/form-data (field 'file') "
                       "or as a text/csv body");
  }
  // The limit is the file's: a multipart body is a little larger.
  if (static_cast<std::int64_t>(in.csv.size()) > max_file_bytes)
    return core::make_error(core::errc::payload_too_large, "");
  if (auto e = read_flag(options["deduplicate"], "deduplicate", in.deduplicate))
    return *e;
  if (auto e = read_flag(options["smtp"], "smtp", in.smtp))
    return *e;
  if (auto& column = options["emailColumn"])
    in.email_column = *column;
  // Stored, then written as JSON in every listing: a name that is not
  // UTF-8 (a multipart filename is raw bytes) must not make those fail.
  in.file_name = core::utf8_scrub(in.file_name, 255);
  return in;
}

// -- results
// --------------------------------------------------------------------

core::expected<std::vector<std::string>>
status_filter(const request_view& req) {
  std::vector<std::string> out;
  auto text = req.query_param("status");
  if (!text)
    return out;
  std::size_t start = 0;
  while (start <= text->size()) {
    auto end = text->find(',', start);
    if (end == std::string::npos)
      end = text->size();
    auto word = core::ascii_lower(text->substr(start, end - start));
    if (word != "valid" && word != "invalid" && word != "risky" &&
        word != "unknown")
      return unprocessable("status must be a comma-separated list of valid, "
                           "invalid, risky, unknown");
    out.push_back(word);
    start = end + 1;
  }
  return out;
}

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
  std::vector<std::string> statuses;
  bool csv = true;
  std::int64_t after = -1; // seq of the last row read
  bool first = true;       // no row written yet (JSON separators)

  // Done rows only: a running job exports what is finished so far.
  core::expected<std::vector<core::batch::item>> read(storage::store& db) {
    auto page = db.batch_items(job_id, after, page_rows, true, statuses);
    if (page && !page->empty())
      after = page->back().seq;
    return page;
  }

  // Writes `prefix` and the rows of `page`; then reads the next page, or
  // ends the body after a short one.
  void send(std::string prefix, const std::vector<core::batch::item>& page) {
    auto chunk = std::move(prefix);
    for (auto& it : page) {
      if (csv) {
        actors::batch::append_csv_row(chunk, it);
      } else {
        if (!first)
          chunk += ',';
        actors::batch::append_json_row(chunk, it);
      }
      first = false;
    }
    if (page.size() < page_rows) {
      if (!csv)
        chunk += "]}";
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
    auto in = upload_of(c.req(), c.svc->cfg.batch.max_file_bytes);
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
    c.ex->json(201, codec::text_of(job_json(j, env.now)));
  });
}

void handle_list_batches(call c) {
  with_principal(c, false, [c](uc::account_env& env, const uc::principal& who) {
    auto jobs = env.db.list_batch_jobs(who.organization_id(), 100);
    if (!jobs)
      return c.ex->fail(jobs.error_value());
    auto out = codec::json::array();
    for (auto& j : *jobs)
      out.push_back(job_json(j, env.now));
    c.ex->json(200, codec::text_of(codec::json{{"items", out}}));
  });
}

void handle_get_batch(call c) {
  with_job(c, [c](uc::account_env& env, const job& j) {
    c.ex->json(200, codec::text_of(job_json(j, env.now)));
  });
}

void handle_cancel_batch(call c) {
  auto id = c.req().params.at("jobId");
  with_principal(c, false,
                 [c, id](uc::account_env& env, const uc::principal& who) {
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
                   c.ex->json(200, codec::text_of(job_json(*j, env.now)));
                 });
}

void handle_batch_results(call c) {
  auto format = c.req().query_param("format").value_or("csv");
  auto statuses = status_filter(c.req());
  if (format != "csv" && format != "json")
    statuses = unprocessable("format must be csv or json");
  with_job(c, [c, format, statuses](uc::account_env& env, const job& j) {
    if (!statuses)
      return c.ex->fail(statuses.error_value());
    auto x = std::make_shared<results_export>();
    x->svc = c.svc;
    x->job_id = j.id;
    x->statuses = *statuses;
    x->csv = format == "csv";
    // The first page is read before the head is sent, so a storage error
    // still gets its status and error body.
    auto page = x->read(env.db);
    if (!page)
      return c.ex->fail(page.error_value());
    auto name = j.id + "-results." + format;
    x->out = c.ex->stream(response{
        200,
        {},
        x->csv ? "text/csv; charset=utf-8" : "application/json",
        {{"Content-Disposition", "attachment; filename=\"" + name + "\""}}});
    if (!x->out)
      return;
    std::string head;
    if (x->csv)
      actors::batch::append_csv_header(head);
    else
      head = "{\"jobId\":\"" + j.id + "\",\"status\":\"" +
             std::string{core::batch::to_string(j.status)} + "\",\"results\":[";
    x->send(std::move(head), *page);
  });
}

} // namespace mailassay::http
