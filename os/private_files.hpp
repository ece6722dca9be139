#pragma once

// Files that hold secrets or customers' data (the SQLite database and its
// -wal/-shm, the server key file) are created readable by their owner only,
// and the service warns at start when one is open to others
// (docs/security.md).

#include <string>
#include <sys/types.h>
#include <vector>

namespace mailassay::os {

/// Sets the process umask to 077 for its lifetime and restores the previous
/// one after: files and folders created meanwhile (by this thread or any
/// other) get no group or other permissions. For start-up steps that create
/// private files through a library that takes no mode (SQLite).
class private_umask {
public:
  private_umask();
  ~private_umask();
  private_umask(const private_umask&) = delete;
  private_umask& operator=(const private_umask&) = delete;

private:
  mode_t previous_;
};

/// Creates `dir` and its missing parents with mode 0700 (existing folders
/// keep their mode). Returns "" or why it failed.
std::string make_private_directories(const std::string& dir);

/// Creates `path` empty with mode 0600 unless it exists (so that a library
/// opening it afterwards finds a private file). An existing file is left
/// as it is. Returns "" or why it failed.
std::string touch_private_file(const std::string& path);

/// One path whose permissions let its group or others read or write it.
struct exposed_path {
  std::string path;
  mode_t mode = 0; ///< The permission bits, e.g. 0644.
};

/// The paths among `paths` that exist and grant any permission to group or
/// others (symbolic links followed). Missing paths are skipped.
std::vector<exposed_path> exposed_paths(const std::vector<std::string>& paths);

} // namespace mailassay::os
