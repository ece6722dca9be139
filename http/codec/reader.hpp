#pragma once

// Reading request bodies: the JSON object of a body, and its fields one by
// one with the 422 message of each bad one (docs/api.md). The decoders of
// every document of http/codec/ read through this.

#include "core/base/expected.hpp"
#include "http/exchange.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::http::codec {

using nlohmann::json;

/// Whether a Content-Type names JSON: application/json, or any
/// application/...+json, parameters and case aside.
bool json_content_type(std::string_view ct);

/// Returns a 400 error with `message`.
core::error bad_request(std::string message);

/// Parses a JSON object body: wrong content type, malformed JSON or a
/// non-object -> errc::bad_request.
core::expected<json> parse_object(const request_view& req);

/// Reads fields of one JSON object, collecting one 422 message per bad
/// field and refusing fields not listed as allowed.
class object_reader {
public:
  /// Reads `obj`, noting a message for each field not in `allowed`;
  /// `prefix` names a nested object in messages ("config.").
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

/// Returns the 422 error of one message (a query parameter, a form field).
core::error unprocessable(std::string message);

/// Reads the query parameter `name` as an integer within [min, max]:
/// `fallback` when absent, else 422 "<name> must be an integer between
/// <min> and <max>".
core::expected<std::int64_t> integer_param(const request_view& req,
                                           const char* name,
                                           std::int64_t fallback,
                                           std::int64_t min, std::int64_t max);

/// Shape check of an address used for logins (the full RFC parser is for
/// validation requests).
bool looks_like_email(const std::string& s);

/// Shape check of a host name in `allowedDomains`.
bool looks_like_domain(const std::string& s);

} // namespace mailassay::http::codec
