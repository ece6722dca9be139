#include "security/jwt.hpp"

#include "security/digest.hpp"

#include <nlohmann/json.hpp>

namespace mailassay::security {

namespace {

constexpr char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int decode_char(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '-')
    return 62;
  if (c == '_')
    return 63;
  return -1;
}

// We only ever issue and accept HS256; a key id (base62, nothing to
// escape) follows when the key has one.
std::string encoded_header(std::string_view kid) {
  static const std::string plain =
      base64url_encode(R"({"alg":"HS256","typ":"JWT"})");
  if (kid.empty())
    return plain;
  return base64url_encode(R"({"alg":"HS256","typ":"JWT","kid":")" +
                          std::string{kid} + "\"}");
}

// The header's JSON object, or a non-object when unreadable.
nlohmann::json read_header(std::string_view token) {
  auto first = token.find('.');
  std::string header_json;
  if (first == std::string_view::npos ||
      !base64url_decode(token.substr(0, first), header_json))
    return nullptr;
  return nlohmann::json::parse(header_json, nullptr, false);
}

} // namespace

std::string base64url_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += alphabet[(acc >> bits) & 0x3F];
    }
  }
  if (bits > 0)
    out += alphabet[(acc << (6 - bits)) & 0x3F];
  return out;
}

bool base64url_decode(std::string_view text, std::string& out) {
  out.clear();
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v = decode_char(c);
    if (v < 0)
      return false;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  // RFC 4648 §3.5: the bits left over in the last character are zero, so
  // that bytes have one spelling (else a token's signature verified in four
  // spellings, each a different token text).
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0)
    return false;
  return text.size() % 4 != 1;
}

std::string sign_access_token(const access_claims& claims,
                              std::string_view secret) {
  return sign_access_token(claims, jwt_key{{}, std::string{secret}, 0});
}

std::string sign_access_token(const access_claims& claims, const jwt_key& key) {
  nlohmann::json payload{
      {"sub", claims.user_id},   {"org", claims.organization_id},
      {"role", claims.role},     {"jti", claims.token_id},
      {"iat", claims.issued_at}, {"exp", claims.expires_at},
      {"typ", "access"}};
  auto signing_input =
      encoded_header(key.kid) + '.' + base64url_encode(payload.dump());
  auto signature = hmac_sha256(key.secret, signing_input);
  return signing_input + '.' + base64url_encode(signature);
}

core::expected<access_claims> verify_access_token(std::string_view token,
                                                  std::string_view secret,
                                                  std::int64_t now) {
  jwt_key key{{}, std::string{secret}, 0};
  return verify_access_token(token, std::span<const jwt_key>{&key, 1}, now);
}

std::string token_kid(std::string_view token) {
  auto header = read_header(token);
  if (!header.is_object())
    return {};
  auto kid = header.find("kid");
  if (kid == header.end() || !kid->is_string())
    return {};
  return kid->get<std::string>();
}

core::expected<access_claims> verify_access_token(std::string_view token,
                                                  std::span<const jwt_key> keys,
                                                  std::int64_t now) {
  auto first = token.find('.');
  if (first == std::string_view::npos)
    return core::unauthorized();
  auto second = token.find('.', first + 1);
  if (second == std::string_view::npos ||
      token.find('.', second + 1) != std::string_view::npos)
    return core::unauthorized();
  auto payload_part = token.substr(first + 1, second - first - 1);
  auto signature_part = token.substr(second + 1);
  // Refuse any header but ours before looking at the signature, so `alg:
  // none` or RS/HS confusion never reaches the MAC check.
  auto header = read_header(token);
  if (!header.is_object() || !header.contains("alg") ||
      header["alg"] != "HS256")
    return core::unauthorized();
  std::string kid;
  if (auto k = header.find("kid"); k != header.end()) {
    if (!k->is_string())
      return core::unauthorized();
    kid = k->get<std::string>();
  }
  const jwt_key* key = nullptr;
  for (const auto& candidate : keys)
    if (candidate.kid == kid)
      key = &candidate;
  if (!key)
    return core::unauthorized();
  std::string signature;
  if (!base64url_decode(signature_part, signature))
    return core::unauthorized();
  auto expected_sig = hmac_sha256(key->secret, token.substr(0, second));
  if (!constant_time_equal(signature, expected_sig))
    return core::unauthorized();
  std::string payload_json;
  if (!base64url_decode(payload_part, payload_json))
    return core::unauthorized();
  auto payload = nlohmann::json::parse(payload_json, nullptr, false);
  if (!payload.is_object())
    return core::unauthorized();
  try {
    access_claims claims;
    if (payload.value("typ", "") != "access")
      return core::unauthorized();
    claims.user_id = payload.at("sub").get<std::string>();
    claims.organization_id = payload.at("org").get<std::string>();
    claims.role = payload.at("role").get<std::string>();
    claims.token_id = payload.value("jti", "");
    // Whole numbers only, as we issue them: converting a float beyond the
    // range of int64 is undefined behaviour.
    const auto& iat = payload.at("iat");
    const auto& exp = payload.at("exp");
    if (!iat.is_number_integer() || !exp.is_number_integer())
      return core::unauthorized();
    claims.issued_at = iat.get<std::int64_t>();
    claims.expires_at = exp.get<std::int64_t>();
    if (claims.expires_at <= now)
      return core::unauthorized();
    // A retired key signs nothing new: only tokens issued before (or just
    // after, by a process that had not heard of the rotation yet) pass.
    if (key->retired_at != 0 &&
        claims.issued_at > key->retired_at + retired_grace_seconds)
      return core::unauthorized();
    return claims;
  } catch (const nlohmann::json::exception&) {
    return core::unauthorized();
  }
}

} // namespace mailassay::security
