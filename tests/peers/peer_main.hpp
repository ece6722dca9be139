#pragma once

// What the peers' standalone programs (mailassay-dns-peer,
// mailassay-smtp-peer) share: reading their script file and running until
// Ctrl-C or SIGTERM.

#include <csignal>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

namespace mailassay::tests::peers {

/// The text of file `path`; nullopt after "<program>: cannot read <path>"
/// on stderr.
inline std::optional<std::string> read_peer_file(const char* program,
                                                 const std::string& path) {
  std::ifstream in{path};
  if (!in) {
    std::cerr << program << ": cannot read " << path << "\n";
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Blocks SIGINT and SIGTERM in this thread and in the threads it starts
/// afterwards (call it before starting a peer), so that only
/// `wait_for_stop_signal` receives them.
inline sigset_t block_stop_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

/// Waits until one of `signals` (from `block_stop_signals`) arrives.
inline void wait_for_stop_signal(const sigset_t& signals) {
  int sig = 0;
  sigwait(&signals, &sig);
}

} // namespace mailassay::tests::peers
