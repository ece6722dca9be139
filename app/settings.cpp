#include "app/app.hpp"
#include "security/random.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sys/stat.h>

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

std::string jwt_secret_or_exit(const config::settings& cfg) {
  if (!cfg.auth.jwt_secret.empty())
    return cfg.auth.jwt_secret;
  namespace fs = std::filesystem;
  fs::path path{cfg.auth.jwt_secret_file};
  std::string secret;
  if (std::ifstream in{path};
      in && std::getline(in, secret) && secret.size() >= 32)
    return secret;
  // First start: generate a secret and keep it, so tokens survive restarts.
  std::error_code ec;
  if (path.has_parent_path())
    fs::create_directories(path.parent_path(), ec);
  secret = security::random_base62(64);
  auto old_mask = ::umask(077);
  std::ofstream out{path, std::ios::trunc};
  out << secret << "\n";
  out.close();
  ::umask(old_mask);
  if (!out) {
    std::cerr << "mailassay: cannot write the JWT secret file " << path.string()
              << " (set MAILASSAY_AUTH_JWT_SECRET or a writable "
                 "MAILASSAY_AUTH_JWT_SECRET_FILE)\n";
    std::exit(2);
  }
  return secret;
}

std::int64_t unix_now() {
  // Whole seconds: the coarse clock (no TSC read, a tick of a few ms
  // behind at most) is read twice per API request.
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return ts.tv_sec;
}

} // namespace mailassay::app
