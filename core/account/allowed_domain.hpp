#pragma once

#include <string_view>

namespace mailassay::core::account {

/// Why a name cannot restrict an API key, if it cannot.
enum class domain_scope {
  site,          ///< A domain of one site (or an IP address): usable.
  single_label,  ///< One label (`com`, `localhost`): no site owns it.
  public_suffix, ///< On the Public Suffix List (`co.uk`, `github.io`).
};

/// Classifies an `allowedDomains` entry (lower-case ASCII, already shaped
/// like a host name). An entry also admits its subdomains, so a suffix
/// under which anyone may register a name would make the key work from
/// everyone's sites: the Public Suffix List (libpsl's built-in copy, ICANN
/// and private sections) decides.
domain_scope scope_of_allowed_domain(std::string_view domain);

} // namespace mailassay::core::account
