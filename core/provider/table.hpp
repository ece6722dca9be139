#pragma once

// Who runs the mail of a domain, from the name of its MX host (issue #30):
// a table of host name suffixes read from data/risk/providers.txt
// (docs/provider-data.md). core never opens the file: config/ hands in its
// text.

#include "core/base/expected.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mailassay::core::provider {

/// What a provider does with the mail it accepts.
enum class provider_kind {
  mailbox, ///< The mailboxes live there (Google, Microsoft 365, Yahoo ...).
  gateway, ///< Accepts or filters mail for a mailbox hosted elsewhere.
};

/// Returns "mailbox" or "gateway".
std::string_view to_string(provider_kind kind);

/// A provider as an answer names it.
struct provider_ref {
  std::string name; ///< e.g. "google"; short (fits the small-string buffer).
  provider_kind kind = provider_kind::mailbox;

  /// Compares name and kind.
  friend bool operator==(const provider_ref&, const provider_ref&) = default;
};

/// The suffix table: an MX host matches an entry when it equals the entry's
/// suffix or ends with "." and the suffix; the longest matching suffix wins.
/// Read-only once built, so shared between threads without a lock.
class table {
public:
  /// An empty table: nothing matches.
  table() = default;

  /// Parses `text`: one entry per line, `suffix provider kind`, `#` starts
  /// a comment, blank lines skipped. A suffix is a host name (letters,
  /// digits, `-`, `.`; no leading or trailing dot; case folded); a provider
  /// name is `[a-z0-9_-]`, at most 15 characters; kind is `mailbox` or
  /// `gateway`. A bad line, a suffix listed twice, or one provider with
  /// two kinds -> errc::bad_request naming the line.
  static expected<table> parse(std::string_view text);

  /// Returns the provider of MX host `host` (any case, a trailing dot
  /// ignored), or nullptr when no suffix matches. Looks up each suffix of
  /// the name once, longest first: a few hash lookups, no allocation.
  const provider_ref* find(std::string_view host) const;

  /// Every provider name in the table, sorted, without duplicates (the
  /// bounded label values of /metrics).
  const std::vector<std::string>& names() const { return names_; }

  /// The provider named `name`, or nullptr.
  const provider_ref* named(std::string_view name) const;

  /// Number of suffixes.
  std::size_t size() const { return by_suffix_.size(); }

private:
  struct text_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
      return std::hash<std::string_view>{}(s);
    }
  };

  /// Suffix -> index into `providers_`.
  std::unordered_map<std::string, std::size_t, text_hash, std::equal_to<>>
      by_suffix_;
  std::vector<provider_ref> providers_; ///< One per name, sorted by name.
  std::vector<std::string> names_;
};

} // namespace mailassay::core::provider
