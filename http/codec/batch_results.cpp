#include "http/codec/batch_results.hpp"

#include "core/base/ascii.hpp"
#include "core/batch/export.hpp"
#include "http/codec/json_text.hpp"
#include "http/codec/reader.hpp"

#include <array>
#include <string_view>

namespace mailassay::http::codec {

namespace {

// The flags of the export, in column order: the key of an item's stored
// `detail` (batch_item_detail writes it), the JSON export's field, the CSV
// column.
struct flag_column {
  std::string_view detail;
  const char* json;
  std::string_view csv;
};

constexpr std::array<flag_column, 10> flags{{
    {"normalized", "normalized", "normalized"},
    {"mx", "mx", "has_mx"},
    {"disposable", "disposable", "disposable"},
    {"role", "role", "role_account"},
    {"free", "free", "free_provider"},
    {"random", "random", "random"},
    {"catchAll", "catchAll", "catch_all"},
    {"smtpChecked", "smtpChecked", "smtp_checked"},
    {"suggestion", "suggestion", "suggestion"},
    // {"name","kind"} or null (issue #30); the CSV cell is the name.
    {"provider", "provider", "provider"},
}};

std::string cell(const json& v) {
  if (v.is_null())
    return {};
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_object()) {
    auto name = v.find("name");
    return name != v.end() && name->is_string() ? name->get<std::string>()
                                                : std::string{};
  }
  return v.dump();
}

json parse_detail(const std::string& detail) {
  auto d = json::parse(detail, nullptr, false);
  return d.is_object() ? d : json::object();
}

void append_json_row(std::string& out, const core::batch::item& it) {
  json row;
  row["email"] = it.email;
  row["status"] = core::batch::status_text(it);
  row["reason"] = it.reason;
  row["score"] = it.score;
  auto d = parse_detail(it.detail);
  for (auto& f : flags) {
    auto found = d.find(std::string{f.detail});
    row[f.json] = found == d.end() ? json(nullptr) : *found;
  }
  out += row.dump();
}

core::expected<std::vector<core::validation::status>>
status_filter(const request_view& req) {
  std::vector<core::validation::status> out;
  auto text = req.query_param("status");
  if (!text)
    return out;
  std::size_t start = 0;
  while (start <= text->size()) {
    auto end = text->find(',', start);
    if (end == std::string::npos)
      end = text->size();
    auto status = core::validation::parse_status(
        core::ascii_lower(text->substr(start, end - start)));
    if (!status)
      return unprocessable("status must be a comma-separated list of valid, "
                           "invalid, risky, unknown");
    out.push_back(*status);
    start = end + 1;
  }
  return out;
}

} // namespace

std::string batch_item_detail(const core::batch::item_flags& f) {
  json d;
  d["normalized"] = or_null(f.normalized);
  d["mx"] = or_null(f.mx);
  d["disposable"] = or_null(f.disposable);
  d["role"] = or_null(f.role);
  d["free"] = f.free;
  d["random"] = or_null(f.random);
  d["catchAll"] = or_null(f.catch_all);
  d["smtpChecked"] = f.smtp_checked;
  d["suggestion"] = or_null(f.suggestion);
  if (f.provider)
    d["provider"] = {{"name", f.provider->name},
                     {"kind", core::provider::to_string(f.provider->kind)}};
  else
    d["provider"] = nullptr;
  return d.dump();
}

core::expected<results_query> batch_results_query(const request_view& req) {
  results_query q;
  q.format = req.query_param("format").value_or("csv");
  auto statuses = status_filter(req);
  // The format is named first when both are wrong.
  if (q.format != "csv" && q.format != "json")
    return unprocessable("format must be csv or json");
  if (!statuses)
    return statuses.error_value();
  q.csv = q.format == "csv";
  q.statuses = std::move(*statuses);
  return q;
}

void append_csv_header(std::string& out) {
  std::vector<std::string> cells{"email", "status", "reason", "score"};
  for (auto& f : flags)
    cells.emplace_back(f.csv);
  core::batch::append_row(out, cells);
}

void append_csv_row(std::string& out, const core::batch::item& it) {
  auto d = parse_detail(it.detail);
  std::vector<std::string> cells{it.email,
                                 std::string{core::batch::status_text(it)},
                                 it.reason, std::to_string(it.score)};
  for (auto& f : flags) {
    auto found = d.find(std::string{f.detail});
    cells.push_back(found == d.end() ? std::string{} : cell(*found));
  }
  core::batch::append_row(out, cells);
}

void append_results_head(std::string& out, const core::batch::job& j,
                         bool csv) {
  if (csv)
    return append_csv_header(out);
  out += text_of(
      json{{"jobId", j.id}, {"status", core::batch::to_string(j.status)}});
  // The object stays open for its results array.
  out.pop_back();
  out += ",\"results\":[";
}

void append_result(std::string& out, const core::batch::item& it, bool csv,
                   bool first) {
  if (csv)
    return append_csv_row(out, it);
  if (!first)
    out += ',';
  append_json_row(out, it);
}

void append_results_tail(std::string& out, bool csv) {
  if (!csv)
    out += "]}";
}

} // namespace mailassay::http::codec
