#include "security/secret_box.hpp"

#include <sodium.h>

#include <vector>

namespace mailassay::security {

namespace {

constexpr std::string_view version = "x1.";

const unsigned char* bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

std::string to_hex(const unsigned char* data, std::size_t n) {
  std::string out(n * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), data, n);
  out.pop_back();
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  std::string out(hex.size() / 2, '\0');
  std::size_t len = 0;
  const char* end = nullptr;
  if (hex.size() % 2 != 0 ||
      sodium_hex2bin(reinterpret_cast<unsigned char*>(out.data()), out.size(),
                     hex.data(), hex.size(), nullptr, &len, &end) != 0 ||
      end != hex.data() + hex.size())
    return std::nullopt;
  out.resize(len);
  return out;
}

} // namespace

std::optional<std::string> secret_box_key_from_hex(std::string_view hex) {
  if (hex.size() != secret_box_key_bytes * 2)
    return std::nullopt;
  return from_hex(hex);
}

std::string new_secret_box_key_hex() {
  unsigned char key[secret_box_key_bytes];
  randombytes_buf(key, sizeof key);
  auto out = to_hex(key, sizeof key);
  sodium_memzero(key, sizeof key);
  return out;
}

std::string seal(std::string_view key, std::string_view plaintext,
                 std::string_view context) {
  constexpr auto nonce_bytes = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
  std::vector<unsigned char> out(nonce_bytes + plaintext.size() +
                                 crypto_aead_xchacha20poly1305_ietf_ABYTES);
  randombytes_buf(out.data(), nonce_bytes);
  unsigned long long len = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(
      out.data() + nonce_bytes, &len, bytes(plaintext), plaintext.size(),
      bytes(context), context.size(), nullptr, out.data(), bytes(key));
  return std::string{version} + to_hex(out.data(), nonce_bytes + len);
}

std::optional<std::string> open_sealed(std::string_view key,
                                       std::string_view sealed,
                                       std::string_view context) {
  constexpr auto nonce_bytes = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
  constexpr auto tag_bytes = crypto_aead_xchacha20poly1305_ietf_ABYTES;
  if (key.size() != secret_box_key_bytes || !sealed.starts_with(version))
    return std::nullopt;
  auto raw = from_hex(sealed.substr(version.size()));
  if (!raw || raw->size() < nonce_bytes + tag_bytes)
    return std::nullopt;
  std::string out(raw->size() - nonce_bytes - tag_bytes, '\0');
  unsigned long long len = 0;
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(
          reinterpret_cast<unsigned char*>(out.data()), &len, nullptr,
          bytes(*raw) + nonce_bytes, raw->size() - nonce_bytes, bytes(context),
          context.size(), bytes(*raw), bytes(key)) != 0)
    return std::nullopt;
  out.resize(len);
  return out;
}

} // namespace mailassay::security
