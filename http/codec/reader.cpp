#include "http/codec/reader.hpp"

#include "core/base/ascii.hpp"
#include "http/json_body.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace mailassay::http::codec {

using core::errc;
using core::make_error;

core::error bad_request(std::string message) {
  return make_error(errc::bad_request, std::move(message));
}

core::error unprocessable(std::string message) {
  auto e = make_error(errc::validation_failed, "");
  e.details = {std::move(message)};
  return e;
}

bool json_content_type(std::string_view ct) {
  // What nearly every client sends, without building a lower-case copy.
  if (core::ascii_iequals(ct, "application/json"))
    return true;
  std::string lower;
  for (char c : ct.substr(0, ct.find(';')))
    if (c != ' ')
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "application/json" ||
         (lower.rfind("application/", 0) == 0 && lower.size() > 5 &&
          lower.substr(lower.size() - 5) == "+json");
}

core::expected<json> parse_object(const request_view& req) {
  auto ct = req.header("Content-Type");
  if (!req.body.empty() && ct && !json_content_type(*ct))
    return bad_request("Content-Type must be application/json");
  if (req.body.empty())
    return bad_request("Request body must be a JSON object");
  auto parsed = parse_json_body(req.body);
  if (!parsed)
    return std::move(parsed).error_value();
  if (!parsed->is_object())
    return bad_request("Request body must be a JSON object");
  return std::move(*parsed);
}

object_reader::object_reader(const json& obj,
                             std::initializer_list<const char*> allowed,
                             std::string prefix)
    : obj_(obj), prefix_(std::move(prefix)) {
  for (auto& item : obj_.items()) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture
    // one in a lambda.
    const auto& key = item.key();
    bool known = std::any_of(allowed.begin(), allowed.end(),
                             [&](const char* a) { return key == a; });
    if (!known)
      errors_.push_back("property " + prefix_ + key + " should not exist");
  }
}

bool object_reader::has(const char* name) const {
  return obj_.contains(name);
}

std::optional<std::string> object_reader::text(const char* name, bool required,
                                               std::size_t max) {
  auto i = obj_.find(name);
  if (i == obj_.end() || i->is_null()) {
    if (required)
      errors_.push_back(full(name) + " should not be empty");
    return std::nullopt;
  }
  if (!i->is_string()) {
    errors_.push_back(full(name) + " must be a string");
    return std::nullopt;
  }
  auto value = i->get<std::string>();
  if (required && value.empty()) {
    errors_.push_back(full(name) + " should not be empty");
    return std::nullopt;
  }
  if (value.size() > max) {
    errors_.push_back(full(name) + " must be shorter than or equal to " +
                      std::to_string(max) + " octets");
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> object_reader::label(const char* name, bool required,
                                                std::size_t max_chars) {
  // Counted in characters: a person's name is measured as they see it
  // (the body's own limit bounds the bytes).
  auto value = text(name, required, SIZE_MAX);
  if (!value)
    return std::nullopt;
  bool blank = true;
  std::size_t chars = 0;
  const std::string& v = *value;
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto c = static_cast<unsigned char>(v[i]);
    auto next = [&](std::size_t k) {
      return i + k < v.size() ? static_cast<unsigned char>(v[i + k]) : 0;
    };
    // C0 and DEL; C1 (U+0080-U+009F: C2 80-C2 9F); the line and paragraph
    // separators U+2028/U+2029 (E2 80 A8/A9), which end a line in
    // JavaScript and in many log viewers.
    if (c < 0x20 || c == 0x7f ||
        (c == 0xC2 && next(1) >= 0x80 && next(1) <= 0x9F) ||
        (c == 0xE2 && next(1) == 0x80 &&
         (next(2) == 0xA8 || next(2) == 0xA9))) {
      errors_.push_back(full(name) + " must not contain control characters");
      return std::nullopt;
    }
    blank = blank && c == ' ';
    chars += (c & 0xC0) != 0x80;
  }
  if (blank && (required || !value->empty())) {
    errors_.push_back(full(name) + " must not be blank");
    return std::nullopt;
  }
  if (chars > max_chars) {
    errors_.push_back(full(name) + " must be shorter than or equal to " +
                      std::to_string(max_chars) + " characters");
    return std::nullopt;
  }
  return value;
}

std::optional<bool> object_reader::flag(const char* name) {
  auto i = obj_.find(name);
  if (i == obj_.end())
    return std::nullopt;
  if (!i->is_boolean()) {
    errors_.push_back(full(name) + " must be a boolean value");
    return std::nullopt;
  }
  return i->get<bool>();
}

std::optional<std::optional<std::int64_t>>
object_reader::integer(const char* name, std::int64_t min, std::int64_t max,
                       bool nullable) {
  auto i = obj_.find(name);
  if (i == obj_.end())
    return std::nullopt;
  if (i->is_null() && nullable)
    return std::optional<std::int64_t>{};
  if (!i->is_number_integer()) {
    errors_.push_back(full(name) + " must be an integer number" +
                      (nullable ? std::string{" or null"} : ""));
    return std::nullopt;
  }
  auto v = i->get<std::int64_t>();
  if (v < min || v > max) {
    errors_.push_back(full(name) + " must be between " + std::to_string(min) +
                      " and " + std::to_string(max));
    return std::nullopt;
  }
  return std::optional<std::int64_t>{v};
}

const json* object_reader::object(const char* name) {
  auto i = obj_.find(name);
  if (i == obj_.end())
    return nullptr;
  if (!i->is_object()) {
    errors_.push_back(full(name) + " must be an object");
    return nullptr;
  }
  return &*i;
}

std::optional<std::vector<std::string>>
object_reader::strings(const char* name, std::size_t max_items) {
  auto i = obj_.find(name);
  if (i == obj_.end())
    return std::nullopt;
  if (!i->is_array()) {
    errors_.push_back(full(name) + " must be an array");
    return std::nullopt;
  }
  if (i->size() > max_items) {
    errors_.push_back(full(name) + " must contain no more than " +
                      std::to_string(max_items) + " elements");
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (auto& item : *i) {
    if (!item.is_string()) {
      errors_.push_back("each value in " + full(name) + " must be a string");
      return std::nullopt;
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::optional<core::error> failure_of(object_reader& r) {
  if (r.errors().empty())
    return std::nullopt;
  core::error e = make_error(errc::validation_failed, "Validation failed");
  e.details = std::move(r.errors());
  return e;
}

core::expected<std::int64_t> integer_param(const request_view& req,
                                           const char* name,
                                           std::int64_t fallback,
                                           std::int64_t min, std::int64_t max) {
  auto text = req.query_param(name);
  if (!text)
    return fallback;
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc{} || p != text->data() + text->size() || v < min ||
      v > max)
    return unprocessable(std::string{name} + " must be an integer between " +
                         std::to_string(min) + " and " + std::to_string(max));
  return v;
}

bool looks_like_email(const std::string& s) {
  auto at = s.rfind('@');
  if (at == std::string::npos || at == 0 || at + 1 >= s.size() ||
      s.size() > 254)
    return false;
  auto domain = s.substr(at + 1);
  if (domain.find('.') == std::string::npos || domain.front() == '.' ||
      domain.back() == '.')
    return false;
  return std::none_of(s.begin(), s.end(),
                      [](unsigned char c) { return c <= ' ' || c == 0x7F; });
}

bool looks_like_domain(const std::string& s) {
  if (s.empty() || s.size() > 253 || s.front() == '.' || s.back() == '.' ||
      s.front() == '-')
    return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.';
  });
}

} // namespace mailassay::http::codec
