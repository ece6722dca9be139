#pragma once

// The TLS side of the test peers: a throw-away self-signed certificate.

#include <openssl/ssl.h>

#include <string>

namespace mailassay::tests::peers {

/// What a peer's certificate holds besides the CN.
enum class certificate_kind {
  /// The CN only: an MX host, whose clients do not verify by default.
  name_only,
  /// Also subjectAltName DNS:<name> and IP:127.0.0.1, and the certificate
  /// written to a PEM file, for a client that verifies and trusts it.
  verifiable,
};

/// A fresh P-256 key and a self-signed certificate naming `name`, in a
/// server context; the PEM file (if any) is removed on destruction.
class tls_identity {
public:
  /// Throws std::runtime_error when OpenSSL cannot make them.
  tls_identity(const std::string& name, certificate_kind kind);
  ~tls_identity();
  tls_identity(const tls_identity&) = delete;
  tls_identity& operator=(const tls_identity&) = delete;

  /// The server context holding the certificate and its key.
  SSL_CTX* ctx() const { return ctx_; }
  /// The certificate as PEM (verifiable only; "" otherwise).
  const std::string& pem_file() const { return pem_file_; }

private:
  SSL_CTX* ctx_ = nullptr;
  std::string pem_file_;
};

} // namespace mailassay::tests::peers
