// mailassay-dns-peer: serves a zone file over UDP and TCP on a loopback
// address, for manual runs and benchmarks.
//
//   mailassay-dns-peer --zone FILE [--listen 127.0.0.1:5353] [--no-tcp]
//
// See parse_dns_zone() in dns_peer.hpp for the zone format.

#include "tests/peers/dns_peer.hpp"

#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

using mailassay::tests::peers::dns_peer;

namespace {

int usage() {
  std::cerr << "usage: mailassay-dns-peer --zone FILE "
               "[--listen 127.0.0.1:5353] [--no-tcp] [--allow-non-loopback]\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  std::string zone_file;
  std::string listen = "127.0.0.1:5353";
  bool tcp = true;
  bool any_address = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--zone" && i + 1 < argc)
      zone_file = argv[++i];
    else if (arg == "--listen" && i + 1 < argc)
      listen = argv[++i];
    else if (arg == "--no-tcp")
      tcp = false;
    else if (arg == "--allow-non-loopback")
      any_address = true;
    else
      return usage();
  }
  auto colon = listen.rfind(':');
  if (zone_file.empty() || colon == std::string::npos)
    return usage();
  dns_peer::options opts;
  opts.address = listen.substr(0, colon);
  opts.tcp = tcp;
  try {
    opts.port =
        static_cast<std::uint16_t>(std::stoul(listen.substr(colon + 1)));
  } catch (const std::exception&) {
    return usage();
  }
  // The peer is a test tool: keep it off real networks unless asked.
  if (!any_address && opts.address.rfind("127.", 0) != 0) {
    std::cerr << "mailassay-dns-peer: " << opts.address
              << " is not a loopback address (use --allow-non-loopback)\n";
    return 2;
  }
  std::ifstream in{zone_file};
  if (!in) {
    std::cerr << "mailassay-dns-peer: cannot read " << zone_file << "\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  try {
    auto entries = mailassay::tests::peers::parse_dns_zone(text.str());
    dns_peer peer{opts};
    for (auto& [name, entry] : entries)
      peer.set(name, std::move(entry));
    std::cout << "mailassay-dns-peer listening on " << peer.server()
              << (tcp ? " (udp+tcp)" : " (udp)") << ", " << entries.size()
              << " names" << std::endl;
    int sig = 0;
    sigwait(&signals, &sig);
    peer.stop();
    std::cout << "mailassay-dns-peer: " << peer.total_queries() << " queries ("
              << peer.tcp_queries() << " over tcp)" << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "mailassay-dns-peer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
