#pragma once

// What a member (role member) sees of an endpoint's URL
// (docs/webhooks.md, "Roles"): the query string often carries the
// receiver's token, so each parameter's value is replaced by `***`; the
// names stay, so a member can still tell which parameters are set.

#include <string>
#include <string_view>

namespace mailassay::core::webhooks {

/// Returns `url` with the value of every query parameter replaced by
/// `***` (`?token=abc&v=2` -> `?token=***&v=***`); a parameter without `=`
/// is replaced whole (`?abc` -> `?***`). A URL without a query is
/// returned as is.
std::string redacted_url(std::string_view url);

} // namespace mailassay::core::webhooks
