#pragma once

// What kind of domain an address is at: a special-use or reverse-mapping
// name, a mailbox provider whose addresses fold (plus tags, dots, case).
// Inline: the parser asks on every address.

#include <cstring>
#include <string_view>

namespace mailassay::core::syntax {

/// The last label of a domain. Forward, one memchr per dot: a byte loop
/// backwards from the end (rfind) mispredicts its exit on every address.
inline std::string_view last_label(std::string_view d) {
  while (const void* p =
             d.empty() ? nullptr : std::memchr(d.data(), '.', d.size()))
    d.remove_prefix(static_cast<const char*>(p) - d.data() + 1);
  return d;
}

/// RFC 6761 §6.2-6.4 (test, localhost, invalid), RFC 6762 (local), RFC 7686
/// (onion), RFC 3172 (arpa, infrastructure; home.arpa is RFC 8375); returns
/// the reserved TLD matched. The example names (RFC 6761 §6.5: example,
/// example.com/net/org) are not here: "applications SHOULD NOT treat them
/// specially", so they parse as ordinary names and DNS decides (the real
/// example.com publishes a null MX).
inline std::string_view special_use(std::string_view ascii_domain) {
  auto tld = last_label(ascii_domain);
  // By length first: almost every TLD is two or three letters long and
  // leaves after one comparison of sizes.
  switch (tld.size()) {
    case 4: return tld == "test" || tld == "arpa" ? tld : std::string_view{};
    case 5: return tld == "local" || tld == "onion" ? tld : std::string_view{};
    case 7: return tld == "invalid" ? tld : std::string_view{};
    case 9: return tld == "localhost" ? tld : std::string_view{};
    default: return {};
  }
}

/// Whether `ascii_domain` (under .arpa) is a reverse-mapping name (RFC 1035
/// §3.5 in-addr.arpa, RFC 3596 §2.5 ip6.arpa): names of addresses, which
/// never receive mail whatever the configuration allows.
inline bool reverse_mapping(std::string_view ascii_domain) {
  auto ends_with = [&](std::string_view zone) {
    if (ascii_domain.size() < zone.size() ||
        ascii_domain.substr(ascii_domain.size() - zone.size()) != zone)
      return false;
    return ascii_domain.size() == zone.size() ||
           ascii_domain[ascii_domain.size() - zone.size() - 1] == '.';
  };
  return ends_with("in-addr.arpa") || ends_with("ip6.arpa");
}

/// How a mailbox provider folds its addresses (normalized form).
enum class mailbox_rules { other, gmail, plus_tags, case_only };

/// How the provider at `domain` (lower case) folds its addresses.
inline mailbox_rules mailbox_rules_of(std::string_view domain) {
  // Plus-tag providers per their documentation; Yahoo's disposable addresses
  // use '-' with a chosen base name, so only its case is folded. Grouped by
  // length, so that most domains are told apart by one comparison of sizes
  // rather than fourteen string comparisons.
  switch (domain.size()) {
    case 5:
      return domain == "pm.me" ? mailbox_rules::plus_tags
                               : mailbox_rules::other;
    case 6:
      return domain == "me.com" ? mailbox_rules::plus_tags
                                : mailbox_rules::other;
    case 7:
      return domain == "mac.com" ? mailbox_rules::plus_tags
                                 : mailbox_rules::other;
    case 8:
      return domain == "live.com" ? mailbox_rules::plus_tags
                                  : mailbox_rules::other;
    case 9:
      if (domain == "gmail.com")
        return mailbox_rules::gmail;
      if (domain == "proton.me")
        return mailbox_rules::plus_tags;
      return domain == "yahoo.com" ? mailbox_rules::case_only
                                   : mailbox_rules::other;
    case 10:
      return domain == "icloud.com" ? mailbox_rules::plus_tags
                                    : mailbox_rules::other;
    case 11:
      return domain == "outlook.com" || domain == "hotmail.com"
                 ? mailbox_rules::plus_tags
                 : mailbox_rules::other;
    case 12:
      return domain == "fastmail.com" ? mailbox_rules::plus_tags
                                      : mailbox_rules::other;
    case 13:
      return domain == "protonmail.ch" ? mailbox_rules::plus_tags
                                       : mailbox_rules::other;
    case 14:
      if (domain == "googlemail.com")
        return mailbox_rules::gmail;
      return domain == "protonmail.com" ? mailbox_rules::plus_tags
                                        : mailbox_rules::other;
    default: return mailbox_rules::other;
  }
}

} // namespace mailassay::core::syntax
