#include "security/jwt_keyring.hpp"
#include "security/random.hpp"
#include "use_cases/accounts/use_cases.hpp"

namespace mailassay::use_cases::accounts {

namespace {

acc::signing_key fresh_key() {
  acc::signing_key k;
  // A kid says nothing about the secret; 256+ bits of secret.
  k.kid = security::random_base62(12);
  k.secret = security::random_base62(64);
  return k;
}

} // namespace

std::vector<security::jwt_key>
signing_keys_of(const std::vector<acc::signing_key>& rows) {
  std::vector<security::jwt_key> out;
  out.reserve(rows.size());
  for (const auto& r : rows)
    out.push_back(security::jwt_key{r.kid, r.secret, r.retired_at});
  return out;
}

expected<unit> load_signing_keys(storage::store& db,
                                 security::jwt_keyring& ring) {
  auto keys = db.ensure_signing_key(fresh_key());
  if (!keys)
    return std::move(keys).error_value();
  ring.replace(signing_keys_of(*keys));
  return unit{};
}

expected<std::string> rotate_signing_key(storage::store& db,
                                         std::int64_t keep_seconds,
                                         bool drop_old) {
  auto next = fresh_key();
  auto keys = db.rotate_signing_key(next, drop_old ? -1 : keep_seconds);
  if (!keys)
    return std::move(keys).error_value();
  return next.kid;
}

} // namespace mailassay::use_cases::accounts
