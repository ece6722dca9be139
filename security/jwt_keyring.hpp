#pragma once

#include "core/base/expected.hpp"
#include "security/jwt.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::security {

/// The keys this process signs and verifies access tokens with, shared by
/// every thread that authenticates.
///
/// Either one configured secret (`auth.jwt_secret`: tokens carry no `kid`,
/// nothing is ever reloaded), or the deployment's keys held in the database
/// (docs/deployment.md): the current key signs, retired ones still verify
/// the tokens they signed until these expire. The holder replaces the set
/// when the database says it changed (a rotation, NOTIFY) or when a token
/// names a key this process does not know yet.
class jwt_keyring {
public:
  /// A ring of one configured secret; `replace` is never needed.
  static std::shared_ptr<jwt_keyring> fixed(std::string secret);

  /// A ring to be filled from the database with `replace`.
  static std::shared_ptr<jwt_keyring> shared();

  /// Installs `keys`: the one with `retired_at == 0` signs (the first such
  /// key if several), the others only verify. Thread-safe.
  void replace(std::vector<jwt_key> keys);

  /// Signs with the current key. Thread-safe.
  std::string sign(const access_claims& claims) const;

  /// Verifies `token` (see `verify_access_token`). Thread-safe.
  core::expected<access_claims> verify(std::string_view token,
                                       std::int64_t now) const;

  /// Returns whether `token` names a `kid` this ring does not hold: the
  /// keys may have been rotated meanwhile. Always false for a fixed ring.
  bool names_unknown_key(std::string_view token) const;

  /// Returns whether a reload for an unknown `kid` may run at `now_ms`
  /// (monotonic milliseconds), and if so counts it: at most one a second,
  /// so forged kids cannot turn every request into a database read.
  bool take_reload_turn(std::int64_t now_ms);

  /// Whether the ring holds one configured secret.
  bool is_fixed() const { return fixed_; }

  /// The kid that signs now ("" for a configured secret).
  std::string current_kid() const;

private:
  explicit jwt_keyring(bool fixed) : fixed_(fixed) {}

  using key_set = std::vector<jwt_key>;
  std::shared_ptr<const key_set> snapshot() const;

  const bool fixed_;
  mutable std::mutex mtx_;
  std::shared_ptr<const key_set> keys_; // guarded by mtx_; current first
  std::atomic<std::int64_t> last_reload_ms_{-1000000};
};

} // namespace mailassay::security
