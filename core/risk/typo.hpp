#pragma once

#include "core/risk/lists.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mailassay::core::risk {

/// Suggests the domain the user probably meant, mailcheck-style but
/// conservative; nullopt when there is nothing to correct.
///
/// - Domains that are major providers or on the free-provider list are
///   never corrected (`gmx.com`, `ymail.com`, `hotmail.fr`, `live.com`).
/// - The top-level domain is corrected only when it is not a delegated TLD
///   (`.con`, `.cmo`, `.ocm`, `.comm`, `.nett`; never `.cn`, `.shop`), and
///   only to `com`, `net`, `org`, `edu`, `gov` or `info`.
/// - A major provider's own first label with a mistyped suffix gets the
///   provider: a suffix one edit from `com`, delegated or not (`gmail.cm`,
///   `gmail.om`, `gmail.co`), or one whose last label is not delegated and
///   is one edit from the provider's (`yahoo.co.uj`, `gmx.dee`); never a
///   delegated country suffix (`yahoo.co.id`, `hotmail.com.ar`, `gmx.at`).
/// - The first label is corrected only towards a major provider's, with the
///   same first letter, a length within 2, an edit distance (with
///   transpositions) of 1 for labels of 4-5 letters and up to 2 from 6
///   letters, and only when the corrected domain is itself a major provider
///   (`gma.com` is left alone rather than turned into a domain nobody uses).
/// - The result is never the input. A suggestion is advice: it never makes
///   an address invalid.
std::optional<std::string> suggest_domain(const lists& l,
                                          std::string_view ascii_domain);

/// Returns the optimal-string-alignment distance (Levenshtein plus adjacent
/// transpositions) between `a` and `b`, or `limit + 1` once it exceeds
/// `limit`. Both at most 64 characters.
int edit_distance(std::string_view a, std::string_view b, int limit) noexcept;

} // namespace mailassay::core::risk
