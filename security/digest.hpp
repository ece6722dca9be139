#pragma once

#include <string>
#include <string_view>

namespace mailassay::security {

/// Returns the lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

/// Returns sha256_hex(secret), remembered per thread for the last four
/// secrets: a client sends the same API key with every request, and its
/// SHA-256 was the largest part of checking a cached key. Secrets are
/// compared in constant time and wiped when the thread ends. The reference
/// is valid until the thread's next call.
const std::string& sha256_hex_recent(std::string_view secret);

/// Returns the raw HMAC-SHA256 of `data` under `key`.
std::string hmac_sha256(std::string_view key, std::string_view data);

/// Returns the lower-case hex HMAC-SHA256 of `data` under `key`: a keyed
/// hash that, unlike sha256_hex, a dictionary of likely inputs cannot
/// reverse without the key.
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

/// Compares two strings in time that depends only on their lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

} // namespace mailassay::security
