#pragma once

#include "core/risk/lists.hpp"

#include <string_view>

namespace mailassay::core::risk {

/// Returns whether a domain (lower-case A-labels, no trailing dot) is
/// disposable: the domain itself, or a parent down to its registrable domain
/// (public-suffix aware, libpsl), is on the disposable list, and neither the
/// domain nor any parent is on the allowlist, which always wins. A listed
/// public suffix (`dynv6.net`) marks only itself, never the domains of other
/// registrants below it. No allocation.
bool is_disposable(const lists& l, std::string_view ascii_domain);

/// Returns whether a domain is a free mailbox provider (exact match).
bool is_free_provider(const lists& l, std::string_view ascii_domain) noexcept;

/// Returns whether `label` (lower-case, no dot) is a delegated TLD.
bool is_known_tld(const lists& l, std::string_view label) noexcept;

namespace detail {

/// The two domain-list signals of one address.
struct domain_kind {
  /// `is_disposable`.
  bool disposable = false;
  /// `is_free_provider`, and not disposable.
  bool free_provider = false;
};

/// `is_disposable` and `!disposable && is_free_provider` at once, hashing
/// the domain once for every list (`assess` and the free checks need both).
domain_kind classify_domain(const lists& l, std::string_view ascii_domain);

} // namespace detail

} // namespace mailassay::core::risk
