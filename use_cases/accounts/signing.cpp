#include "security/jwt_keyring.hpp"
#include "security/random.hpp"
#include "security/secret_box.hpp"
#include "use_cases/accounts/use_cases.hpp"

namespace mailassay::use_cases::accounts {

namespace {

using core::errc;
using core::make_error;

// Binds a sealed secret to its key id (and to this table: a webhook's
// sealed secret copied here does not open).
std::string seal_context(const std::string& kid) {
  return "signing_keys/" + kid;
}

expected<std::string> server_key_of(std::string_view hex) {
  auto key = security::secret_box_key_from_hex(hex);
  if (!key)
    return make_error(errc::internal, "webhooks.secret_key (the server key "
                                      "sealing the signing keys) is not set");
  return std::move(*key);
}

// What a database written before keys were sealed holds: the base62 secret
// itself. A sealed value always starts with "x1." ('.' is not base62).
bool is_plain(const acc::signing_key& row) {
  return row.secret.find('.') == std::string::npos;
}

acc::signing_key fresh_key(const std::string& server_key) {
  acc::signing_key k;
  // A kid says nothing about the secret; 256+ bits of secret.
  k.kid = security::random_base62(12);
  k.secret = security::seal(server_key, security::random_base62(64),
                            seal_context(k.kid));
  return k;
}

// Seals in place the keys a database written before keys were sealed
// holds in plain text; the rows keep their plain secret in `rows` for
// opening. Run at start (and by a rotation), never per request.
expected<unit> seal_plain_keys(storage::store& db,
                               const std::vector<acc::signing_key>& rows,
                               const std::string& server_key) {
  for (const auto& r : rows) {
    if (!is_plain(r))
      continue;
    auto sealed = security::seal(server_key, r.secret, seal_context(r.kid));
    // false: another process starting now sealed it first; same secret.
    if (auto ok = db.seal_signing_key(r.kid, r.secret, sealed); !ok)
      return std::move(ok).error_value();
  }
  return unit{};
}

} // namespace

expected<std::vector<security::jwt_key>>
signing_keys_of(const std::vector<acc::signing_key>& rows,
                std::string_view server_key_hex) {
  auto server_key = server_key_of(server_key_hex);
  if (!server_key)
    return std::move(server_key).error_value();
  std::vector<security::jwt_key> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    if (is_plain(r)) {
      // Not sealed yet: the first start of this version seals it.
      out.push_back(security::jwt_key{r.kid, r.secret, r.retired_at});
      continue;
    }
    auto secret =
        security::open_sealed(*server_key, r.secret, seal_context(r.kid));
    if (!secret)
      return make_error(errc::internal,
                        "signing key " + r.kid +
                            " does not open with the server key "
                            "(webhooks.secret_key differs from the one "
                            "that sealed it)");
    out.push_back(security::jwt_key{r.kid, std::move(*secret), r.retired_at});
  }
  return out;
}

expected<unit> load_signing_keys(storage::store& db,
                                 security::jwt_keyring& ring,
                                 std::string_view server_key_hex) {
  auto server_key = server_key_of(server_key_hex);
  if (!server_key)
    return std::move(server_key).error_value();
  auto rows = db.ensure_signing_key(fresh_key(*server_key));
  if (!rows)
    return std::move(rows).error_value();
  if (auto ok = seal_plain_keys(db, *rows, *server_key); !ok)
    return std::move(ok).error_value();
  auto keys = signing_keys_of(*rows, server_key_hex);
  if (!keys)
    return std::move(keys).error_value();
  ring.replace(std::move(*keys));
  return unit{};
}

expected<std::string> rotate_signing_key(storage::store& db,
                                         std::string_view server_key_hex,
                                         std::int64_t keep_seconds,
                                         bool drop_old) {
  auto server_key = server_key_of(server_key_hex);
  if (!server_key)
    return std::move(server_key).error_value();
  auto next = fresh_key(*server_key);
  auto rows = db.rotate_signing_key(next, drop_old ? -1 : keep_seconds);
  if (!rows)
    return std::move(rows).error_value();
  if (auto ok = seal_plain_keys(db, *rows, *server_key); !ok)
    return std::move(ok).error_value();
  return next.kid;
}

} // namespace mailassay::use_cases::accounts
