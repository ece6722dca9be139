#include "security/jwt_keyring.hpp"

#include "security/random.hpp"

#include <algorithm>

namespace mailassay::security {

std::shared_ptr<jwt_keyring> jwt_keyring::fixed(std::string secret) {
  std::shared_ptr<jwt_keyring> ring{new jwt_keyring(true)};
  ring->keys_ = std::make_shared<const key_set>(
      key_set{jwt_key{{}, std::move(secret), 0}});
  return ring;
}

std::shared_ptr<jwt_keyring> jwt_keyring::shared() {
  std::shared_ptr<jwt_keyring> ring{new jwt_keyring(false)};
  ring->keys_ = std::make_shared<const key_set>();
  return ring;
}

void jwt_keyring::replace(std::vector<jwt_key> keys) {
  // The signing key first, so `sign` need not search.
  std::stable_partition(keys.begin(), keys.end(),
                        [](const jwt_key& k) { return k.retired_at == 0; });
  auto next = std::make_shared<const key_set>(std::move(keys));
  std::lock_guard guard{mtx_};
  keys_ = std::move(next);
}

std::shared_ptr<const jwt_keyring::key_set> jwt_keyring::snapshot() const {
  std::lock_guard guard{mtx_};
  return keys_;
}

std::string jwt_keyring::sign(const access_claims& claims) const {
  auto keys = snapshot();
  // Never empty once serve started (the database holds a key before the
  // first request); an empty ring signs nothing anyone accepts.
  if (keys->empty())
    return sign_access_token(claims, jwt_key{"none", random_base62(64), 0});
  return sign_access_token(claims, keys->front());
}

core::expected<access_claims> jwt_keyring::verify(std::string_view token,
                                                  std::int64_t now) const {
  auto keys = snapshot();
  return verify_access_token(token, std::span<const jwt_key>{*keys}, now);
}

bool jwt_keyring::names_unknown_key(std::string_view token) const {
  if (fixed_)
    return false;
  auto kid = token_kid(token);
  if (kid.empty())
    return false;
  auto keys = snapshot();
  return std::none_of(keys->begin(), keys->end(),
                      [&](const jwt_key& k) { return k.kid == kid; });
}

bool jwt_keyring::take_reload_turn(std::int64_t now_ms) {
  auto last = last_reload_ms_.load();
  if (now_ms - last < 1000)
    return false;
  return last_reload_ms_.compare_exchange_strong(last, now_ms);
}

std::string jwt_keyring::current_kid() const {
  auto keys = snapshot();
  return keys->empty() ? std::string{} : keys->front().kid;
}

} // namespace mailassay::security
