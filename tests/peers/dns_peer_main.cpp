// mailassay-dns-peer: serves a zone file over UDP and TCP on a loopback
// address, for manual runs and benchmarks.
//
//   mailassay-dns-peer --zone FILE [--listen 127.0.0.1:5353] [--no-tcp]
//
// See parse_dns_zone() in dns_peer.hpp for the zone format.

#include "tests/peers/dns_peer.hpp"
#include "tests/peers/peer_main.hpp"

#include <iostream>
#include <string>

using mailassay::tests::peers::block_stop_signals;
using mailassay::tests::peers::dns_peer;
using mailassay::tests::peers::read_peer_file;
using mailassay::tests::peers::wait_for_stop_signal;

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
  auto text = read_peer_file("mailassay-dns-peer", zone_file);
  if (!text)
    return 1;

  auto signals = block_stop_signals();
  try {
    auto entries = mailassay::tests::peers::parse_dns_zone(*text);
    dns_peer peer{opts};
    for (auto& [name, entry] : entries)
      peer.set(name, std::move(entry));
    std::cout << "mailassay-dns-peer listening on " << peer.server()
              << (tcp ? " (udp+tcp)" : " (udp)") << ", " << entries.size()
              << " names" << std::endl;
    wait_for_stop_signal(signals);
    peer.stop();
    std::cout << "mailassay-dns-peer: " << peer.total_queries() << " queries ("
              << peer.tcp_queries() << " over tcp)" << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "mailassay-dns-peer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
