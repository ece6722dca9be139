#include "os/private_files.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace mailassay::os {

private_umask::private_umask() : previous_(::umask(077)) {}

private_umask::~private_umask() {
  ::umask(previous_);
}

std::string make_private_directories(const std::string& dir) {
  if (dir.empty())
    return {};
  // create_directories makes each missing folder 0777 & ~umask.
  private_umask mask;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return "cannot create directory " + dir + ": " + ec.message();
  return {};
}

std::string touch_private_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST)
    return {};
  if (fd < 0)
    return "cannot create " + path + ": " + std::strerror(errno);
  ::close(fd);
  return {};
}

std::vector<exposed_path> exposed_paths(const std::vector<std::string>& paths) {
  std::vector<exposed_path> out;
  for (const auto& p : paths) {
    struct stat st {};
    if (p.empty() || ::stat(p.c_str(), &st) != 0)
      continue;
    if ((st.st_mode & 077) != 0)
      out.push_back({p, static_cast<mode_t>(st.st_mode & 07777)});
  }
  return out;
}

} // namespace mailassay::os
