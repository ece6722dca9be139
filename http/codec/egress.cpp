#include "http/codec/egress.hpp"

namespace mailassay::http::codec {

json egress_report(const core::egress::report& r) {
  auto checks = json::array();
  for (const auto& c : r.checks)
    checks.push_back(
        {{"name", c.name},
         {"status", std::string{core::egress::to_string(c.result)}},
         {"detail", c.detail}});
  return {{"ok", r.ok()},
          {"egressAddress", r.egress_address},
          {"checks", std::move(checks)}};
}

} // namespace mailassay::http::codec
