#pragma once

#include <string>
#include <string_view>

namespace mailassay::security {

/// Initialises libsodium; call once at start-up. Returns false on failure.
bool init_crypto();

/// Hashes a password with argon2id (libsodium, interactive limits) and a
/// random salt; returns the encoded hash string.
std::string hash_password(std::string_view password);

/// Checks `password` against an encoded hash, in constant time.
bool verify_password(std::string_view password, const std::string& encoded);

/// Burns the same time as verify_password against a real hash; used when the
/// user does not exist so login failures all take the same time.
void verify_dummy_password(std::string_view password);

} // namespace mailassay::security
