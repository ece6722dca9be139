#pragma once

// The request framing a connection's socket sees before RESTinio does, so a
// body over its limit is refused while it streams in rather than after it
// was buffered (RESTinio 0.6 calls handlers only with the whole message),
// and a malformed or oversized request is refused with a status instead of
// the silent close RESTinio gives every parser error (http/request_head.hpp
// says what is malformed).
//
// Pure byte logic, no sockets: `http/gated_socket.hpp` feeds it what each
// read brought and answers its refusals. RFC 9112 §2 (message format), §6
// (message body length), §7.1 (chunked coding).

#include "http/request_head.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace mailassay::http {

/// Header name that replaces `Content-Length` in a head whose body is over
/// its limit (same length, so the head is rewritten in place) and the
/// trailer field that ends a chunked body over its limit. A request
/// carrying it is answered 413; a client may not send it (400).
inline constexpr std::string_view refused_marker = "X-Body-Refused";

/// Body limits of one server: the batch upload route and everything else.
struct body_limits {
  std::uint64_t upload = 10u << 20; ///< `POST /v2/batch/upload`.
  std::uint64_t other = 32u << 20;  ///< Any other request.
  /// An upload's head is decided on before any byte of its body reaches
  /// the parser: its scan stops after the head with `verdict::check` (the
  /// socket asks the server, issue #28).
  bool check_uploads = false;
};

/// Follows the HTTP/1.1 requests of one connection byte by byte and decides
/// which bytes reach the HTTP parser.
///
/// ```
/// head --Content-Length <= limit--> length --body read--> head
///   |  \--chunked--> chunk_line <--> chunk_data
///   |                  |  \--size 0--> trailers --empty line--> head
///   |                  \--sum > limit: zero chunk injected--> discard
///   |--Content-Length > limit: renamed to the marker-------> discard
///   |--head larger than the buffer: grow (caller rescans)--> head
///   \--malformed or oversized head, bad chunk line or trailer: refuse
///                                                           --> discard
/// ```
///
/// A head (or chunk-size line, or trailer line) is only decided once it is
/// complete, so its bytes stay in the read buffer until then: `scan`
/// reports them as `keep`, and the caller presents them again at the start
/// of the next scan. A head whose body is over its limit is edited in
/// place: `Content-Length` becomes the marker, so the parser sees a request
/// without a body. A chunked body that passes the limit ends early with a
/// zero chunk carrying the marker as a trailer. A refusal stops delivering:
/// the bytes decided before it are delivered first (their requests are
/// answered), then a scan that starts at the refused request reports it
/// with nothing to deliver, and the caller answers it and closes. After any
/// of these, the rest of the connection's input is discarded.
class body_gate {
public:
  /// What one scan decided about `buf[0, len)`.
  struct verdict {
    std::size_t deliver = 0; ///< `buf[0, deliver)` goes to the parser.
    std::size_t keep = 0;    ///< `buf[len - keep, len)` is undecided.
    /// The undecided head fills the whole buffer: present it again in a
    /// larger one (the head limit bounds how large).
    bool grow = false;
    /// Not 0: the request at the start of the buffer is refused with this
    /// status (`refusal()` says why); nothing is delivered.
    int refuse = 0;
    /// `buf[0, deliver)` ends with the head of an upload whose body follows
    /// (`checked_head()`): it is to be admitted before more is delivered.
    bool check = false;
  };

  /// Tracks requests against `limits` and `head`.
  explicit body_gate(body_limits limits = {}, head_limits head = {})
      : limits_(limits), head_(head) {}

  /// Bytes of the zero chunk that ends a refused chunked body.
  static constexpr std::string_view refused_chunk =
      "0\r\nX-Body-Refused: 1\r\n\r\n";

  /// Scans `buf[0, len)`, which starts with the previous scan's kept bytes;
  /// may rewrite it and write up to `cap` bytes (the injected zero chunk).
  verdict scan(char* buf, std::size_t len, std::size_t cap) {
    std::size_t pos = 0;
    while (pos < len) {
      std::pair<bool, verdict> r{false, {}};
      switch (mode_) {
        case mode::head: r = on_head(buf, pos, len, cap); break;
        case mode::length:
          pos += take_body(len - pos);
          if (remaining_ == 0)
            mode_ = mode::head;
          break;
        case mode::chunk_data: r = on_chunk_data(buf, pos, len); break;
        case mode::chunk_line: r = on_chunk_line(buf, pos, len, cap); break;
        case mode::trailers: r = on_trailer(buf, pos, len, cap); break;
        case mode::discard:
          // Set by an earlier scan (a scan that refuses returns at once).
          return {0, 0, false, 0};
      }
      if (r.first)
        return r.second;
    }
    return {pos, 0, false, 0};
  }

  /// The head of the last upload a scan stopped at (`verdict::check`).
  const std::string& checked_head() const { return checked_head_; }

  /// Whether a body was refused as too large; the connection's input is
  /// then discarded.
  bool refused() const { return refused_; }

  /// Why the last refused request was refused (the error body's message).
  const std::string& refusal() const { return refusal_; }

  /// Whether the gate stands between requests: no head, body or trailer
  /// of a request is partly read (kept bytes aside, which the caller
  /// holds).
  bool idle() const { return mode_ == mode::head; }

  /// Whether the zero chunk of a refused body is still to be delivered (no
  /// room for it in the last buffer); the caller writes `refused_chunk` at
  /// the start of the next buffer and delivers it.
  bool injection_pending() const { return inject_pending_; }

  /// Marks the pending zero chunk as delivered.
  void injected() { inject_pending_ = false; }

private:
  enum class mode { head, length, chunk_line, chunk_data, trailers, discard };

  std::size_t take_body(std::size_t available) {
    auto n = static_cast<std::size_t>(
        std::min<std::uint64_t>(remaining_, available));
    remaining_ -= n;
    return n;
  }

  // Stops at `pos`: the bytes before are delivered now and the rest kept,
  // so the next scan starts at the undecided line; a line at the start of a
  // full buffer asks for a larger one.
  std::pair<bool, verdict> hold(std::size_t pos, std::size_t len,
                                std::size_t cap) {
    if (pos == 0 && len == cap)
      return {true, {0, len, true, 0}};
    return {true, {pos, len - pos, false, 0}};
  }

  // Refuses the request at `pos` (status and message); when bytes precede
  // it, they are delivered first and the refusal is reported by the next
  // scan, which starts here again.
  std::pair<bool, verdict> refuse_at(std::size_t pos, std::size_t len,
                                     int status, std::string message) {
    if (pos > 0)
      return {true, {pos, len - pos, false, 0}};
    refusal_ = std::move(message);
    mode_ = mode::discard;
    return {true, {0, 0, false, status}};
  }

  std::pair<bool, verdict> on_head(char* buf, std::size_t& pos, std::size_t len,
                                   std::size_t cap) {
    // Empty lines before a request line are allowed (RFC 9112 §2.2).
    std::size_t start = pos;
    while (start < len && (buf[start] == '\r' || buf[start] == '\n'))
      ++start;
    if (start == len) {
      pos = len;
      return {false, {}};
    }
    // The head ends with an empty line.
    std::size_t end = 0;
    for (auto p = start; p < len;) {
      auto nl = static_cast<const char*>(std::memchr(buf + p, '\n', len - p));
      if (!nl)
        break;
      auto next = static_cast<std::size_t>(nl - buf) + 1;
      if (next < len && buf[next] == '\n') {
        end = next + 1;
        break;
      }
      if (next + 1 < len && buf[next] == '\r' && buf[next + 1] == '\n') {
        end = next + 2;
        break;
      }
      p = next;
    }
    if (end == 0) {
      auto early = check_head_start({buf + start, len - start}, head_);
      if (early.status)
        return refuse_at(pos, len, early.status, std::move(early.message));
      return hold(pos, len, cap);
    }
    auto facts = check_head({buf + start, end - start}, head_);
    if (facts.status)
      return refuse_at(pos, len, facts.status, std::move(facts.message));
    limit_ = facts.upload ? limits_.upload : limits_.other;
    if (facts.chunked) {
      mode_ = mode::chunk_line;
      body_ = 0;
      trailer_bytes_ = 0;
    } else if (facts.length > limit_) {
      std::memcpy(buf + start + facts.length_at, refused_marker.data(),
                  refused_marker.size());
      refused_ = true;
      mode_ = mode::discard;
      return {true, {end, 0, false, 0}};
    } else if (facts.length > 0) {
      mode_ = mode::length;
      remaining_ = facts.length;
    }
    pos = end;
    if (limits_.check_uploads && facts.upload && !idle()) {
      // The body (whatever of it is here already) waits for the check.
      checked_head_.assign(buf + start, end - start);
      return {true, {end, len - end, false, 0, true}};
    }
    return {false, {}};
  }

  // Ends the chunked body at `pos` with the marked zero chunk and drops the
  // rest of the connection's input.
  std::pair<bool, verdict> refuse_chunked(char* buf, std::size_t pos,
                                          std::size_t cap) {
    refused_ = true;
    mode_ = mode::discard;
    if (cap - pos < refused_chunk.size()) {
      inject_pending_ = true;
      return {true, {pos, 0, false, 0}};
    }
    std::memcpy(buf + pos, refused_chunk.data(), refused_chunk.size());
    return {true, {pos + refused_chunk.size(), 0, false, 0}};
  }

  // Chunk data, then the CRLF that ends it (RFC 9112 §7.1). Exactly CRLF:
  // the parser skips two bytes there whatever they are, so a bare LF would
  // shift its idea of where the next chunk starts away from the gate's.
  std::pair<bool, verdict> on_chunk_data(const char* buf, std::size_t& pos,
                                         std::size_t len) {
    if (remaining_ > 2) {
      auto n = static_cast<std::size_t>(
          std::min<std::uint64_t>(remaining_ - 2, len - pos));
      pos += n;
      remaining_ -= n;
      return {false, {}};
    }
    if (buf[pos] != (remaining_ == 2 ? '\r' : '\n'))
      return refuse_at(pos, len, 400,
                       "Malformed chunked body: chunk data not followed by "
                       "CRLF");
    ++pos;
    if (--remaining_ == 0)
      mode_ = mode::chunk_line;
    return {false, {}};
  }

  std::pair<bool, verdict> on_chunk_line(char* buf, std::size_t& pos,
                                         std::size_t len, std::size_t cap) {
    auto nl = static_cast<const char*>(std::memchr(buf + pos, '\n', len - pos));
    if (!nl) {
      // A size line longer than the whole buffer (a huge extension): no
      // client needs one.
      if (pos == 0 && len == cap)
        return refuse_at(pos, len, 400,
                         "Malformed chunked body: a chunk-size line longer "
                         "than the read buffer");
      return hold(pos, len, cap);
    }
    auto eol = static_cast<std::size_t>(nl - buf);
    std::uint64_t size = 0;
    std::size_t p = pos;
    for (; p < eol; ++p) {
      auto c = static_cast<unsigned char>(buf[p]);
      unsigned d;
      if (c >= '0' && c <= '9')
        d = c - '0';
      else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
      else
        break;
      size = size > (UINT64_MAX >> 4) ? UINT64_MAX : size << 4 | d;
    }
    // After the size: a chunk extension (RFC 9112 §7.1.1), then CRLF. The
    // parser ends the line at its CR and takes the next byte for the LF, so
    // a bare LF (or a CR inside the line) would make it end the line
    // elsewhere than the gate: refused. An extension starts with `;` or a
    // space (what the parser admits) and holds no control character.
    std::string_view ext{buf + p, eol - p};
    bool ext_ok = !ext.empty() && ext.back() == '\r';
    if (ext_ok)
      ext.remove_suffix(1);
    ext_ok =
        ext_ok && (ext.empty() || ext.front() == ';' || ext.front() == ' ');
    for (unsigned char c : ext)
      ext_ok = ext_ok && c >= 0x20 && c != 0x7f;
    if (p == pos || !ext_ok)
      return refuse_at(pos, len, 400,
                       "Malformed chunked body: a bad chunk-size line");
    if (size > limit_ || body_ + size > limit_)
      return refuse_chunked(buf, pos, cap);
    pos = eol + 1;
    if (size == 0) {
      mode_ = mode::trailers;
      return {false, {}};
    }
    body_ += size;
    remaining_ = size + 2; // the data and its CRLF
    mode_ = mode::chunk_data;
    return {false, {}};
  }

  // The trailer section, one field line at a time, up to the empty line.
  std::pair<bool, verdict> on_trailer(char* buf, std::size_t& pos,
                                      std::size_t len, std::size_t cap) {
    auto nl = static_cast<const char*>(std::memchr(buf + pos, '\n', len - pos));
    if (!nl) {
      if (pos == 0 && len == cap)
        return refuse_at(pos, len, 431,
                         "Trailer field longer than the read buffer");
      return hold(pos, len, cap);
    }
    auto eol = static_cast<std::size_t>(nl - buf);
    std::string_view text{buf + pos, eol - pos};
    if (!text.empty() && text.back() == '\r')
      text.remove_suffix(1);
    if (text.empty()) {
      pos = eol + 1;
      mode_ = mode::head;
      return {false, {}};
    }
    trailer_bytes_ += eol + 1 - pos;
    if (trailer_bytes_ > head_.max_bytes)
      return refuse_at(pos, len, 431,
                       "Trailer section longer than " +
                           std::to_string(head_.max_bytes) + " bytes");
    std::string message;
    if (int status = check_trailer_line(text, message))
      return refuse_at(pos, len, status, std::move(message));
    if (text.size() >= refused_marker.size() &&
        check_marker(text.substr(0, refused_marker.size() + 1)))
      return refuse_at(pos, len, 400, "Trailer X-Body-Refused is reserved");
    pos = eol + 1;
    return {false, {}};
  }

  // Whether `s` is "X-Body-Refused:" in any case.
  static bool check_marker(std::string_view s) {
    if (s.size() != refused_marker.size() + 1 || s.back() != ':')
      return false;
    for (std::size_t i = 0; i < refused_marker.size(); ++i) {
      auto a = static_cast<unsigned char>(s[i]) | 0x20u;
      auto b = static_cast<unsigned char>(refused_marker[i]) | 0x20u;
      if (a != b)
        return false;
    }
    return true;
  }

  body_limits limits_;
  head_limits head_;
  mode mode_ = mode::head;
  std::uint64_t limit_ = 0;     // of the current request
  std::uint64_t remaining_ = 0; // bytes of the current body or chunk
  std::uint64_t body_ = 0;      // chunk bytes of the current request so far
  std::size_t trailer_bytes_ = 0;
  std::string checked_head_;
  std::string refusal_;
  bool refused_ = false;
  bool inject_pending_ = false;
};

} // namespace mailassay::http
