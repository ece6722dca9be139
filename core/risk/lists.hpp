#pragma once

#include "core/risk/string_set.hpp"
#include "core/risk/trigram_model.hpp"

#include <cstdint>
#include <string_view>

namespace mailassay::core::risk {

/// The text of every risk list, as read from data/risk/*.txt by the caller
/// (core never opens files). Each list: one entry per line, `#` comments.
/// The views need only live until `lists_from_texts` returns.
struct list_texts {
  /// data/risk/disposable.txt: disposable domains.
  std::string_view disposable;
  /// data/risk/disposable_allow.txt: domains never treated as disposable.
  std::string_view disposable_allow;
  /// data/risk/free_providers.txt: free mailbox providers.
  std::string_view free_providers;
  /// data/risk/roles.txt: role local parts.
  std::string_view roles;
  /// data/risk/tlds.txt: every delegated top-level domain (A-labels).
  std::string_view tlds;
  /// data/risk/first_names.txt: ASCII-folded first names.
  std::string_view first_names;
  /// data/risk/last_names.txt: ASCII-folded family names.
  std::string_view last_names;
  /// data/risk/common_words.txt: common English words.
  std::string_view common_words;
  /// The operator's own disposable domains
  /// (`MAILASSAY_RISK_EXTRA_DISPOSABLE_FILE`), merged into `disposable`.
  std::string_view extra_disposable;
  /// The operator's own free providers, merged into `free_providers`.
  std::string_view extra_free_providers;
  /// The operator's own role local parts, merged into `roles`.
  std::string_view extra_roles;
};

/// Every list the risk signals consult, parsed once and shared read-only.
struct lists {
  /// Disposable domains (shipped list plus operator extras).
  domain_set disposable;
  /// The entries of `disposable` that are public suffixes (`dynv6.net`),
  /// found with libpsl once at load: a listed suffix marks only itself,
  /// never the domains of other registrants below it.
  domain_set disposable_suffixes;
  /// Domains that are never disposable; wins over `disposable`.
  domain_set disposable_allow;
  /// Free mailbox providers; disposable domains are never in it.
  domain_set free_providers;
  /// Role local parts.
  role_set roles;
  /// Every role word and the first token (split on `.` `_` `-`, trailing
  /// digits dropped) of every role entry: a local part whose first token is
  /// not here is no role, decided with one lookup.
  role_set role_heads;
  /// Delegated top-level domains.
  domain_set tlds;
  /// First names, for enrichment and the random model.
  name_set first_names;
  /// Family names and common words: known-good letter runs.
  name_set known_words;
  /// The random model, trained on first names, family names and words.
  trigram_model model;
  /// A 64-bit hash of every text the lists were built from (never 0): two
  /// lists with the same fingerprint give the same answers, so a memo of
  /// answers (`core::validation::domain_memo`) keyed by it stays right when
  /// other lists later sit at the same address. Derived from the content,
  /// not from a counter: core keeps no state between calls.
  std::uint64_t fingerprint = 0;
};

/// Parses every list and trains the random model (tens of milliseconds).
/// A free-provider entry that is also disposable is dropped, operator
/// extras included.
lists lists_from_texts(const list_texts& texts);

} // namespace mailassay::core::risk
