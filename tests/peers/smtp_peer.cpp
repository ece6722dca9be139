#include "tests/peers/smtp_peer.hpp"

#include "tests/peers/script.hpp"
#include "tests/peers/tls_identity.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <stdexcept>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace mailassay::tests::peers {

namespace {

using clock_type = std::chrono::steady_clock;
constexpr std::size_t max_line = 4096;
constexpr std::size_t max_received = 10000;

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string upper(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    if (c >= 'a' && c <= 'z')
      c = static_cast<char>(c - 'a' + 'A');
  return out;
}

bool glob(std::string_view p, std::string_view s) {
  if (p.empty())
    return s.empty();
  if (p[0] == '*')
    return glob(p.substr(1), s) || (!s.empty() && glob(p, s.substr(1)));
  return !s.empty() && (p[0] == '?' || p[0] == s[0]) &&
         glob(p.substr(1), s.substr(1));
}

bool matches(const std::string& pattern, const std::string& address) {
  auto p = lower(pattern);
  auto a = lower(address);
  if (p.find('@') == std::string::npos)
    a = a.substr(0, a.rfind('@'));
  return glob(p, a);
}

// The path inside "RCPT TO:<path> params" / "MAIL FROM:<path>".
std::string path_of(std::string_view line) {
  auto open = line.find('<');
  auto close = line.find('>', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos)
    return {};
  return std::string{line.substr(open + 1, close - open - 1)};
}

} // namespace

struct smtp_peer::impl {
  smtp_peer_options opts;
  int listen_fd = -1;
  int wake_fd = -1;
  std::uint16_t port = 0;
  std::unique_ptr<tls_identity> tls;
  std::atomic<bool> stopping{false};
  std::atomic<bool> held_released{false};
  std::atomic<std::size_t> held_now{0};
  std::thread acceptor;

  mutable std::mutex mutex;
  std::vector<smtp_rcpt_rule> rules;
  smtp_rcpt_rule fallback;
  std::map<std::pair<std::string, std::string>, clock_type::time_point>
      greylist;
  std::size_t connections = 0;
  // The source address of each connection accepted, oldest first.
  std::vector<std::string> clients;
  std::size_t active = 0;
  // Connections from accept until QUIT (or close), and their peak: a
  // client that waits for 221 before opening the next connection never
  // overlaps in this count.
  std::size_t dialogues = 0;
  std::size_t peak_dialogues = 0;
  std::size_t sessions = 0;
  std::size_t commands = 0;
  std::size_t tls_sessions = 0;
  std::map<std::string, std::size_t> verbs;
  std::vector<std::string> received;
  // Connection threads and whether each has finished (reaped on accept).
  std::list<std::pair<std::thread, std::shared_ptr<std::atomic<bool>>>> workers;

  ~impl() {
    for (int fd : {listen_fd, wake_fd})
      if (fd >= 0)
        ::close(fd);
  }

  // One client connection, served by its own thread.
  struct conn {
    impl& peer;
    int fd;
    SSL* ssl = nullptr;
    std::string buffer;

    bool in_dialogue = true;

    conn(impl& p, int socket) : peer(p), fd(socket) {}

    void end_dialogue() {
      std::lock_guard guard{peer.mutex};
      if (in_dialogue)
        --peer.dialogues;
      in_dialogue = false;
    }

    ~conn() {
      end_dialogue();
      if (ssl != nullptr) {
        SSL_shutdown(ssl);
        SSL_free(ssl);
      }
      ::close(fd);
    }

    // Waits for input; false on stop or error.
    bool wait_readable() {
      if (ssl != nullptr && SSL_pending(ssl) > 0)
        return true;
      pollfd fds[2] = {{fd, POLLIN, 0}, {peer.wake_fd, POLLIN, 0}};
      while (!peer.stopping) {
        int n = ::poll(fds, 2, 200);
        if (n < 0 && errno != EINTR)
          return false;
        if (n > 0)
          return !peer.stopping && (fds[0].revents != 0);
      }
      return false;
    }

    bool read_line(std::string& line) {
      for (;;) {
        if (auto nl = buffer.find('\n'); nl != std::string::npos) {
          line = buffer.substr(0, nl);
          buffer.erase(0, nl + 1);
          if (!line.empty() && line.back() == '\r')
            line.pop_back();
          return true;
        }
        if (buffer.size() > max_line) {
          buffer.clear();
          line = std::string(max_line + 1, 'x');
          return true;
        }
        if (!wait_readable())
          return false;
        char chunk[4096];
        long got = ssl != nullptr ? SSL_read(ssl, chunk, sizeof chunk)
                                  : ::recv(fd, chunk, sizeof chunk, 0);
        if (got <= 0)
          return false;
        buffer.append(chunk, static_cast<std::size_t>(got));
      }
    }

    bool write_raw(const char* p, std::size_t n) {
      while (n > 0) {
        long put = ssl != nullptr ? SSL_write(ssl, p, static_cast<int>(n))
                                  : ::send(fd, p, n, MSG_NOSIGNAL);
        if (put <= 0)
          return false;
        p += put;
        n -= static_cast<std::size_t>(put);
      }
      return true;
    }

    bool pause(std::chrono::milliseconds d) {
      auto until = clock_type::now() + d;
      while (!peer.stopping && clock_type::now() < until)
        std::this_thread::sleep_for(std::min<clock_type::duration>(
            until - clock_type::now(), std::chrono::milliseconds{20}));
      return !peer.stopping;
    }

    bool reply(std::string text) {
      if (peer.opts.reply_delay.count() > 0 && !pause(peer.opts.reply_delay))
        return false;
      text += "\r\n";
      if (peer.opts.drip_delay.count() == 0)
        return write_raw(text.data(), text.size());
      for (char c : text)
        if (!write_raw(&c, 1) || !pause(peer.opts.drip_delay))
          return false;
      return true;
    }

    void hang() {
      // Tarpit: hold the connection until the client goes or we stop.
      std::string ignored;
      while (read_line(ignored)) {
      }
    }

    void serve() {
      const auto& o = peer.opts;
      switch (o.greeting) {
        case smtp_greeting::busy:
          reply("421 4.3.2 " + o.hostname + " busy, try again later");
          return;
        case smtp_greeting::tarpit: hang(); return;
        case smtp_greeting::garbage:
          write_raw("\x16\x03\x01\x00\xa5garbage\xff\r\n", 15);
          return;
        case smtp_greeting::reject:
          reply("554 5.7.1 " + o.hostname + " no SMTP service here");
          break;
        case smtp_greeting::normal:
          if (!reply("220 " + o.hostname + " ESMTP mailassay-smtp-peer"))
            return;
      }
      std::string sender;
      bool in_mail = false;
      std::size_t rcpts = 0;
      std::size_t transaction_rcpts = 0;
      std::string line;
      while (read_line(line)) {
        auto verb = upper(line.substr(0, line.find(' ')));
        if (verb.rfind("MAIL", 0) == 0)
          verb = "MAIL";
        if (verb.rfind("RCPT", 0) == 0)
          verb = "RCPT";
        {
          std::lock_guard guard{peer.mutex};
          ++peer.commands;
          ++peer.verbs[verb];
          if (peer.received.size() < max_received)
            peer.received.push_back(line);
        }
        bool ok = true;
        if (!o.tarpit_verb.empty() && verb == upper(o.tarpit_verb)) {
          hang();
          return;
        }
        if (line.size() > max_line) {
          ok = reply("500 5.5.0 Line too long");
        } else if (o.greeting == smtp_greeting::reject && verb != "QUIT") {
          ok = reply("503 5.5.1 No service");
        } else if (verb == "EHLO") {
          if (!o.ehlo) {
            ok = reply("502 5.5.1 EHLO not implemented");
            continue;
          }
          std::string r = "250-" + o.hostname + " greets you\r\n";
          r += "250-PIPELINING\r\n250-SIZE 10240000\r\n250-8BITMIME\r\n";
          if (o.smtputf8)
            r += "250-SMTPUTF8\r\n";
          if (o.starttls && ssl == nullptr)
            r += "250-STARTTLS\r\n";
          r += "250 ENHANCEDSTATUSCODES";
          peer.count_session();
          ok = reply(r);
        } else if (verb == "HELO") {
          peer.count_session();
          ok = reply("250 " + o.hostname);
        } else if (verb == "STARTTLS") {
          if (!o.starttls || ssl != nullptr) {
            ok = reply("454 4.7.0 TLS not available");
            continue;
          }
          if (!reply("220 2.0.0 Ready to start TLS"))
            return;
          // RFC 3207 §4.2: forget anything sent in clear before the
          // handshake.
          buffer.clear();
          ssl = SSL_new(peer.tls->ctx());
          SSL_set_fd(ssl, fd);
          if (SSL_accept(ssl) != 1)
            return;
          in_mail = false;
          std::lock_guard guard{peer.mutex};
          ++peer.tls_sessions;
        } else if (verb == "MAIL") {
          if (o.require_tls && ssl == nullptr)
            ok = reply("530 5.7.0 Must issue a STARTTLS command first");
          else if (!o.mail_reply.empty())
            ok = reply(o.mail_reply);
          else {
            sender = lower(path_of(line));
            in_mail = true;
            transaction_rcpts = 0;
            ok = reply("250 2.1.0 Ok");
          }
        } else if (verb == "RCPT") {
          if (!in_mail) {
            ok = reply("503 5.5.1 Error: need MAIL command");
            continue;
          }
          ++rcpts;
          if (o.max_rcpts_per_session > 0 && rcpts > o.max_rcpts_per_session) {
            ok = reply("452 4.5.3 Error: too many recipients");
            continue;
          }
          if (o.max_rcpts_per_transaction > 0 &&
              ++transaction_rcpts > o.max_rcpts_per_transaction) {
            ok = reply("452 4.5.3 Too many recipients "
                       "(AS780090) [peer.prod.outlook.test]");
            continue;
          }
          auto address = path_of(line);
          auto rule = peer.find(address);
          switch (rule.behaviour) {
            case smtp_rcpt_behaviour::accept: ok = reply("250 2.1.5 Ok"); break;
            case smtp_rcpt_behaviour::no_such_user:
              ok = reply("550 5.1.1 <" + address +
                         ">: Recipient address rejected: User unknown");
              break;
            case smtp_rcpt_behaviour::too_many:
              ok = reply("452 4.5.3 Error: too many recipients");
              break;
            case smtp_rcpt_behaviour::mailbox_full:
              ok = reply("552 5.2.2 <" + address + ">: Mailbox full");
              break;
            case smtp_rcpt_behaviour::disabled:
              ok = reply("550 5.2.1 <" + address + ">: Mailbox disabled");
              break;
            case smtp_rcpt_behaviour::greylist:
              ok = reply(peer.greylisted(sender, address, rule.greylist_delay)
                             ? "450 4.2.0 <" + address +
                                   ">: Recipient address rejected: Greylisted"
                             : "250 2.1.5 Ok");
              break;
            case smtp_rcpt_behaviour::policy_block:
              ok = reply("554 5.7.1 Service unavailable; Client host "
                         "[127.0.0.1] blocked using zen.spamhaus.org");
              break;
            case smtp_rcpt_behaviour::drop: return;
            case smtp_rcpt_behaviour::garbage:
              ok = write_raw("\x00\xffgarbage\r\n", 11);
              break;
            case smtp_rcpt_behaviour::tarpit: hang(); return;
            case smtp_rcpt_behaviour::custom: ok = reply(rule.reply); break;
            case smtp_rcpt_behaviour::held: {
              ++peer.held_now;
              while (!peer.held_released && pause(std::chrono::milliseconds{5}))
                ;
              --peer.held_now;
              ok = reply("250 2.1.5 Ok");
              break;
            }
          }
        } else if (verb == "RSET") {
          in_mail = false;
          ok = reply("250 2.0.0 Ok");
        } else if (verb == "NOOP") {
          ok = reply("250 2.0.0 Ok");
        } else if (verb == "VRFY") {
          ok = reply("252 2.0.0 Cannot VRFY user");
        } else if (verb == "DATA" || verb == "BDAT") {
          ok = reply("554 5.5.1 The test peer takes no mail");
        } else if (verb == "QUIT") {
          end_dialogue();
          reply("221 2.0.0 Bye");
          return;
        } else {
          ok = reply("500 5.5.2 Error: command not recognized");
        }
        if (!ok)
          return;
      }
    }
  };

  // Counted before the reply goes out, so a client that has read it sees
  // the count.
  void count_session() {
    std::lock_guard guard{mutex};
    ++sessions;
  }

  smtp_rcpt_rule find(const std::string& address) {
    std::lock_guard guard{mutex};
    for (const auto& r : rules)
      if (matches(r.pattern, address))
        return r;
    return fallback;
  }

  // Returns whether the (sender, recipient) pair is still to be deferred.
  bool greylisted(const std::string& sender, const std::string& address,
                  std::chrono::milliseconds delay) {
    std::lock_guard guard{mutex};
    auto key = std::pair{sender, lower(address)};
    auto now = clock_type::now();
    auto [it, added] = greylist.try_emplace(key, now);
    return added || now - it->second < delay;
  }

  void accept_loop() {
    pollfd fds[2] = {{listen_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    while (!stopping) {
      int n = ::poll(fds, 2, 200);
      if (n <= 0 || stopping || (fds[0].revents & POLLIN) == 0)
        continue;
      sockaddr_in from{};
      socklen_t from_len = sizeof from;
      int fd =
          ::accept(listen_fd, reinterpret_cast<sockaddr*>(&from), &from_len);
      if (fd < 0)
        continue;
      char from_text[INET_ADDRSTRLEN] = {};
      ::inet_ntop(AF_INET, &from.sin_addr, from_text, sizeof from_text);
      std::lock_guard guard{mutex};
      ++connections;
      if (clients.size() < 10000)
        clients.emplace_back(from_text);
      ++active;
      peak_dialogues = std::max(peak_dialogues, ++dialogues);
      for (auto it = workers.begin(); it != workers.end();) {
        if (*it->second) {
          it->first.join();
          it = workers.erase(it);
        } else {
          ++it;
        }
      }
      auto finished = std::make_shared<std::atomic<bool>>(false);
      workers.emplace_back(std::thread{[this, fd, finished] {
                             // TLS writes (SSL_write, the close_notify of
                             // SSL_shutdown) to a client that has gone would
                             // raise SIGPIPE in the test's process: blocked
                             // here, they fail with EPIPE instead.
                             sigset_t pipe;
                             sigemptyset(&pipe);
                             sigaddset(&pipe, SIGPIPE);
                             pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
                             {
                               conn c{*this, fd};
                               c.serve();
                             }
                             std::lock_guard g{mutex};
                             --active;
                             *finished = true;
                           }},
                           finished);
    }
  }
};

smtp_peer_script parse_smtp_peer_script(std::string_view text) {
  smtp_peer_script out;
  for_each_script_line(text, "smtp peer script", [&](const script_line& line) {
    const auto& tok = line.words;
    auto fail = [&](const std::string& why) { line.fail(why); };
    auto number = [&](const std::string& s) { return line.decimal(s, 9); };
    auto rest = [&](std::size_t from) {
      std::string r;
      for (auto i = from; i < tok.size(); ++i)
        r += (r.empty() ? "" : " ") + tok[i];
      return r;
    };
    auto on_off = [&]() {
      if (tok.size() != 2 || (tok[1] != "on" && tok[1] != "off"))
        fail("expected on or off");
      return tok[1] == "on";
    };
    auto behaviour = [&](std::size_t at, smtp_rcpt_rule& rule) {
      static const std::map<std::string, smtp_rcpt_behaviour> names{
          {"accept", smtp_rcpt_behaviour::accept},
          {"reject", smtp_rcpt_behaviour::no_such_user},
          {"too-many", smtp_rcpt_behaviour::too_many},
          {"full", smtp_rcpt_behaviour::mailbox_full},
          {"disabled", smtp_rcpt_behaviour::disabled},
          {"greylist", smtp_rcpt_behaviour::greylist},
          {"block", smtp_rcpt_behaviour::policy_block},
          {"drop", smtp_rcpt_behaviour::drop},
          {"garbage", smtp_rcpt_behaviour::garbage},
          {"tarpit", smtp_rcpt_behaviour::tarpit},
          {"custom", smtp_rcpt_behaviour::custom},
          {"held", smtp_rcpt_behaviour::held}};
      if (at >= tok.size() || names.count(tok[at]) == 0)
        fail("unknown behaviour");
      rule.behaviour = names.at(tok[at]);
      if (rule.behaviour == smtp_rcpt_behaviour::custom) {
        rule.reply = rest(at + 1);
        if (rule.reply.size() < 3)
          fail("custom needs a reply text");
      } else if (rule.behaviour == smtp_rcpt_behaviour::greylist &&
                 at + 1 < tok.size()) {
        rule.greylist_delay = std::chrono::milliseconds{number(tok[at + 1])};
      } else if (at + 1 != tok.size()) {
        fail("unexpected fields after the behaviour");
      }
    };
    auto& o = out.options;
    const auto& key = tok[0];
    if (key == "listen" && tok.size() == 2) {
      auto colon = tok[1].rfind(':');
      if (colon == std::string::npos)
        fail("expected ADDRESS:PORT");
      o.address = tok[1].substr(0, colon);
      o.port = static_cast<std::uint16_t>(number(tok[1].substr(colon + 1)));
    } else if (key == "hostname" && tok.size() == 2) {
      o.hostname = tok[1];
    } else if (key == "greeting" && tok.size() == 2) {
      static const std::map<std::string, smtp_greeting> names{
          {"normal", smtp_greeting::normal},
          {"busy", smtp_greeting::busy},
          {"reject", smtp_greeting::reject},
          {"tarpit", smtp_greeting::tarpit},
          {"garbage", smtp_greeting::garbage}};
      if (names.count(tok[1]) == 0)
        fail("unknown greeting");
      o.greeting = names.at(tok[1]);
    } else if (key == "ehlo") {
      o.ehlo = on_off();
    } else if (key == "smtputf8") {
      o.smtputf8 = on_off();
    } else if (key == "starttls" && tok.size() == 2) {
      if (tok[1] != "on" && tok[1] != "off" && tok[1] != "required")
        fail("expected on, off or required");
      o.starttls = tok[1] != "off";
      o.require_tls = tok[1] == "required";
    } else if (key == "max-rcpts" && tok.size() == 2) {
      o.max_rcpts_per_session = number(tok[1]);
    } else if (key == "max-rcpts-per-transaction" && tok.size() == 2) {
      o.max_rcpts_per_transaction = number(tok[1]);
    } else if (key == "mail-reply" && tok.size() >= 2) {
      o.mail_reply = rest(1);
    } else if (key == "tarpit-on" && tok.size() == 2) {
      o.tarpit_verb = tok[1];
    } else if (key == "reply-delay" && tok.size() == 2) {
      o.reply_delay = std::chrono::milliseconds{number(tok[1])};
    } else if (key == "drip" && tok.size() == 2) {
      o.drip_delay = std::chrono::milliseconds{number(tok[1])};
    } else if (key == "rcpt" && tok.size() >= 3) {
      smtp_rcpt_rule rule;
      rule.pattern = tok[1];
      behaviour(2, rule);
      out.rules.push_back(std::move(rule));
    } else if (key == "default" && tok.size() >= 2) {
      behaviour(1, out.fallback);
    } else {
      fail("unknown or malformed directive '" + key + "'");
    }
  });
  return out;
}

smtp_peer::smtp_peer(smtp_peer_options opts) : impl_(std::make_unique<impl>()) {
  auto& p = *impl_;
  p.opts = std::move(opts);
  in_addr addr{};
  // A test tool: never listen beyond loopback.
  if (inet_pton(AF_INET, p.opts.address.c_str(), &addr) != 1 ||
      (ntohl(addr.s_addr) >> 24) != 127)
    throw std::runtime_error("smtp_peer: " + p.opts.address +
                             " is not a 127.0.0.0/8 address");
  if (p.opts.starttls)
    p.tls = std::make_unique<tls_identity>(p.opts.hostname,
                                           certificate_kind::name_only);
  p.listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  p.wake_fd = ::eventfd(0, EFD_CLOEXEC);
  int one = 1;
  ::setsockopt(p.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr = addr;
  sa.sin_port = htons(p.opts.port);
  if (p.listen_fd < 0 || p.wake_fd < 0 ||
      ::bind(p.listen_fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      ::listen(p.listen_fd, 1024) != 0)
    throw std::runtime_error("smtp_peer: cannot listen on " + p.opts.address +
                             ":" + std::to_string(p.opts.port) + ": " +
                             std::strerror(errno));
  socklen_t len = sizeof sa;
  ::getsockname(p.listen_fd, reinterpret_cast<sockaddr*>(&sa), &len);
  p.port = ntohs(sa.sin_port);
  p.acceptor = std::thread{[&p] { p.accept_loop(); }};
}

smtp_peer::smtp_peer() : smtp_peer(smtp_peer_options{}) {}

smtp_peer::~smtp_peer() {
  stop();
}

std::string smtp_peer::address() const {
  return impl_->opts.address;
}

std::uint16_t smtp_peer::port() const {
  return impl_->port;
}

void smtp_peer::add_rule(smtp_rcpt_rule rule) {
  std::lock_guard guard{impl_->mutex};
  impl_->rules.push_back(std::move(rule));
}

void smtp_peer::add_rule(std::string pattern, smtp_rcpt_behaviour behaviour) {
  smtp_rcpt_rule rule;
  rule.pattern = std::move(pattern);
  rule.behaviour = behaviour;
  add_rule(std::move(rule));
}

void smtp_peer::clear_rules() {
  std::lock_guard guard{impl_->mutex};
  impl_->rules.clear();
}

void smtp_peer::set_default(smtp_rcpt_rule rule) {
  std::lock_guard guard{impl_->mutex};
  impl_->fallback = std::move(rule);
}

std::size_t smtp_peer::connections() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->connections;
}

std::vector<std::string> smtp_peer::client_addresses() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->clients;
}

std::size_t smtp_peer::active_connections() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->active;
}

std::size_t smtp_peer::peak_dialogues() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->peak_dialogues;
}

std::size_t smtp_peer::sessions() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->sessions;
}

std::size_t smtp_peer::commands() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->commands;
}

std::size_t smtp_peer::commands(std::string_view verb) const {
  std::lock_guard guard{impl_->mutex};
  auto it = impl_->verbs.find(upper(verb));
  return it == impl_->verbs.end() ? 0 : it->second;
}

std::size_t smtp_peer::tls_sessions() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->tls_sessions;
}

std::vector<std::string> smtp_peer::received() const {
  std::lock_guard guard{impl_->mutex};
  return impl_->received;
}

std::size_t smtp_peer::held_waiting() const {
  return impl_->held_now.load();
}

void smtp_peer::release_held() {
  impl_->held_released = true;
}

void smtp_peer::reset_counts() {
  std::lock_guard guard{impl_->mutex};
  auto& p = *impl_;
  p.connections = p.sessions = p.commands = p.tls_sessions = 0;
  p.peak_dialogues = p.dialogues;
  p.verbs.clear();
  p.received.clear();
  p.greylist.clear();
}

void smtp_peer::stop() {
  auto& p = *impl_;
  if (p.stopping.exchange(true))
    return;
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(p.wake_fd, &one, sizeof one);
  if (p.acceptor.joinable())
    p.acceptor.join();
  decltype(p.workers) workers;
  {
    std::lock_guard guard{p.mutex};
    workers.swap(p.workers);
  }
  for (auto& w : workers)
    w.first.join();
}

} // namespace mailassay::tests::peers
