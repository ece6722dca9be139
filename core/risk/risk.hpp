#pragma once

#include "core/risk/domain.hpp"
#include "core/risk/lists.hpp"
#include "core/risk/local_part.hpp"
#include "core/risk/random.hpp"
#include "core/risk/typo.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mailassay::core::risk {

/// Every risk signal of one address.
struct report {
  /// The domain or a parent is a disposable provider.
  bool disposable = false;
  /// The domain is a free mailbox provider.
  bool free_provider = false;
  /// The role word, when the local part is a role account.
  std::optional<std::string_view> role;
  /// The random-local-part verdict.
  random_verdict random;
  /// The domain the user probably meant, if it looks mistyped.
  std::optional<std::string> suggestion;
  /// The probable first name (enrichment), when asked for.
  std::optional<std::string> first_name;
};

/// Runs every risk check on a syntactically valid address: `local_part` as
/// written, `ascii_domain` lower-case A-labels. `with_first_name` turns the
/// enrichment on.
report assess(const lists& l, std::string_view local_part,
              std::string_view ascii_domain, bool with_first_name = false);

} // namespace mailassay::core::risk
