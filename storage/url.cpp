#include "storage/url.hpp"

#include "core/base/percent.hpp"

#include <optional>
#include <string_view>

namespace mailassay::storage {

namespace {

using core::errc;
using core::make_error;

core::error bad_url(std::string_view why) {
  return make_error(errc::bad_request,
                    "invalid database URL: " + std::string{why});
}

bool is_schema_name(std::string_view s) {
  if (s.empty() || s.size() > 63 || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

core::expected<database_url> parse_sqlite(std::string_view rest) {
  // sqlite:///abs -> rest "/abs"; sqlite://rel/x.db -> rest "rel/x.db".
  auto path = core::percent_decode(rest);
  if (!path)
    return bad_url("bad percent-encoding in the SQLite path");
  if (path->empty() || path->back() == '/')
    return bad_url("SQLite URL needs a file path, e.g. sqlite:///data/db");
  if (path->find('\0') != std::string::npos)
    return bad_url("SQLite path contains a NUL byte");
  database_url u;
  u.kind = dialect::sqlite;
  u.path = std::move(*path);
  return u;
}

core::expected<database_url> parse_postgres(std::string_view rest) {
  database_url u;
  u.kind = dialect::postgresql;
  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  auto slash = rest.find('/');
  if (slash == std::string_view::npos)
    return bad_url("PostgreSQL URL needs a database name: "
                   "postgresql://user:password@host:port/dbname");
  auto authority = rest.substr(0, slash);
  auto db = core::percent_decode(rest.substr(slash + 1));
  if (!db || db->empty() || db->find('/') != std::string::npos)
    return bad_url("PostgreSQL URL has an empty or malformed database name");
  u.dbname = std::move(*db);
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    auto userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    auto colon = userinfo.find(':');
    auto user = core::percent_decode(userinfo.substr(0, colon));
    if (!user)
      return bad_url("bad percent-encoding in the user name");
    u.user = std::move(*user);
    if (colon != std::string_view::npos) {
      auto password = core::percent_decode(userinfo.substr(colon + 1));
      if (!password)
        return bad_url("bad percent-encoding in the password");
      u.password = std::move(*password);
    }
  }
  std::string_view host = authority;
  std::string_view port;
  if (!host.empty() && host.front() == '[') { // [::1]:5432
    auto close = host.find(']');
    if (close == std::string_view::npos)
      return bad_url("unterminated IPv6 address");
    port = host.substr(close + 1);
    host = host.substr(1, close - 1);
    if (!port.empty()) {
      if (port.front() != ':')
        return bad_url("unexpected text after the IPv6 address");
      port.remove_prefix(1);
    }
  } else if (auto colon = host.rfind(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  auto decoded_host = core::percent_decode(host);
  if (!decoded_host || decoded_host->empty())
    return bad_url("PostgreSQL URL needs a host");
  u.host = std::move(*decoded_host);
  if (!port.empty() || authority.ends_with(":")) {
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string_view::npos ||
        std::stoi(std::string{port}) == 0 ||
        std::stoi(std::string{port}) > 65535)
      return bad_url("port must be a number from 1 to 65535");
    u.port = std::string{port};
  }
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{}
                                          : query.substr(amp + 1);
    auto eq = pair.find('=');
    auto key = pair.substr(0, eq);
    auto value =
        eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    if (key == "schema") {
      if (!is_schema_name(value))
        return bad_url("schema must be lower-case letters, digits and _");
      u.schema = std::string{value};
    } else {
      return bad_url("unknown parameter '" + std::string{key} +
                     "' (only schema is supported)");
    }
  }
  return u;
}

// libpq keyword/value syntax: single quotes, backslash escapes.
std::string quoted(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "'";
}

} // namespace

core::expected<database_url> parse_database_url(const std::string& url) {
  std::string_view text = url;
  if (text.starts_with("sqlite://"))
    return parse_sqlite(text.substr(9));
  if (text.starts_with("postgresql://"))
    return parse_postgres(text.substr(13));
  if (text.starts_with("postgres://"))
    return parse_postgres(text.substr(11));
  return bad_url("expected sqlite:///path, sqlite://relative/path or "
                 "postgresql://user:password@host:port/dbname");
}

std::string postgres_conninfo(const database_url& u) {
  std::string out = "dbname=" + quoted(u.dbname);
  if (!u.host.empty())
    out += " host=" + quoted(u.host);
  if (!u.port.empty())
    out += " port=" + quoted(u.port);
  if (!u.user.empty())
    out += " user=" + quoted(u.user);
  if (!u.password.empty())
    out += " password=" + quoted(u.password);
  out += " connect_timeout='5'";
  std::string app = "mailassay";
  // Quiet the NOTICEs libpq would print to stderr; pin the schema so a
  // reconnect lands in the same place.
  std::string options = "-c client_min_messages=warning";
  if (!u.schema.empty()) {
    app += ":" + u.schema;
    options += " -c search_path=" + u.schema;
  }
  out += " application_name=" + quoted(app);
  out += " options=" + quoted(options);
  return out;
}

std::string describe(const database_url& u) {
  if (u.kind == dialect::sqlite)
    return "sqlite file " + u.path;
  std::string out = "postgresql://";
  if (!u.user.empty())
    out += u.user + "@";
  out += u.host;
  if (!u.port.empty())
    out += ":" + u.port;
  return out + "/" + u.dbname;
}

} // namespace mailassay::storage
