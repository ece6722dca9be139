#include "tests/peers/tls_identity.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <system_error>
#include <unistd.h>

namespace mailassay::tests::peers {

namespace {

// Adds subjectAltName DNS:<name>, IP:127.0.0.1 to `cert`.
bool add_alt_names(X509* cert, const std::string& name) {
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, cert, cert, nullptr, nullptr, 0);
  auto san = "DNS:" + name + ",IP:127.0.0.1";
  X509_EXTENSION* ext =
      X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name, san.c_str());
  bool ok = ext != nullptr && X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// Writes `cert` to a new file in the temporary directory; "" on failure.
std::string write_pem(X509* cert) {
  static std::mt19937_64 rng{std::random_device{}()};
  auto path = (std::filesystem::temp_directory_path() /
               ("mailassay-peer-" + std::to_string(::getpid()) + "-" +
                std::to_string(rng()) + ".pem"))
                  .string();
  FILE* f = std::fopen(path.c_str(), "w");
  bool ok = f != nullptr && PEM_write_X509(f, cert) == 1;
  if (f != nullptr)
    std::fclose(f);
  return ok ? path : std::string{};
}

} // namespace

tls_identity::tls_identity(const std::string& name, certificate_kind kind) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  ctx_ = SSL_CTX_new(TLS_server_method());
  bool ok = key != nullptr && cert != nullptr && ctx_ != nullptr;
  if (ok) {
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 365L * 86400);
    X509_set_pubkey(cert, key);
    X509_NAME* subject = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(
        subject, "CN", MBSTRING_ASC,
        reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
    X509_set_issuer_name(cert, subject);
    if (kind == certificate_kind::verifiable)
      ok = add_alt_names(cert, name);
    ok = ok && X509_sign(cert, key, EVP_sha256()) > 0 &&
         SSL_CTX_use_certificate(ctx_, cert) == 1 &&
         SSL_CTX_use_PrivateKey(ctx_, key) == 1;
    if (ok && kind == certificate_kind::verifiable) {
      pem_file_ = write_pem(cert);
      ok = !pem_file_.empty();
    }
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!ok) {
    SSL_CTX_free(ctx_);
    throw std::runtime_error("test peer: cannot make a TLS certificate for " +
                             name);
  }
}

tls_identity::~tls_identity() {
  SSL_CTX_free(ctx_);
  if (!pem_file_.empty()) {
    std::error_code ec;
    std::filesystem::remove(pem_file_, ec);
  }
}

} // namespace mailassay::tests::peers
