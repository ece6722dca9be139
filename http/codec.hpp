#pragma once

#include "actors/accounts/types.hpp"
#include "actors/validation/validator.hpp"
#include "core/base/expected.hpp"
#include "core/base/utf8.hpp"
#include "http/exchange.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// JSON field names live here and nowhere else.
namespace mailassay::http::codec {

using nlohmann::json;
namespace acc = core::account;
namespace accounts = actors::accounts;

/// Whether `s` is written between quotes as it is: no control character,
/// quote or backslash (what nlohmann escapes), and well-formed UTF-8 (which
/// nlohmann writes as it is, ensure_ascii off). The direct writers' fast
/// path; anything else goes through nlohmann.
inline bool written_as_is(std::string_view s) {
  // One load per byte instead of four comparisons; 2 = not ASCII.
  static constexpr auto kind = [] {
    std::array<unsigned char, 256> t{};
    for (int c = 0x20; c < 0x80; ++c)
      t[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
    for (int c = 0x80; c < 0x100; ++c)
      t[static_cast<std::size_t>(c)] = 2;
    return t;
  }();
  bool ascii = true;
  for (unsigned char c : s) {
    if (!kind[c])
      return false;
    ascii = ascii && kind[c] == 1;
  }
  return ascii || core::utf8_valid(s);
}

/// `j` as JSON text, bytes that are not UTF-8 (a path, a file name, a
/// server's reply quoted in it) written as U+FFFD instead of throwing.
std::string text_of(const json& j);

/// Parses a JSON object body: wrong content type, malformed JSON or a
/// non-object -> errc::bad_request.
core::expected<json> parse_object(const request_view& req);

/// Reads fields of one JSON object, collecting one 422 message per bad
/// field and refusing fields not listed as allowed.
class object_reader {
public:
  object_reader(const json& obj, std::initializer_list<const char*> allowed,
                std::string prefix = "");

  /// A string field; `max` bytes at most; missing+required -> message.
  std::optional<std::string> text(const char* name, bool required,
                                  std::size_t max = 1024);
  /// A human label (a name): a string of at most `max_chars` characters,
  /// no control character, not only spaces.
  std::optional<std::string> label(const char* name, bool required,
                                   std::size_t max_chars);
  /// A boolean field.
  std::optional<bool> flag(const char* name);
  /// An integer field within [min, max]; `nullable` admits null (returned as
  /// an engaged optional holding nullopt).
  std::optional<std::optional<std::int64_t>>
  integer(const char* name, std::int64_t min, std::int64_t max, bool nullable);
  /// A nested object, if present and an object.
  const json* object(const char* name);
  /// An array of strings, if present.
  std::optional<std::vector<std::string>> strings(const char* name,
                                                  std::size_t max_items);
  /// Whether `name` is present (even null).
  bool has(const char* name) const;
  /// Adds a message.
  void add(std::string message) { errors_.push_back(std::move(message)); }
  /// Returns the messages so far (unknown fields included).
  std::vector<std::string>& errors() { return errors_; }
  /// Returns the full name of a field, with the prefix.
  std::string full(const char* name) const { return prefix_ + name; }

private:
  const json& obj_;
  std::string prefix_;
  std::vector<std::string> errors_;
};

/// Makes the 422 error of a reader, or nullopt when there is none.
std::optional<core::error> failure_of(object_reader& r);

/// Shape check of an address used for logins (the full RFC parser is for
/// validation requests).
bool looks_like_email(const std::string& s);

/// Shape check of a host name in `allowedDomains`.
bool looks_like_domain(const std::string& s);

// -- decoders: body -> input, or a 400/422 error --------------------------

core::expected<accounts::signup_input> signup(const request_view& req);
core::expected<std::pair<std::string, std::string>>
login(const request_view& req);
core::expected<std::string> refresh_token(const request_view& req);
core::expected<accounts::new_member_input> new_member(const request_view& req);
core::expected<acc::role> role_change(const request_view& req);
core::expected<accounts::new_key_input> new_key(const request_view& req);
core::expected<accounts::key_patch> key_update(const request_view& req);

/// A validation request body: {email, smtp?, timeout?}.
struct validation_input {
  std::string email;
  bool smtp = false;
  std::int64_t timeout_ms = 10000;
};
core::expected<validation_input> validation(const request_view& req);

/// A widget request body: {email}.
core::expected<validation_input> widget_validation(const request_view& req);

// -- encoders ---------------------------------------------------------------

json user(const acc::user& u);
json organization(const acc::organization& o);
json member(const acc::member& m);
json api_key(const acc::api_key& k);
/// "test" for a `svc_test_` key, else "live".
const char* key_mode(const acc::api_key& k);
json key_config(const acc::key_config& c);
json rate_limits(const acc::rate_limits& l);
json session(const accounts::session& s);
json token_pair(const accounts::session& s);
json me(const accounts::me_view& m);
json organization_view(const accounts::organization_view& v);
json balance(const acc::credit_balance& b);
json credit_entry(const acc::credit_entry& e);
json validation_result(const actors::validation::result& r);

/// Appends the JSON text of `r` to `out`: the same bytes as
/// `validation_result(r).dump()` (keys sorted, strings escaped the same way,
/// the same `json::type_error` for invalid UTF-8), written directly instead
/// of through a tree of `std::map` objects (docs/performance.md).
void write_validation_result(std::string& out,
                             const actors::validation::result& r);

/// Appends what `text_of(me(view))` writes for an API key's `view` (key `k`
/// of organization `org`), written directly: the answer of a cached key's
/// `GET /v2/auth/me` (docs/performance.md).
void write_key_me(std::string& out, const acc::api_key& k,
                  const acc::organization& org);

/// Returns the JSON text of `r`; see `write_validation_result`.
std::string validation_result_text(const actors::validation::result& r);

} // namespace mailassay::http::codec
