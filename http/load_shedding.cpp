#include "http/load_shedding.hpp"

namespace mailassay::http {

const char* queue_name(queue q) {
  switch (q) {
    case queue::requests: return "requests";
    case queue::storage: return "storage";
    case queue::validation: return "validation";
  }
  return "requests";
}

core::error overloaded(queue q) {
  auto e =
      core::make_error(core::errc::unavailable,
                       std::string{"The server is busy (its "} + queue_name(q) +
                           " queue is full): please retry in a second");
  // A second is long beside a queue that drains in milliseconds, and short
  // for a client.
  e.retry_after = 1;
  return e;
}

} // namespace mailassay::http
