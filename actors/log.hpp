#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace mailassay::actors {

/// Severity of a log line.
enum class log_level { trace, debug, info, warn, error };

/// One key=value field of a log line.
using log_field = std::pair<std::string_view, std::string>;

/// Sets up the JSON-lines logger on stderr at `level` ("info", ...).
void init_logging(const std::string& level);

/// Writes one JSON line: {"ts", "level", "event", fields...}. Callers never
/// pass secrets or full addresses above debug level.
void log_event(log_level level, std::string_view event,
               std::initializer_list<log_field> fields);

/// Returns whether `level` is enabled (to skip building costly fields).
bool log_enabled(log_level level);

} // namespace mailassay::actors
