#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mailassay::security {

/// Returns `n` characters from [0-9A-Za-z] drawn from the OS CSPRNG.
std::string random_base62(std::size_t n);

/// Returns a new opaque identifier: `prefix` + "_" + 20 base62 characters.
std::string new_id(std::string_view prefix);

/// Returns `n` random bytes (for secrets).
std::string random_bytes(std::size_t n);

} // namespace mailassay::security
