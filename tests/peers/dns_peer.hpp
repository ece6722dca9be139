#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mailassay::tests::peers {

/// Query types the peer answers (RFC 1035 §3.2.2, RFC 3596).
enum class dns_type : std::uint16_t {
  a = 1,
  ns = 2,
  cname = 5,
  soa = 6,
  ptr = 12,
  mx = 15,
  txt = 16,
  aaaa = 28,
};

/// One scripted MX record; host "." is a null MX (RFC 7505).
struct dns_mx {
  /// Preference.
  std::uint16_t priority = 10;
  /// Exchange host.
  std::string host;
};

/// The SOA put in the authority section of negative answers (RFC 2308).
struct dns_soa {
  /// MINIMUM field: the negative TTL.
  std::uint32_t minimum = 60;
  /// TTL of the SOA record itself.
  std::uint32_t ttl = 3600;
  /// Primary server name.
  std::string mname = "ns.peer.test";
  /// Responsible mailbox as a name.
  std::string rname = "hostmaster.peer.test";
};

/// What the peer does with a query for a name.
enum class dns_behaviour {
  answer,   ///< Answer from the entry's records (nodata when none match).
  nxdomain, ///< RCODE 3, with the entry's SOA when set.
  servfail, ///< RCODE 2.
  refused,  ///< RCODE 5.
  drop,     ///< Never answer (the client times out).
};

/// The scripted data of one name.
struct dns_entry {
  /// How queries for the name are answered.
  dns_behaviour behaviour = dns_behaviour::answer;
  /// MX records, in answer order.
  std::vector<dns_mx> mx;
  /// IPv4 addresses in text form.
  std::vector<std::string> a;
  /// IPv6 addresses in text form.
  std::vector<std::string> aaaa;
  /// PTR target names (reverse DNS, RFC 1035 §3.3.12).
  std::vector<std::string> ptr;
  /// TXT texts, one record each (split into 255-octet strings on the wire).
  std::vector<std::string> txt;
  /// CNAME target; when set, other records of the name are ignored and the
  /// chain is followed inside the peer's data (at most 8 links).
  std::string cname;
  /// TTL of every record of the name.
  std::uint32_t ttl = 300;
  /// SOA for nxdomain and nodata answers; none by default.
  std::optional<dns_soa> soa;
  /// Time to wait before answering.
  std::chrono::milliseconds delay{0};
  /// Always set TC on UDP answers, forcing the client to retry over TCP
  /// (answers over 512 octets are truncated anyway).
  bool truncate = false;
};

/// Parses a zone text into entries, one directive per line:
/// `NAME [TTL] TYPE DATA...` with TYPE one of `MX prio host`, `A addr`,
/// `AAAA addr`, `PTR name`, `TXT text...` (the line's remaining words
/// joined by one space), `CNAME target`, `SOA minimum [ttl]`, `NXDOMAIN`,
/// `SERVFAIL`, `REFUSED`, `DROP`, `DELAY ms`, `TRUNCATE`; a TTL given on any
/// line applies to the whole name. `#` starts a comment. A name
/// `*.zone` answers every name below `zone` without an entry of its own.
/// Throws std::runtime_error naming the line on a malformed directive.
std::vector<std::pair<std::string, dns_entry>>
parse_dns_zone(std::string_view text);

/// A scriptable authoritative DNS responder for tests and benchmarks: UDP
/// and TCP on one loopback address and port, answers scripted per name,
/// queries counted per name and type. Thread-safe: scripts and counts may
/// be changed and read while it serves. Serves from construction until
/// `stop()` or destruction.
class dns_peer {
public:
  /// Where to listen.
  struct options {
    /// IPv4 address to bind (127.0.0.x for tests).
    std::string address = "127.0.0.1";
    /// Port for UDP and TCP; 0 picks a free one (see `port()`).
    std::uint16_t port = 0;
    /// Whether to serve TCP too (needed for truncated answers).
    bool tcp = true;
  };

  /// Binds and starts serving; throws std::runtime_error when it cannot bind.
  explicit dns_peer(options opts);

  /// Binds 127.0.0.1 on a free port and starts serving.
  dns_peer();

  /// Stops serving.
  ~dns_peer();

  dns_peer(const dns_peer&) = delete;
  dns_peer& operator=(const dns_peer&) = delete;

  /// Returns the bound address.
  std::string address() const;

  /// Returns the bound port (UDP and TCP).
  std::uint16_t port() const;

  /// Returns "address:port", as a resolver server list entry.
  std::string server() const;

  /// Replaces the entry of `name` ("*.zone" for a wildcard).
  void set(std::string_view name, dns_entry entry);

  /// Edits the entry of `name` in place, creating it when missing.
  void update(std::string_view name, const std::function<void(dns_entry&)>& f);

  /// Appends an MX record to `name`.
  void add_mx(std::string_view name, std::uint16_t priority, std::string host);

  /// Appends an A record to `name`.
  void add_a(std::string_view name, std::string address);

  /// Appends an AAAA record to `name`.
  void add_aaaa(std::string_view name, std::string address);

  /// Makes `name` an alias of `target`.
  void set_cname(std::string_view name, std::string target);

  /// Sets how queries for `name` are answered.
  void set_behaviour(std::string_view name, dns_behaviour behaviour);

  /// Sets the TTL of every record of `name`.
  void set_ttl(std::string_view name, std::uint32_t ttl);

  /// Sets the SOA returned with negative answers for `name`.
  void set_soa(std::string_view name, dns_soa soa);

  /// Delays every answer for `name`.
  void set_delay(std::string_view name, std::chrono::milliseconds delay);

  /// Loads a zone text (see `parse_dns_zone`), adding to the current data.
  void load_zone(std::string_view text);

  /// Removes the entry of `name`.
  void remove(std::string_view name);

  /// Removes every entry.
  void clear();

  /// Sets the answer for names without an entry (default: nxdomain).
  void set_default(dns_entry entry);

  /// Returns the number of queries received for `name` and `type`.
  std::size_t queries(std::string_view name, dns_type type) const;

  /// Returns the number of queries received for `name`, all types.
  std::size_t queries(std::string_view name) const;

  /// Returns the number of queries received.
  std::size_t total_queries() const;

  /// Returns the number of queries received over TCP.
  std::size_t tcp_queries() const;

  /// Returns the most delayed answers that were waiting at once.
  std::size_t peak_delayed() const;

  /// Sets every count to zero.
  void reset_counts();

  /// Stops serving and closes the sockets; idempotent.
  void stop();

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace mailassay::tests::peers
