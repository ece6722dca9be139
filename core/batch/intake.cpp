#include "core/batch/intake.hpp"

#include "core/base/ascii.hpp"
#include "core/validation/verdict.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace mailassay::core::batch {

namespace {

// The header names taken for the address column, compared ignoring case.
constexpr std::array<std::string_view, 7> email_names{
    "email",         "e-mail",         "email address", "emailaddress",
    "email_address", "e-mail address", "mail"};

// How many header names an error message lists.
constexpr std::size_t listed_names = 20;

bool has_at(std::string_view s) {
  return !s.empty() && std::memchr(s.data(), '@', s.size()) != nullptr;
}

std::string list_of(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < listed_names; ++i) {
    if (i > 0)
      out += ", ";
    out += names[i].empty() ? std::string{"\"\""} : names[i];
  }
  if (names.size() > listed_names)
    out += ", ... (" + std::to_string(names.size()) + " columns)";
  return out;
}

error bad_request(std::string message) {
  return make_error(errc::bad_request, std::move(message));
}

} // namespace

void fill_job(job& j, const intake_result& r) {
  j.email_column = r.email_column;
  j.total_rows = r.total_rows;
  j.unique_emails = r.unique_emails;
  j.duplicates_removed = r.duplicates_removed;
  j.invalid_rows = r.invalid_rows;
}

intake::intake(intake_options opts)
    : opts_(std::move(opts)),
      reader_([this](const csv_record& r) { return on_record(r); },
              csv_options{opts_.delimiter}) {}

bool intake::stop(error e) {
  error_ = std::move(e);
  return false;
}

bool intake::choose_column(const csv_record& first) {
  auto wanted = trim_blanks(opts_.email_column);
  bool header = true;
  for (auto cell : first.fields)
    if (has_at(cell)) {
      header = false;
      break;
    }
  if (!header) {
    if (!wanted.empty())
      return stop(bad_request(
          "the file has no header row (its first row holds an address), so "
          "there is no column named '" +
          std::string{wanted} + "'"));
    for (std::size_t i = 0; i < first.fields.size(); ++i)
      if (has_at(first.fields[i])) {
        result_.column = i;
        break;
      }
    return true;
  }
  result_.has_header = true;
  std::vector<std::string> names;
  names.reserve(first.fields.size());
  for (auto cell : first.fields)
    names.emplace_back(trim_blanks(cell));
  auto find = [&](std::string_view name) {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (ascii_iequals(names[i], name))
        return i;
    return names.size();
  };
  auto column = names.size();
  if (!wanted.empty()) {
    column = find(wanted);
    if (column == names.size())
      return stop(bad_request("no column named '" + std::string{wanted} +
                              "'; the header has: " + list_of(names)));
  } else {
    for (auto name : email_names)
      if (column = find(name); column < names.size())
        break;
    if (column == names.size())
      column = 0;
  }
  result_.column = column;
  result_.email_column = std::move(names[column]);
  return true;
}

void intake::add_row(std::string_view cell) {
  looks_like_address_ = looks_like_address_ || has_at(cell);
  syntax::parse(cell, opts_.syntax, parsed_);
  if (!parsed_.valid) {
    // The reason and score the single-address endpoint would give.
    validation::facts f;
    f.address = &parsed_;
    auto v = validation::decide(f);
    item it;
    it.seq = static_cast<std::int64_t>(result_.items.size());
    it.email.assign(cell);
    it.done = true;
    it.status = v.state;
    it.reason = std::move(v.reason);
    it.score = v.score;
    it.detail = "{}";
    result_.items.push_back(std::move(it));
    ++result_.invalid_rows;
    return;
  }
  if (opts_.deduplicate) {
    // One mailbox, one item: the provider's own folding (docs/syntax.md,
    // Normalization), so an SMTP batch never reserves two credits for it.
    syntax::mailbox_key(parsed_, key_);
    if (!seen_.insert(key_)) {
      ++result_.duplicates_removed;
      return;
    }
  }
  if (static_cast<std::size_t>(result_.unique_emails) >= opts_.max_addresses) {
    auto limit = std::to_string(opts_.max_addresses);
    stop(make_error(errc::validation_failed,
                    "the file holds more than " + limit + " addresses" +
                        (opts_.deduplicate ? " after de-duplication" : "") +
                        "; the limit is " + limit));
    return;
  }
  ++result_.unique_emails;
  item it;
  it.seq = static_cast<std::int64_t>(result_.items.size());
  it.email.assign(cell);
  result_.items.push_back(std::move(it));
}

bool intake::on_record(const csv_record& record) {
  bool blank = true;
  for (auto cell : record.fields)
    if (!trim_blanks(cell).empty()) {
      blank = false;
      break;
    }
  // Spreadsheets end files with rows of empty cells (",,,").
  if (blank)
    return true;
  if (!started_) {
    started_ = true;
    if (!choose_column(record))
      return false;
    if (result_.has_header)
      return true;
  }
  ++result_.total_rows;
  auto column = result_.column;
  add_row(column < record.fields.size() ? trim_blanks(record.fields[column])
                                        : std::string_view{});
  return !error_;
}

void intake::reserve(std::size_t rows) {
  rows = std::min(rows, opts_.max_addresses);
  result_.items.reserve(rows);
  if (opts_.deduplicate)
    seen_.reserve(rows);
}

expected<unit> intake::feed(std::string_view chunk) {
  if (error_)
    return *error_;
  auto fed = reader_.feed(chunk);
  if (error_)
    return *error_;
  return fed;
}

expected<intake_result> intake::finish() {
  if (error_)
    return *error_;
  auto done = reader_.finish();
  if (error_)
    return *error_;
  if (!done)
    return done.error_value();
  if (!started_)
    return bad_request("the file is empty");
  if (result_.total_rows == 0)
    return bad_request("the file has a header row but no data rows");
  // A file of invalid addresses is a job: its export says why each row
  // failed, which is what a list-cleaning service is for. Only a column
  // with no '@' at all is refused: it holds no addresses, good or bad, and
  // is most likely the wrong column.
  if (result_.unique_emails == 0 && !looks_like_address_) {
    auto where = result_.has_header ? "'" + result_.email_column + "'"
                                    : std::to_string(result_.column + 1);
    return bad_request(
        "column " + where +
        " holds nothing that looks like an email address (no cell has an @; " +
        std::to_string(result_.total_rows) +
        " data rows read): choose the column of addresses with emailColumn");
  }
  result_.delimiter = reader_.delimiter();
  return std::move(result_);
}

expected<intake_result> read_csv(std::string_view bytes,
                                 const intake_options& opts) {
  intake in{opts};
  // A lone CR ends lines too, but files that use it are rare: they only
  // miss the hint.
  in.reserve(
      static_cast<std::size_t>(std::count(bytes.begin(), bytes.end(), '\n')));
  if (auto fed = in.feed(bytes); !fed)
    return fed.error_value();
  return in.finish();
}

} // namespace mailassay::core::batch
