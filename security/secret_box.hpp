#pragma once

// Secrets the service must be able to read back (webhook signing secrets:
// an HMAC needs the secret itself, so a hash will not do) are stored sealed
// with a server key: XChaCha20-Poly1305 (libsodium), a random 24-byte nonce
// per seal, and the owning record's id as associated data, so a sealed
// value copied into another row does not open (docs/webhooks.md).
//
//   sealed = "x1." + hex(nonce || ciphertext || tag)

#include <optional>
#include <string>
#include <string_view>

namespace mailassay::security {

/// Bytes of a server key.
inline constexpr std::size_t secret_box_key_bytes = 32;

/// Parses a key written as 64 hex digits; nullopt otherwise.
std::optional<std::string> secret_box_key_from_hex(std::string_view hex);

/// Returns a new random key as 64 hex digits.
std::string new_secret_box_key_hex();

/// Seals `plaintext` under `key` (32 bytes) bound to `context`.
std::string seal(std::string_view key, std::string_view plaintext,
                 std::string_view context);

/// Opens what `seal` made with the same key and context; nullopt when the
/// key or context differs, or the text was altered.
std::optional<std::string> open_sealed(std::string_view key,
                                       std::string_view sealed,
                                       std::string_view context);

} // namespace mailassay::security
