#include "app/app.hpp"
#include "log/log.hpp"
#include "os/private_files.hpp"
#include "storage/url.hpp"

#include <cstdio>

namespace mailassay::app {

void warn_exposed_files(const config::settings& cfg) {
  std::vector<std::string> paths;
  if (auto url = storage::parse_database_url(cfg.database.url);
      url && url->kind == storage::dialect::sqlite)
    for (const char* suffix : {"", "-wal", "-shm"})
      paths.push_back(url->path + suffix);
  // Read only when the key is not set in the environment, but a readable
  // copy lying there still unseals every secret.
  paths.push_back(cfg.webhooks.secret_key_file);
  for (const auto& f : os::exposed_paths(paths)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(f.mode));
    log::event(log::level::warn, "file_open_to_others",
               {{"path", f.path},
                {"mode", mode},
                {"why", "it holds secrets or customers' data"},
                {"fix", "chmod 600 " + f.path}});
  }
}

} // namespace mailassay::app
