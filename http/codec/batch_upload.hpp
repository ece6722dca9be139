#pragma once

// The batch upload request (POST /v2/batch/upload): the CSV as a multipart
// form's `file` or as the body, and its options as form fields or query
// parameters.

#include "core/base/expected.hpp"
#include "http/exchange.hpp"
#include "use_cases/accounts/batches.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace mailassay::http::codec {

/// Reads the options and the CSV. One rule for names, as for JSON fields:
/// a field the endpoint does not read is 422 (`multipart field x should not
/// exist`), a name given twice (two `file` parts, a field twice, or a field
/// and a query parameter of the same name) is 422 naming it (docs/api.md).
/// A file over `max_file_bytes` is errc::payload_too_large (no message);
/// the file name defaults to "upload.csv".
core::expected<use_cases::accounts::batch_upload>
batch_upload(const request_view& req, std::int64_t max_file_bytes);

} // namespace mailassay::http::codec
