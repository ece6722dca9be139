#include "core/smtp/capabilities.hpp"
#include "core/smtp/classify.hpp"
#include "core/smtp/reply.hpp"
#include "core/smtp/session.hpp"
#include "tests/peers/smtp_peer.hpp"

#include <doctest/doctest.h>
#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <chrono>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace mailassay::tests::peers;
namespace smtp = mailassay::core::smtp;
using namespace std::chrono_literals;

namespace {

// A plain blocking SMTP client for driving the peer; TLS after starttls().
class client {
public:
  client(const smtp_peer& peer) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(peer.port());
    inet_pton(AF_INET, peer.address().c_str(), &sa.sin_addr);
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
      throw std::runtime_error("connect failed");
  }
  ~client() {
    if (ssl_ != nullptr) {
      SSL_free(ssl_);
      SSL_CTX_free(ctx_);
    }
    ::close(fd_);
  }

  // Reads raw bytes; empty on close, error or timeout.
  std::string read_some(int timeout_ms = 5000) {
    if (ssl_ == nullptr) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0)
        return {};
    }
    char buf[4096];
    long n = ssl_ != nullptr ? SSL_read(ssl_, buf, sizeof buf)
                             : ::recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  }

  // Reads one reply; nothing on close, timeout or garbage.
  std::optional<smtp::reply> reply(int timeout_ms = 5000) {
    for (;;) {
      auto bytes = read_some(timeout_ms);
      if (bytes.empty())
        return std::nullopt;
      auto out = parser_.feed(bytes);
      if (out.error != smtp::parse_error::none)
        return std::nullopt;
      if (!out.replies.empty())
        return out.replies.front();
    }
  }

  void send(const std::string& line) {
    auto data = line + "\r\n";
    if (ssl_ != nullptr)
      SSL_write(ssl_, data.data(), static_cast<int>(data.size()));
    else
      ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
  }

  int command(const std::string& line) {
    send(line);
    auto r = reply();
    return r ? r->code : 0;
  }

  bool starttls() {
    ctx_ = SSL_CTX_new(TLS_client_method());
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    parser_.reset();
    return SSL_connect(ssl_) == 1;
  }

  smtp::reply_parser& parser() { return parser_; }
  int fd() const { return fd_; }

private:
  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  smtp::reply_parser parser_;
};

int rcpt_code(const smtp_peer& peer, const std::string& address) {
  client c{peer};
  REQUIRE(c.reply());
  REQUIRE(c.command("EHLO t.test") == 250);
  REQUIRE(c.command("MAIL FROM:<v@t.test>") == 250);
  return c.command("RCPT TO:<" + address + ">");
}

// The twenty-line driver the actors will be: a core session over a socket.
smtp::session_result drive(const smtp_peer& peer, smtp::session_config cfg,
                           smtp::session_request req) {
  auto made = smtp::session::make(std::move(cfg), std::move(req));
  REQUIRE(made.has_value());
  auto& s = *made;
  client c{peer};
  auto a = s.on_connected();
  while (!s.done()) {
    if (a.kind == smtp::action_kind::send) {
      c.send(a.line.substr(0, a.line.size() - 2));
      a = {};
    } else if (a.kind == smtp::action_kind::start_tls) {
      a = c.starttls() ? s.on_tls_established() : s.on_tls_failed();
    } else if (a.kind == smtp::action_kind::wait) {
      auto bytes = c.read_some(2000);
      a = bytes.empty() ? s.on_connection_closed() : s.on_data(bytes);
    }
  }
  return s.result();
}

} // namespace

TEST_SUITE("tests.peers.smtp_peer") {
  TEST_CASE("greets, advertises extensions and counts what it sees") {
    smtp_peer peer;
    client c{peer};
    auto greeting = c.reply();
    REQUIRE(greeting);
    CHECK(greeting->code == 220);
    c.send("EHLO t.test");
    auto ehlo = c.reply();
    REQUIRE(ehlo);
    auto caps = smtp::parse_ehlo(*ehlo);
    CHECK(caps.esmtp);
    CHECK(caps.smtputf8);
    CHECK(caps.enhanced_status_codes);
    CHECK(caps.pipelining);
    CHECK_FALSE(caps.starttls);
    CHECK(c.command("MAIL FROM:<v@t.test>") == 250);
    CHECK(c.command("RCPT TO:<a@x.test>") == 250);
    CHECK(c.command("DATA") == 554);
    CHECK(c.command("RSET") == 250);
    CHECK(c.command("QUIT") == 221);
    CHECK(peer.connections() == 1);
    CHECK(peer.sessions() == 1);
    CHECK(peer.commands() == 6);
    CHECK(peer.commands("RCPT") == 1);
    CHECK(peer.received().at(2) == "RCPT TO:<a@x.test>");
    peer.reset_counts();
    CHECK(peer.connections() == 0);
  }

  TEST_CASE("answers each recipient behaviour with its reply") {
    smtp_peer peer;
    peer.add_rule("ghost@x.test", smtp_rcpt_behaviour::no_such_user);
    peer.add_rule("full@x.test", smtp_rcpt_behaviour::mailbox_full);
    peer.add_rule("off@x.test", smtp_rcpt_behaviour::disabled);
    peer.add_rule("many@x.test", smtp_rcpt_behaviour::too_many);
    peer.add_rule("spam-*", smtp_rcpt_behaviour::policy_block);
    peer.add_rule(
        {"odd@*", smtp_rcpt_behaviour::custom, 0ms, "550 Unrouteable address"});
    peer.add_rule("*@catchall.test", smtp_rcpt_behaviour::accept);
    peer.set_default({"", smtp_rcpt_behaviour::no_such_user, 0ms, ""});
    struct row {
      const char* address;
      int code;
      smtp::rcpt_verdict verdict;
    };
    const row rows[] = {
        {"ghost@x.test", 550, smtp::rcpt_verdict::no_such_user},
        {"full@x.test", 552, smtp::rcpt_verdict::mailbox_full},
        {"off@x.test", 550, smtp::rcpt_verdict::disabled},
        {"many@x.test", 452, smtp::rcpt_verdict::too_many_recipients},
        {"spam-trap@x.test", 554, smtp::rcpt_verdict::blocked_by_policy},
        {"odd@y.test", 550, smtp::rcpt_verdict::no_such_user},
        {"anything@CatchAll.test", 250, smtp::rcpt_verdict::accepted},
        {"unlisted@x.test", 550, smtp::rcpt_verdict::no_such_user},
    };
    for (const auto& r : rows) {
      CAPTURE(r.address);
      client c{peer};
      REQUIRE(c.reply());
      REQUIRE(c.command("EHLO t.test") == 250);
      REQUIRE(c.command("MAIL FROM:<v@t.test>") == 250);
      c.send(std::string{"RCPT TO:<"} + r.address + ">");
      auto reply = c.reply();
      REQUIRE(reply);
      CHECK(reply->code == r.code);
      CHECK(smtp::classify_rcpt(*reply).verdict == r.verdict);
    }
  }

  TEST_CASE("answers 452 after the configured RCPTs per session") {
    smtp_peer_options o;
    o.max_rcpts_per_session = 2;
    smtp_peer peer{o};
    client c{peer};
    REQUIRE(c.reply());
    REQUIRE(c.command("EHLO t.test") == 250);
    REQUIRE(c.command("MAIL FROM:<v@t.test>") == 250);
    CHECK(c.command("RCPT TO:<a@x.test>") == 250);
    CHECK(c.command("RSET") == 250);
    CHECK(c.command("MAIL FROM:<v@t.test>") == 250);
    CHECK(c.command("RCPT TO:<b@x.test>") == 250);
    CHECK(c.command("RCPT TO:<c@x.test>") == 452);
  }

  TEST_CASE("answers 452 after the configured RCPTs per transaction, and "
            "counts again from each MAIL FROM") {
    smtp_peer_options o;
    o.max_rcpts_per_transaction = 1;
    smtp_peer peer{o};
    client c{peer};
    REQUIRE(c.reply());
    REQUIRE(c.command("EHLO t.test") == 250);
    REQUIRE(c.command("MAIL FROM:<v@t.test>") == 250);
    CHECK(c.command("RCPT TO:<a@x.test>") == 250);
    CHECK(c.command("RCPT TO:<b@x.test>") == 452);
    CHECK(c.command("RSET") == 250);
    CHECK(c.command("MAIL FROM:<v@t.test>") == 250);
    CHECK(c.command("RCPT TO:<b@x.test>") == 250);
  }

  TEST_CASE("greylists until the same pair retries after the delay") {
    smtp_peer peer;
    peer.add_rule({"grey@x.test", smtp_rcpt_behaviour::greylist, 150ms, ""});
    CHECK(rcpt_code(peer, "grey@x.test") == 450);
    CHECK(rcpt_code(peer, "grey@x.test") == 450);
    std::this_thread::sleep_for(200ms);
    CHECK(rcpt_code(peer, "grey@x.test") == 250);
    CHECK(peer.connections() == 3);
  }

  TEST_CASE("drops the connection after a dropping RCPT") {
    smtp_peer peer;
    peer.add_rule("drop@x.test", smtp_rcpt_behaviour::drop);
    CHECK(rcpt_code(peer, "drop@x.test") == 0);
  }

  TEST_CASE("sends garbage the parser refuses") {
    smtp_peer peer;
    peer.add_rule("junk@x.test", smtp_rcpt_behaviour::garbage);
    client c{peer};
    REQUIRE(c.reply());
    REQUIRE(c.command("EHLO t.test") == 250);
    REQUIRE(c.command("MAIL FROM:<v@t.test>") == 250);
    c.send("RCPT TO:<junk@x.test>");
    CHECK_FALSE(c.reply());
    CHECK(c.parser().error() != smtp::parse_error::none);

    smtp_peer_options o;
    o.greeting = smtp_greeting::garbage;
    smtp_peer noisy{o};
    client d{noisy};
    CHECK_FALSE(d.reply());
    CHECK(d.parser().error() == smtp::parse_error::bad_code);
  }

  TEST_CASE("a tarpit holds connections silently and still stops") {
    smtp_peer_options o;
    o.greeting = smtp_greeting::tarpit;
    smtp_peer peer{o};
    client a{peer}, b{peer};
    CHECK(a.read_some(300).empty());
    CHECK(peer.active_connections() == 2);
    auto start = std::chrono::steady_clock::now();
    peer.stop();
    CHECK(std::chrono::steady_clock::now() - start < 2s);
  }

  TEST_CASE("a tarpitted RCPT never gets a reply") {
    smtp_peer peer;
    peer.add_rule("slow@x.test", smtp_rcpt_behaviour::tarpit);
    client c{peer};
    REQUIRE(c.reply());
    REQUIRE(c.command("EHLO t.test") == 250);
    REQUIRE(c.command("MAIL FROM:<v@t.test>") == 250);
    c.send("RCPT TO:<slow@x.test>");
    CHECK_FALSE(c.reply(300));
  }

  TEST_CASE("a tarpitted verb never gets a reply") {
    smtp_peer_options o;
    o.tarpit_verb = "mail";
    smtp_peer peer{o};
    client c{peer};
    REQUIRE(c.reply());
    REQUIRE(c.command("EHLO t.test") == 250);
    c.send("MAIL FROM:<v@t.test>");
    CHECK_FALSE(c.reply(300));
    CHECK(peer.active_connections() == 1);
  }

  TEST_CASE("a busy server greets with 421 and closes") {
    smtp_peer_options o;
    o.greeting = smtp_greeting::busy;
    smtp_peer peer{o};
    client c{peer};
    auto r = c.reply();
    REQUIRE(r);
    CHECK(r->code == 421);
    CHECK(c.read_some(1000).empty());
  }

  TEST_CASE("drips replies one byte at a time") {
    smtp_peer_options o;
    o.drip_delay = 5ms;
    smtp_peer peer{o};
    client c{peer};
    auto start = std::chrono::steady_clock::now();
    auto r = c.reply();
    REQUIRE(r);
    CHECK(r->code == 220);
    // "220 mx.peer.test ESMTP mailassay-smtp-peer\r\n" is 45 bytes.
    CHECK(std::chrono::steady_clock::now() - start >= 200ms);
  }

  TEST_CASE("refuses EHLO when told so and accepts HELO") {
    smtp_peer_options o;
    o.ehlo = false;
    smtp_peer peer{o};
    client c{peer};
    REQUIRE(c.reply());
    CHECK(c.command("EHLO t.test") == 502);
    CHECK(c.command("HELO t.test") == 250);
    CHECK(peer.sessions() == 1);
  }

  TEST_CASE("upgrades with STARTTLS and a self-signed certificate") {
    smtp_peer_options o;
    o.starttls = true;
    o.require_tls = true;
    smtp_peer peer{o};
    client c{peer};
    REQUIRE(c.reply());
    c.send("EHLO t.test");
    auto ehlo = c.reply();
    REQUIRE(ehlo);
    CHECK(smtp::parse_ehlo(*ehlo).starttls);
    CHECK(c.command("MAIL FROM:<v@t.test>") == 530);
    REQUIRE(c.command("STARTTLS") == 220);
    REQUIRE(c.starttls());
    c.send("EHLO t.test");
    auto again = c.reply();
    REQUIRE(again);
    CHECK_FALSE(smtp::parse_ehlo(*again).starttls);
    CHECK(c.command("MAIL FROM:<v@t.test>") == 250);
    CHECK(c.command("RCPT TO:<a@x.test>") == 250);
    CHECK(peer.tls_sessions() == 1);
  }

  TEST_CASE("binds any 127.0.0.x address and refuses every other") {
    smtp_peer_options o;
    o.address = "127.0.0.2";
    smtp_peer peer{o};
    CHECK(peer.address() == "127.0.0.2");
    CHECK(peer.port() != 0);
    CHECK(rcpt_code(peer, "a@x.test") == 250);
    for (const char* bad :
         {"0.0.0.0", "10.0.0.1", "192.168.1.1", "::1", "localhost"}) {
      CAPTURE(bad);
      smtp_peer_options b;
      b.address = bad;
      CHECK_THROWS_AS(smtp_peer{b}, std::runtime_error);
    }
  }

  TEST_CASE("parses a script and names a bad line") {
    auto s = parse_smtp_peer_script(R"(
# comment
listen 127.0.0.3:2526
hostname mx.bench.test
starttls required
max-rcpts 20
max-rcpts-per-transaction 1
drip 10
tarpit-on DATA
rcpt ghost@x.test reject
rcpt grey-* greylist 3000
rcpt odd@* custom 550 Unrouteable address
default full
)");
    CHECK(s.options.address == "127.0.0.3");
    CHECK(s.options.port == 2526);
    CHECK(s.options.require_tls);
    CHECK(s.options.max_rcpts_per_session == 20);
    CHECK(s.options.max_rcpts_per_transaction == 1);
    CHECK(s.options.drip_delay == 10ms);
    CHECK(s.options.tarpit_verb == "DATA");
    REQUIRE(s.rules.size() == 3);
    CHECK(s.rules[1].greylist_delay == 3000ms);
    CHECK(s.rules[2].reply == "550 Unrouteable address");
    CHECK(s.fallback.behaviour == smtp_rcpt_behaviour::mailbox_full);
    CHECK_THROWS_WITH_AS(parse_smtp_peer_script("\nrcpt a@b nonsense"),
                         "smtp peer script line 2: unknown behaviour",
                         std::runtime_error);
  }

  TEST_CASE("a core session over a socket probes the peer end to end") {
    smtp_peer_options o;
    o.starttls = true;
    o.max_rcpts_per_session = 3;
    smtp_peer peer{o};
    peer.add_rule("ghost@x.test", smtp_rcpt_behaviour::no_such_user);
    smtp::session_config cfg;
    cfg.host = "mx.peer.test";
    cfg.helo = "probe.mailassay.test";
    cfg.mail_from = "verify@mailassay.test";
    cfg.tls = smtp::tls_policy::required;
    auto r = drive(peer, cfg,
                   {{"a@x.test", "ghost@x.test", "b@x.test", "c@x.test",
                     "d@x.test\r\nDATA"},
                    "zq81@x.test"});
    CHECK(r.failure == smtp::session_failure::none);
    CHECK(r.tls);
    CHECK(r.addresses[0].rcpt.verdict == smtp::rcpt_verdict::accepted);
    CHECK(r.addresses[1].rcpt.verdict == smtp::rcpt_verdict::no_such_user);
    // a, probe, ghost: the third RCPT was the last allowed.
    CHECK(r.addresses[2].rcpt.verdict ==
          smtp::rcpt_verdict::too_many_recipients);
    CHECK(r.addresses[3].retry_in_new_session());
    CHECK(r.addresses[4].rcpt.verdict == smtp::rcpt_verdict::protocol_error);
    // The probe was accepted, then a real address refused as unknown: not
    // a catch-all (a refusal outranks an accepted random address).
    CHECK(r.catch_all == false);
    CHECK(peer.commands("DATA") == 0);
    CHECK(peer.tls_sessions() == 1);
    for (const auto& line : peer.received())
      CHECK(line.find('\r') == std::string::npos);
  }
}
