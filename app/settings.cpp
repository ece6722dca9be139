#include "app/app.hpp"

#include <chrono>
#include <ctime>
#include <iostream>

namespace mailassay::app {

config::settings load_settings_or_exit(const std::optional<std::string>& file) {
  auto env = config::process_environment();
  auto path = file;
  if (!path)
    if (auto i = env.find("MAILASSAY_CONFIG"); i != env.end())
      path = i->second;
  auto loaded = config::load(path, env);
  if (!loaded) {
    std::cerr << "mailassay: invalid configuration: "
              << loaded.error_value().message << "\n";
    std::exit(2);
  }
  return std::move(*loaded);
}

std::int64_t unix_now() {
  // Whole seconds: the coarse clock (no TSC read, a tick of a few ms
  // behind at most) is read twice per API request.
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return ts.tv_sec;
}

} // namespace mailassay::app
