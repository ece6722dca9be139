#include "app/app.hpp"
#include "os/coarse_clock.hpp"
#include "os/private_files.hpp"
#include "security/secret_box.hpp"

#include <cerrno>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace mailassay::app {

config::settings load_settings_or_exit(const std::optional<std::string>& file) {
  auto env = config::process_environment();
  auto loaded = config::load(config::file_of(file, env), env);
  if (!loaded) {
    std::cerr << "mailassay: invalid configuration: "
              << loaded.error_value().message << "\n";
    std::exit(2);
  }
  return std::move(*loaded);
}

namespace {

// Reads the webhook key file; "" when it does not exist. Exits when it
// exists but holds something else: never replaced silently, the secrets
// sealed with it would be lost.
std::string read_webhook_key(const std::filesystem::path& path) {
  std::string key;
  std::ifstream in{path};
  if (!in)
    return {};
  std::getline(in, key);
  if (security::secret_box_key_from_hex(key))
    return key;
  std::cerr << "mailassay: " << path.string()
            << " does not hold a webhook key (64 hex digits)\n";
  std::exit(2);
}

} // namespace

std::string webhook_key_or_exit(const config::settings& cfg) {
  if (!cfg.webhooks.secret_key.empty())
    return cfg.webhooks.secret_key;
  namespace fs = std::filesystem;
  fs::path path{cfg.webhooks.secret_key_file};
  if (auto key = read_webhook_key(path); !key.empty())
    return key;
  // First start: generate a key and keep it, so sealed secrets survive
  // restarts. Written whole to a private file, then linked into place:
  // processes starting together on one data folder never see a half-written
  // key, and the one whose link loses uses the winner's key instead of
  // overwriting it.
  std::error_code ec;
  if (path.has_parent_path())
    os::make_private_directories(path.parent_path().string());
  auto key = security::new_secret_box_key_hex();
  auto temp = path;
  temp += ".tmp-" + std::to_string(::getpid());
  auto old_mask = ::umask(077);
  std::ofstream out{temp, std::ios::trunc};
  out << key << "\n";
  out.close();
  ::umask(old_mask);
  bool linked = out && ::link(temp.c_str(), path.c_str()) == 0;
  bool lost = !linked && errno == EEXIST;
  fs::remove(temp, ec);
  if (lost)
    if (auto winner = read_webhook_key(path); !winner.empty())
      return winner;
  if (!linked) {
    std::cerr << "mailassay: cannot write the webhook key file "
              << path.string()
              << " (set MAILASSAY_WEBHOOKS_SECRET_KEY or a writable "
                 "MAILASSAY_WEBHOOKS_SECRET_KEY_FILE)\n";
    std::exit(2);
  }
  return key;
}

std::int64_t unix_now() {
  // Whole seconds, read twice per API request: the coarse clock.
  return os::coarse_unix_seconds();
}

} // namespace mailassay::app
