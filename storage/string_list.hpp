#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::storage {

/// Encodes a list of strings as a JSON array of strings, for one TEXT column.
std::string encode_string_list(const std::vector<std::string>& items);

/// Decodes what `encode_string_list` wrote; nullopt when malformed.
std::optional<std::vector<std::string>>
decode_string_list(std::string_view text);

} // namespace mailassay::storage
