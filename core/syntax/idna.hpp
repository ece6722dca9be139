#pragma once

// IDNA2008 (RFC 5891) through libidn2: a U-label domain to its A-labels.

#include <string>
#include <string_view>

namespace mailassay::core::syntax {

/// Converts `domain` (UTF-8, NFC, lower case) to A-labels into
/// `ascii_domain`, without UTS #46 mapping (RFC 5891 §4, §5.4: only NFC is
/// applied, so fullwidth and invisible characters fail rather than being
/// mapped away); with `has_xn`, also checks that every A-label survives a
/// decode and re-encode unchanged. Returns why it failed, or empty.
std::string_view a_labels_of(const std::string& domain, bool has_xn,
                             std::string& ascii_domain);

} // namespace mailassay::core::syntax
