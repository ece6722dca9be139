#pragma once

// The results of a batch job: each item's flags as stored (written when the
// item is done), and the export (GET /v2/batch/{jobId}/results), its query
// and the CSV or JSON text written a page of items at a time; the CLI's
// `mailassay batch` writes the same CSV.

#include "core/base/expected.hpp"
#include "core/batch/job.hpp"
#include "http/exchange.hpp"

#include <string>
#include <vector>

namespace mailassay::http::codec {

/// Returns the stored form of an item's flags (`core::batch::item::detail`):
/// a compact JSON object with the keys the export reads back.
std::string batch_item_detail(const core::batch::item_flags& f);

/// What an export asks for: `format` (csv or json) and `status`, a
/// comma-separated list of result statuses (none: every item).
struct results_query {
  bool csv = true;
  std::string format = "csv";
  std::vector<core::validation::status> statuses;
};

/// Reads the query of an export; 422 on an unknown format or status.
core::expected<results_query> batch_results_query(const request_view& req);

/// Appends what comes before the first item: the CSV header row (email,
/// status, reason, score, then the flags; see docs/batch.md) with CRLF, or
/// the JSON object's head up to its results array.
void append_results_head(std::string& out, const core::batch::job& j, bool csv);

/// Appends `it` as one CSV row (cells escaped against formula injection),
/// or as one JSON object preceded by a comma unless `first`.
void append_result(std::string& out, const core::batch::item& it, bool csv,
                   bool first);

/// Appends what ends the export after its last item.
void append_results_tail(std::string& out, bool csv);

/// Appends the CSV header row; see `append_results_head`.
void append_csv_header(std::string& out);

/// Appends `it` as one CSV row.
void append_csv_row(std::string& out, const core::batch::item& it);

} // namespace mailassay::http::codec
