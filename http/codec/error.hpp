#pragma once

// The error document: the spec's error body of every refusal, with the
// status and code of http/errors.hpp's table.

#include "core/base/errc.hpp"

#include <string>

namespace mailassay::http::codec {

/// Renders the spec's error body for `e`: {message, code, statusCode}; for
/// 422 {message: [...], error, statusCode}; for the widget's 429 {statusCode,
/// message, reason, retryAfterSeconds}.
std::string error_body(const core::error& e);

} // namespace mailassay::http::codec
