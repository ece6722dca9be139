#include "security/digest.hpp"

#include "core/base/word_bytes.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cstdint>

namespace mailassay::security {

namespace {

// OpenSSL 3 looks the implementation of `EVP_sha256()` up again on every
// EVP_Digest (an implicit fetch: a lock, a hash lookup, reference counts);
// fetched once, the algorithm is immutable and shared by every thread.
const EVP_MD* sha256_md() {
  static const EVP_MD* const md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched ? fetched : EVP_sha256();
  }();
  return md;
}

std::string hex_of(const unsigned char* bytes, std::size_t len) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (std::size_t i = 0; i < len; ++i) {
    out[2 * i] = hex[bytes[i] >> 4];
    out[2 * i + 1] = hex[bytes[i] & 0xF];
  }
  return out;
}

} // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, sha256_md(), nullptr);
  return hex_of(md, len);
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(sha256_md(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), md,
       &len);
  return std::string(reinterpret_cast<const char*>(md), len);
}

namespace {

struct recent_digests {
  struct slot {
    std::string secret;
    std::string hex;
  };
  std::array<slot, 4> slots;
  std::size_t next = 0;

  ~recent_digests() {
    for (auto& s : slots)
      OPENSSL_cleanse(s.secret.data(), s.secret.size());
  }
};

} // namespace

const std::string& sha256_hex_recent(std::string_view secret) {
  thread_local recent_digests recent;
  for (auto& s : recent.slots)
    if (!s.secret.empty() && constant_time_equal(s.secret, secret))
      return s.hex;
  auto& s = recent.slots[recent.next++ % recent.slots.size()];
  OPENSSL_cleanse(s.secret.data(), s.secret.size());
  s.secret.assign(secret);
  s.hex = sha256_hex(secret);
  return s.hex;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  // Every byte is looked at whatever the others hold: the differences are
  // OR-ed together, eight bytes at a time (CRYPTO_memcmp goes one byte at a
  // time, a fifth of the cost of checking a cached key), and the empty asm
  // keeps the compiler from ending the loop at the first difference.
  std::uint64_t diff = 0;
  std::size_t i = 0;
  for (; i + 8 <= a.size(); i += 8) {
    diff |= core::load_word(a.data() + i) ^ core::load_word(b.data() + i);
    asm volatile("" : "+r"(diff));
  }
  for (; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    asm volatile("" : "+r"(diff));
  }
  return diff == 0;
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  auto raw = hmac_sha256(key, data);
  return hex_of(reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
}

} // namespace mailassay::security
