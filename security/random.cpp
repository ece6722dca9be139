#include "security/random.hpp"

#include <sodium.h>

namespace mailassay::security {

std::string random_base62(std::size_t n) {
  static constexpr char alphabet[]
    = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string out(n, '0');
  for (auto& c : out)
    c = alphabet[randombytes_uniform(62)]; // uniform: no modulo bias
  return out;
}

std::string new_id(std::string_view prefix) {
  std::string out{prefix};
  out += '_';
  out += random_base62(20);
  return out;
}

std::string random_bytes(std::size_t n) {
  std::string out(n, '\0');
  randombytes_buf(out.data(), n);
  return out;
}

} // namespace mailassay::security
