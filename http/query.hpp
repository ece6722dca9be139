#pragma once

// A request's query string, read parameter by parameter.
//
// The form is application/x-www-form-urlencoded (WHATWG URL §5.1) over the
// query of RFC 3986 §3.4: `&` separates parameters, the first `=` a name
// from its value, `+` is a space and `%XX` an octet. Every other byte is
// taken as it is: `,` `;` `:` `@` `/` `?` `!` `*` `(` `)` `'` `$` are legal
// unencoded in a query, and the bytes RFC 3986 would have encoded (`|`,
// `^`, raw UTF-8 ...) are sent unencoded by real clients. Only what cannot
// be read is refused: a broken `%` escape, a control character, a
// parameter without a name.

#include "core/base/expected.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mailassay::http {

/// The decoded parameters of one query string, in the order given.
class query_args {
public:
  /// Reads `raw` (the text after `?`, without it). A parameter that cannot
  /// be read -> errc::bad_request naming it.
  static core::expected<query_args> parse(std::string_view raw);

  /// Returns the value of the first parameter named `name`.
  std::optional<std::string_view> get(std::string_view name) const;

  /// Returns every parameter as (name, value), in order.
  const std::vector<std::pair<std::string, std::string>>& items() const {
    return items_;
  }

  /// Returns the 422 messages of names that are not in `allowed` (a list
  /// separated by commas, e.g. "format,status") and of names given more
  /// than once; empty when there are none.
  std::vector<std::string> problems(std::string_view allowed) const;

private:
  std::vector<std::pair<std::string, std::string>> items_;
};

} // namespace mailassay::http
