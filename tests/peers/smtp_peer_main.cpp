// mailassay-smtp-peer: a scriptable SMTP server on a loopback address, for
// manual runs and benchmarks.
//
//   mailassay-smtp-peer --script FILE [--listen 127.0.0.1:2525]
//
// See parse_smtp_peer_script() in smtp_peer.hpp for the script format, e.g.
//
//   listen 127.0.0.1:2525
//   starttls on
//   max-rcpts 20
//   rcpt ghost@example.test reject
//   rcpt grey-* greylist 3000
//   rcpt *@catchall.test accept
//   rcpt odd@* custom 550 Unrouteable address
//   default accept

#include "tests/peers/peer_main.hpp"
#include "tests/peers/smtp_peer.hpp"

#include <iostream>
#include <string>

using mailassay::tests::peers::block_stop_signals;
using mailassay::tests::peers::read_peer_file;
using mailassay::tests::peers::smtp_peer;
using mailassay::tests::peers::wait_for_stop_signal;

namespace {

int usage() {
  std::cerr << "usage: mailassay-smtp-peer --script FILE "
               "[--listen 127.0.0.1:2525]\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  std::string script_file;
  std::string listen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--script" && i + 1 < argc)
      script_file = argv[++i];
    else if (arg == "--listen" && i + 1 < argc)
      listen = argv[++i];
    else
      return usage();
  }
  if (script_file.empty())
    return usage();
  auto text = read_peer_file("mailassay-smtp-peer", script_file);
  if (!text)
    return 1;

  auto signals = block_stop_signals();
  try {
    auto script = mailassay::tests::peers::parse_smtp_peer_script(*text);
    if (!listen.empty()) {
      auto colon = listen.rfind(':');
      if (colon == std::string::npos)
        return usage();
      script.options.address = listen.substr(0, colon);
      script.options.port =
          static_cast<std::uint16_t>(std::stoul(listen.substr(colon + 1)));
    }
    if (script.options.port == 0)
      script.options.port = 2525;
    smtp_peer peer{script.options};
    for (auto& rule : script.rules)
      peer.add_rule(rule);
    peer.set_default(script.fallback);
    std::cout << "mailassay-smtp-peer: listening on " << peer.address() << ":"
              << peer.port() << std::endl;
    wait_for_stop_signal(signals);
    std::cout << "mailassay-smtp-peer: connections=" << peer.connections()
              << " sessions=" << peer.sessions()
              << " commands=" << peer.commands()
              << " rcpt=" << peer.commands("RCPT") << std::endl;
  } catch (const std::exception& e) {
    std::cerr << "mailassay-smtp-peer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
