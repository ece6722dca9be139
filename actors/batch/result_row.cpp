#include "actors/batch/result_row.hpp"

#include "core/batch/export.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <string_view>

namespace mailassay::actors::batch {

using nlohmann::json;

namespace {

json or_null(const std::optional<bool>& v) {
  return v ? json(*v) : json(nullptr);
}

// The flags of the export, in column order: detail key, CSV column name.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> flags{{
    {"normalized", "normalized"},
    {"mx", "has_mx"},
    {"disposable", "disposable"},
    {"role", "role_account"},
    {"free", "free_provider"},
    {"random", "random"},
    {"catchAll", "catch_all"},
    {"smtpChecked", "smtp_checked"},
    {"suggestion", "suggestion"},
}};

std::string cell(const json& v) {
  if (v.is_null())
    return {};
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  if (v.is_string())
    return v.get<std::string>();
  return v.dump();
}

json parse_detail(const std::string& detail) {
  auto d = json::parse(detail, nullptr, false);
  return d.is_object() ? d : json::object();
}

} // namespace

core::batch::item item_from_result(std::int64_t seq, std::string email,
                                   const validation::result& r) {
  core::batch::item it;
  it.seq = seq;
  it.email = std::move(email);
  it.done = true;
  it.status = std::string{core::validation::to_string(r.verdict.state)};
  it.reason = r.verdict.reason;
  it.score = r.verdict.score;
  it.credits = r.credits_used;
  const auto& a = r.address;
  const auto& c = r.checks;
  json d;
  d["normalized"] = a.valid ? json(a.normalized) : json(nullptr);
  if (r.route) {
    using core::dns::route_kind;
    d["mx"] = r.route->kind == route_kind::mx ||
              r.route->kind == route_kind::implicit_mx;
  } else {
    d["mx"] = nullptr;
  }
  d["disposable"] = or_null(c.disposable);
  d["role"] = or_null(c.role_account);
  d["free"] = c.free_provider;
  d["random"] = c.random ? json(c.random->is_random) : json(nullptr);
  d["catchAll"] = or_null(r.smtp.catch_all);
  d["smtpChecked"] = r.smtp.checked;
  d["suggestion"] = c.suggested_domain
                        ? json(a.local_part + "@" + *c.suggested_domain)
                        : json(nullptr);
  it.detail = d.dump();
  return it;
}

void append_csv_header(std::string& out) {
  std::vector<std::string> cells{"email", "status", "reason", "score"};
  for (auto& f : flags)
    cells.emplace_back(f.second);
  core::batch::append_row(out, cells);
}

void append_csv_row(std::string& out, const core::batch::item& it) {
  auto d = parse_detail(it.detail);
  std::vector<std::string> cells{it.email, it.status, it.reason,
                                 std::to_string(it.score)};
  for (auto& f : flags) {
    auto found = d.find(std::string{f.first});
    cells.push_back(found == d.end() ? std::string{} : cell(*found));
  }
  core::batch::append_row(out, cells);
}

void append_json_row(std::string& out, const core::batch::item& it) {
  json row;
  row["email"] = it.email;
  row["status"] = it.status;
  row["reason"] = it.reason;
  row["score"] = it.score;
  auto d = parse_detail(it.detail);
  for (auto& f : flags) {
    auto found = d.find(std::string{f.first});
    row[std::string{f.first}] = found == d.end() ? json(nullptr) : *found;
  }
  out += row.dump();
}

} // namespace mailassay::actors::batch
