#include "core/egress/report.hpp"

namespace mailassay::core::egress {

std::string_view to_string(status s) {
  switch (s) {
    case status::ok: return "ok";
    case status::warn: return "warn";
    case status::fail: return "fail";
    case status::skip: return "skip";
  }
  return "skip";
}

std::optional<double> gauge_value(status s) {
  switch (s) {
    case status::ok: return 1.0;
    case status::warn: return 0.5;
    case status::fail: return 0.0;
    case status::skip: return std::nullopt;
  }
  return std::nullopt;
}

bool report::ok() const {
  for (const auto& c : checks)
    if (c.result == status::fail)
      return false;
  return true;
}

std::vector<std::string> report::failed() const {
  std::vector<std::string> out;
  for (const auto& c : checks)
    if (c.result == status::fail)
      out.push_back(c.name);
  return out;
}

} // namespace mailassay::core::egress
