#pragma once

#include <string_view>

namespace mailassay::http {

/// The OpenAPI 3 document (http/openapi.json), embedded at build time.
std::string_view openapi_text();

/// The browser widget (web/widget.js), embedded at build time.
std::string_view widget_script();

} // namespace mailassay::http
