#pragma once

// The request framing a connection's socket sees before RESTinio does, so a
// body over its limit is refused while it streams in rather than after it
// was buffered (RESTinio 0.6 calls handlers only with the whole message).
//
// Pure byte logic, no sockets: `http/gated_socket.hpp` feeds it what each
// read brought. RFC 9112 §6 (message body length), §7.1 (chunked coding).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string_view>
#include <utility>

namespace mailassay::http {

/// Header name that replaces `Content-Length` in a refused request head (same
/// length, so the head is rewritten in place) and the trailer field that ends
/// a refused chunked body. A request carrying it is answered 413.
inline constexpr std::string_view refused_marker = "X-Body-Refused";

/// Body limits of one server: the batch upload route and everything else.
struct body_limits {
  std::uint64_t upload = 10u << 20; ///< `POST /v2/batch/upload`.
  std::uint64_t other = 32u << 20;  ///< Any other request.
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
///   \--head larger than the buffer--> passthrough
/// ```
///
/// A head (or chunk-size line) is only decided once it is complete, so its
/// bytes stay in the read buffer until then: `scan` reports them as `keep`,
/// and the caller presents them again at the start of the next scan. A
/// refused head is edited in place: `Content-Length` becomes the marker, so
/// the parser sees a request without a body. A chunked body that passes the
/// limit ends early with a zero chunk carrying the marker as a trailer. After
/// either, the rest of the connection's input is discarded (the 413 closes
/// it).
class body_gate {
public:
  /// What one scan decided about `buf[0, len)`.
  struct verdict {
    std::size_t deliver = 0; ///< `buf[0, deliver)` goes to the parser.
    std::size_t keep = 0;    ///< `buf[len - keep, len)` is undecided.
  };

  /// Tracks requests against `limits`.
  explicit body_gate(body_limits limits = {}) : limits_(limits) {}

  /// Bytes of the zero chunk that ends a refused chunked body.
  static constexpr std::string_view refused_chunk =
      "0\r\nX-Body-Refused: 1\r\n\r\n";

  /// Scans `buf[0, len)`, which starts with the previous scan's kept bytes;
  /// may rewrite it and write up to `cap` bytes (the injected zero chunk).
  verdict scan(char* buf, std::size_t len, std::size_t cap) {
    std::size_t pos = 0;
    while (pos < len) {
      switch (mode_) {
        case mode::head: {
          auto r = on_head(buf, pos, len, cap);
          if (r.first)
            return r.second;
          break;
        }
        case mode::length:
        case mode::chunk_data: {
          auto n = static_cast<std::size_t>(
              std::min<std::uint64_t>(remaining_, len - pos));
          pos += n;
          remaining_ -= n;
          if (remaining_ == 0)
            mode_ = mode_ == mode::length ? mode::head : mode::chunk_line;
          break;
        }
        case mode::chunk_line: {
          auto r = on_chunk_line(buf, pos, len, cap);
          if (r.first)
            return r.second;
          break;
        }
        case mode::trailers:
          for (; pos < len && mode_ == mode::trailers; ++pos) {
            char ch = buf[pos];
            if (ch == '\n') {
              if (line_chars_ == 0)
                mode_ = mode::head;
              line_chars_ = 0;
            } else if (ch != '\r') {
              ++line_chars_;
            }
          }
          break;
        case mode::discard:
          // Set by an earlier scan (a scan that refuses returns at once).
          return {0, 0};
        case mode::passthrough: return {len, 0};
      }
    }
    return {pos, 0};
  }

  /// Whether a body was refused; the connection's input is then discarded.
  bool refused() const { return refused_; }

  /// Whether the zero chunk of a refused body is still to be delivered (no
  /// room for it in the last buffer); the caller writes `refused_chunk` at
  /// the start of the next buffer and delivers it.
  bool injection_pending() const { return inject_pending_; }

  /// Marks the pending zero chunk as delivered.
  void injected() { inject_pending_ = false; }

private:
  enum class mode {
    head,
    length,
    chunk_line,
    chunk_data,
    trailers,
    discard,
    passthrough
  };

  // A header name compared case-insensitively with a lower-case one.
  static bool name_is(const char* p, std::size_t n, std::string_view lower) {
    if (n != lower.size())
      return false;
    for (std::size_t i = 0; i < n; ++i) {
      auto c = static_cast<unsigned char>(p[i]);
      if (c >= 'A' && c <= 'Z')
        c = static_cast<unsigned char>(c - 'A' + 'a');
      if (c != static_cast<unsigned char>(lower[i]))
        return false;
    }
    return true;
  }

  // Appends the decimal digits in [p, end) to `value` (other bytes are
  // skipped: the parser rejects them), saturating.
  static std::uint64_t add_digits(std::uint64_t value, const char* p,
                                  const char* end) {
    for (; p < end; ++p) {
      if (*p < '0' || *p > '9')
        continue;
      value = value > (UINT64_MAX - 9) / 10
                  ? UINT64_MAX
                  : value * 10 + static_cast<unsigned>(*p - '0');
    }
    return value;
  }

  static bool contains_chunked(const char* p, std::size_t n) {
    constexpr std::string_view word = "chunked";
    for (std::size_t i = 0; i + word.size() <= n; ++i)
      if (name_is(p + i, word.size(), word))
        return true;
    return false;
  }

  // Returns {true, verdict} when the scan stops here.
  std::pair<bool, verdict> hold(std::size_t pos, std::size_t len,
                                std::size_t cap) {
    // A head the buffer cannot hold: stop tracking this connection (RESTinio's
    // own body limit still applies).
    if (pos == 0 && len == cap) {
      mode_ = mode::passthrough;
      return {true, {len, 0}};
    }
    return {true, {pos, len - pos}};
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
    if (end == 0)
      return hold(pos, len, cap);
    constexpr std::string_view upload = "POST /v2/batch/upload";
    // The router also takes the path with a trailing slash.
    auto after = start + upload.size();
    bool is_upload =
        end - start > upload.size() + 1 &&
        std::memcmp(buf + start, upload.data(), upload.size()) == 0 &&
        (buf[after] == ' ' || buf[after] == '?' ||
         (buf[after] == '/' &&
          (buf[after + 1] == ' ' || buf[after + 1] == '?')));
    std::uint64_t length = 0;
    bool chunked = false;
    std::size_t names[4];
    std::size_t name_count = 0;
    auto line =
        static_cast<const char*>(std::memchr(buf + start, '\n', end - start)) -
        buf + 1;
    // Which of the two headers the last line belonged to: a folded line
    // (obs-fold, starting with SP or HTAB) continues its value, as the
    // parser reads it ("Content-Length:\r\n 99999").
    enum class in { other, length, encoding } last = in::other;
    std::uint64_t value = 0;
    for (auto p = static_cast<std::size_t>(line); p < end;) {
      auto eol = static_cast<std::size_t>(
          static_cast<const char*>(std::memchr(buf + p, '\n', end - p)) - buf);
      auto colon = static_cast<const char*>(std::memchr(buf + p, ':', eol - p));
      if (buf[p] == ' ' || buf[p] == '\t') {
        if (last == in::length) {
          value = add_digits(value, buf + p, buf + eol);
          length = std::max(length, value);
        } else if (last == in::encoding) {
          chunked = chunked || contains_chunked(buf + p, eol - p);
        }
      } else if (colon) {
        last = in::other;
        auto name_len = static_cast<std::size_t>(colon - (buf + p));
        auto v = static_cast<std::size_t>(colon - buf) + 1;
        if (name_is(buf + p, name_len, "content-length")) {
          if (name_count == std::size(names)) {
            mode_ = mode::passthrough;
            return {true, {len, 0}};
          }
          names[name_count++] = p;
          last = in::length;
          value = add_digits(0, buf + v, buf + eol);
          length = std::max(length, value);
        } else if (name_is(buf + p, name_len, "transfer-encoding")) {
          last = in::encoding;
          chunked = chunked || contains_chunked(buf + v, eol - v);
        }
      } else {
        last = in::other;
      }
      p = eol + 1;
    }
    limit_ = is_upload ? limits_.upload : limits_.other;
    if (chunked) {
      mode_ = mode::chunk_line;
      body_ = 0;
    } else if (length > limit_) {
      for (std::size_t i = 0; i < name_count; ++i)
        std::memcpy(buf + names[i], refused_marker.data(),
                    refused_marker.size());
      refused_ = true;
      mode_ = mode::discard;
      return {true, {end, 0}};
    } else if (length > 0) {
      mode_ = mode::length;
      remaining_ = length;
    }
    pos = end;
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
      return {true, {pos, 0}};
    }
    std::memcpy(buf + pos, refused_chunk.data(), refused_chunk.size());
    return {true, {pos + refused_chunk.size(), 0}};
  }

  std::pair<bool, verdict> on_chunk_line(char* buf, std::size_t& pos,
                                         std::size_t len, std::size_t cap) {
    auto nl = static_cast<const char*>(std::memchr(buf + pos, '\n', len - pos));
    if (!nl) {
      // A size line longer than the whole buffer (a huge extension): fail
      // closed rather than stop following the body.
      if (pos == 0 && len == cap)
        return refuse_chunked(buf, pos, cap);
      return hold(pos, len, cap);
    }
    auto eol = static_cast<std::size_t>(nl - buf);
    std::uint64_t size = 0;
    std::size_t digits = 0;
    for (auto p = pos; p < eol; ++p, ++digits) {
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
      if (size > (UINT64_MAX >> 4)) {
        size = UINT64_MAX;
        break;
      }
      size = size << 4 | d;
    }
    // No size where the gate expects one: the parser may still read the
    // bytes differently (a bare LF inside a chunk extension, any byte after
    // the CR), and then the gate would no longer know where the body ends.
    // Fail closed: end the body here as refused, like one over the limit.
    if (digits == 0 || size > limit_ || body_ + size > limit_)
      return refuse_chunked(buf, pos, cap);
    if (size == 0) {
      mode_ = mode::trailers;
      line_chars_ = 0;
      pos = eol + 1;
      return {false, {}};
    }
    body_ += size;
    remaining_ = size + 2; // the data and its CRLF
    mode_ = mode::chunk_data;
    pos = eol + 1;
    return {false, {}};
  }

  body_limits limits_;
  mode mode_ = mode::head;
  std::uint64_t limit_ = 0;     // of the current request
  std::uint64_t remaining_ = 0; // bytes of the current body or chunk
  std::uint64_t body_ = 0;      // chunk bytes of the current request so far
  std::size_t line_chars_ = 0;  // in the current trailer line
  bool refused_ = false;
  bool inject_pending_ = false;
};

} // namespace mailassay::http
