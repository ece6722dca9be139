#include "core/smtp/target.hpp"

namespace mailassay::core::smtp {

std::string_view to_string(connect_failure f) {
  switch (f) {
    case connect_failure::none: return "none";
    case connect_failure::refused: return "refused";
    case connect_failure::timeout: return "timeout";
    case connect_failure::unreachable: return "unreachable";
    case connect_failure::blocked: return "blocked";
    case connect_failure::proxy: return "proxy";
    case connect_failure::other: return "other";
  }
  return "other";
}

} // namespace mailassay::core::smtp
