#include "tests/support/wait.hpp"

#include <thread>

namespace mailassay::testing {

bool eventually(const std::function<bool()>& ok,
                std::chrono::milliseconds limit,
                std::chrono::milliseconds poll) {
  auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (ok())
      return true;
    if (std::chrono::steady_clock::now() >= until)
      return false;
    std::this_thread::sleep_for(poll);
  }
}

std::chrono::milliseconds steady_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now().time_since_epoch());
}

} // namespace mailassay::testing
