#pragma once

#include "core/risk/lists.hpp"
#include "core/risk/random.hpp"
#include "core/syntax/address.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// What the domain alone decides: both domain lists and the typo
/// suggestion.
struct domain_facts {
  /// `risk::is_disposable`.
  bool disposable = false;
  /// `risk::is_free_provider`, and not disposable.
  bool free_provider = false;
  /// `risk::suggest_domain`, never for a special-use domain.
  std::optional<std::string> suggestion;
};

/// Returns the facts of `ascii_domain` computed afresh (~85 ns).
domain_facts facts_of(const risk::lists& l, std::string_view ascii_domain);

/// A small direct-mapped table of recent domains' `domain_facts`.
///
/// Traffic repeats domains heavily (a few providers, then each company's
/// own): the table answers most addresses with one hash and one comparison
/// instead of two set lookups and the typo search. Entries are keyed by the
/// lists' fingerprint too, so a memo may be used with any lists. Not
/// synchronised: whoever owns a thread keeps one memo for it (the
/// validator, one per thread that calls it) and passes it in.
class domain_memo {
public:
  /// Slots in the table: 4096 (~350 KiB, allocated here).
  domain_memo();

  /// Returns the facts of `ascii_domain` under `l`, from the table or
  /// computed and kept (a collision replaces the slot's domain). The
  /// reference stays valid until the next call.
  const domain_facts& facts(const risk::lists& l,
                            std::string_view ascii_domain);

private:
  struct slot {
    std::uint64_t fingerprint = 0; // of the lists; 0: empty slot
    std::string domain;
    domain_facts facts;
  };
  std::vector<slot> slots_;
};

/// Runs every free check `t` enables on a parsed address, with the domain
/// facts from `memo`. An address that did not parse gets false (not null)
/// for the enabled checks; an IP literal gets the local-part checks (role,
/// random, enrichment) only, as no list or typo applies to an address.
free_checks run_free_checks(const risk::lists& l,
                            const syntax::parsed_address& a, const toggles& t,
                            domain_memo& memo);

/// The same without a memo: the domain facts are computed afresh (the CLI,
/// tests, one-off checks).
free_checks run_free_checks(const risk::lists& l,
                            const syntax::parsed_address& a, const toggles& t);

} // namespace mailassay::core::validation
