#pragma once

#include <span>
#include <string_view>

namespace mailassay::http {

/// The OpenAPI 3 document (http/openapi.json), embedded at build time.
std::string_view openapi_text();

/// The browser widget (web/widget.js), embedded at build time.
std::string_view widget_script();

/// One file of the dashboard, embedded at build time.
struct embedded_file {
  std::string_view path; ///< URL path: `/app/` + its path under web/app.
  std::string_view text; ///< Its bytes.
};

/// Every file under web/app (http/embed_web.cmake), sorted by path.
std::span<const embedded_file> web_files();

} // namespace mailassay::http
