#pragma once

#include <optional>
#include <string>

#include "core/risk/lists.hpp"
#include "core/risk/random.hpp"
#include "core/syntax/address.hpp"

namespace mailassay::core::validation {

/// Which optional checks a key enables (its `config`).
struct toggles {
  bool disposable = true;
  bool role_account = true;
  bool random_detection = true;
  bool enrichment = false;
};

/// The checks that cost nothing: lists and models only, no network.
/// `std::nullopt` means the key switched the check off.
struct free_checks {
  std::optional<bool> disposable;
  bool free_provider = false;
  std::optional<bool> role_account;
  std::string role; ///< The role word when `role_account` is true.
  std::optional<risk::random_verdict> random;
  std::optional<std::string> suggested_domain; ///< Typo correction.
  std::optional<std::string> first_name;       ///< Enrichment only.
};

/// Runs every free check `t` enables on a parsed address. An address that
/// did not parse gets false (not null) for the enabled checks.
free_checks run_free_checks(const risk::lists& l,
                            const syntax::parsed_address& a, const toggles& t);

} // namespace mailassay::core::validation
