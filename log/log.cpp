#include "log/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace mailassay::log {

namespace {

spdlog::level::level_enum to_spd(level l) {
  switch (l) {
    case log::level::trace: return spdlog::level::trace;
    case log::level::debug: return spdlog::level::debug;
    case log::level::info: return spdlog::level::info;
    case log::level::warn: return spdlog::level::warn;
    case log::level::error: return spdlog::level::err;
  }
  return spdlog::level::info;
}

void append_escaped(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xF];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
}

std::shared_ptr<spdlog::logger>& logger() {
  static auto instance = [] {
    auto l = spdlog::stderr_logger_mt("mailassay");
    l->set_pattern(R"({"ts":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l",%v})",
                   spdlog::pattern_time_type::utc);
    return l;
  }();
  return instance;
}

} // namespace

void init(const std::string& level) {
  logger()->set_level(spdlog::level::from_str(level));
  logger()->flush_on(spdlog::level::info);
}

bool enabled(level severity) {
  return logger()->should_log(to_spd(severity));
}

void event(level severity, std::string_view name,
           std::initializer_list<field> fields) {
  if (!enabled(severity))
    return;
  std::string line = "\"event\":\"";
  append_escaped(line, name);
  line += '"';
  for (auto& [k, v] : fields) {
    line += ",\"";
    append_escaped(line, k);
    line += "\":\"";
    append_escaped(line, v);
    line += '"';
  }
  logger()->log(to_spd(severity), line);
}

} // namespace mailassay::log
