#pragma once

// The logging facade (spdlog): one JSON line per event with key=value
// fields, written to stderr.

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace mailassay::log {

/// Severity of a log line.
enum class level { trace, debug, info, warn, error };

/// One key=value field of a log line.
using field = std::pair<std::string_view, std::string>;

/// Sets up the JSON-lines logger on stderr at `level` ("info", ...).
void init(const std::string& level);

/// Writes one JSON line: {"ts", "level", "event", fields...}. Callers never
/// pass secrets or full addresses above debug level.
void event(level severity, std::string_view name,
           std::initializer_list<field> fields);

/// Returns whether `severity` is enabled (to skip building costly fields).
bool enabled(level severity);

} // namespace mailassay::log
