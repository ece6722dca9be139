#include "storage/string_list.hpp"

namespace mailassay::storage {

std::string encode_string_list(const std::vector<std::string>& items) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "[";
  for (const auto& item : items) {
    if (out.size() > 1)
      out += ',';
    out += '"';
    for (unsigned char c : item) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 0xf];
      } else {
        out += static_cast<char>(c);
      }
    }
    out += '"';
  }
  return out + "]";
}

std::optional<std::vector<std::string>>
decode_string_list(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  auto at = [&](char c) { return i < text.size() && text[i] == c; };
  if (!at('['))
    return std::nullopt;
  ++i;
  if (at(']'))
    return i + 1 == text.size() ? std::optional{out} : std::nullopt;
  for (;;) {
    if (!at('"'))
      return std::nullopt;
    ++i;
    std::string item;
    while (!at('"')) {
      if (i >= text.size())
        return std::nullopt;
      char c = text[i++];
      if (c != '\\') {
        item += c;
        continue;
      }
      if (i >= text.size())
        return std::nullopt;
      char e = text[i++];
      if (e == 'u') {
        // Only the \u00XX form the encoder writes.
        if (i + 4 > text.size() || text.substr(i, 2) != "00")
          return std::nullopt;
        item += static_cast<char>(
            std::stoi(std::string{text.substr(i + 2, 2)}, nullptr, 16));
        i += 4;
      } else {
        item += e;
      }
    }
    ++i;
    out.push_back(std::move(item));
    if (at(']') && i + 1 == text.size())
      return out;
    if (!at(','))
      return std::nullopt;
    ++i;
  }
}

} // namespace mailassay::storage
