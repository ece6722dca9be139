#include "http/request_intake.hpp"

#include "core/base/ascii.hpp"
#include "core/limits/client_ip.hpp"
#include "http/body_gate.hpp"

namespace mailassay::http {

namespace {

// Whether a header name is the gate's refusal marker.
bool is_refusal_marker(std::string_view name) {
  return name.size() == refused_marker.size() &&
         core::ascii_iequals(name, refused_marker);
}

// The path of a request target: an absolute-form target
// ("http://host/path", RFC 9112 §3.2.2, which a server must accept) is
// routed by its path.
std::string_view origin_path(std::string_view target) {
  auto scheme = target.find("://");
  if (scheme == std::string_view::npos || target.front() == '/')
    return target;
  auto slash = target.find('/', scheme + 3);
  return slash == std::string_view::npos ? std::string_view{"/"}
                                         : target.substr(slash);
}

} // namespace

bool usable_request_id(std::string_view id) {
  if (id.empty() || id.size() > 64)
    return false;
  for (unsigned char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
              c == ':' || c == '+' || c == '/' || c == '=' || c == '@';
    if (!ok)
      return false;
  }
  return true;
}

std::string dotted_quad(const asio::ip::address_v4& a) {
  auto bytes = a.to_bytes();
  char buf[16];
  char* p = buf;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    unsigned b = bytes[i];
    if (i)
      *p++ = '.';
    if (b >= 100)
      *p++ = static_cast<char>('0' + b / 100);
    if (b >= 10)
      *p++ = static_cast<char>('0' + b / 10 % 10);
    *p++ = static_cast<char>('0' + b % 10);
  }
  return std::string(buf, p);
}

bool fill_view(request_view& v, const restinio::request_handle_t& req,
               const services& svc) {
  const auto& h = req->header();
  v.method = h.method().c_str();
  v.path = origin_path(h.path());
  v.query = h.query();
  v.body = req->body();
  v.headers.reserve(h.fields_count());
  for (const auto& f : h)
    v.headers.emplace_back(f.name(), f.value());
  v.index_headers();
  bool refused = v.header(refused_marker).has_value();
  if (auto* chunked = req->chunked_input_info())
    for (const auto& f : chunked->trailing_fields())
      refused = refused || is_refusal_marker(f.name());
  auto peer = req->remote_endpoint().address();
  if (peer.is_v4() && svc.trusted_proxies.empty()) {
    // Nobody's X-Forwarded-For is believed: the client is the peer, whose
    // text is already canonical.
    v.peer_ip = dotted_quad(peer.to_v4());
    v.client_ip = v.peer_ip;
    return refused;
  }
  v.peer_ip = peer.to_string();
  auto xff = v.header("X-Forwarded-For");
  v.client_ip = core::limits::client_ip(
      v.peer_ip, xff ? *xff : std::string_view{}, svc.trusted_proxies);
  // Only a trusted proxy says which scheme the browser used (the session
  // cookie's Origin check compares it).
  if (auto proto = v.header("X-Forwarded-Proto"))
    if (auto ip = core::limits::parse_ip(v.peer_ip);
        ip && svc.trusted_proxies.contains(*ip)) {
      auto first = core::trim_blanks(proto->substr(0, proto->find(',')));
      if (core::ascii_iequals(first, "https"))
        v.scheme = "https";
    }
  return refused;
}

std::optional<core::error> read_query(request_view& v, const char* allowed) {
  if (!allowed || v.query.empty())
    return std::nullopt;
  auto args = query_args::parse(v.query);
  if (!args)
    return args.error_value();
  auto problems = args->problems(allowed);
  if (!problems.empty()) {
    auto e = core::make_error(core::errc::validation_failed, "");
    e.details = std::move(problems);
    return e;
  }
  v.args = std::move(*args);
  return std::nullopt;
}

} // namespace mailassay::http
