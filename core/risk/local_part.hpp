#pragma once

#include "core/risk/lists.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mailassay::core::risk {

/// Returns the role word if the local part is a role account, else nullopt.
///
/// The `+tag` is dropped and the rest lower-cased; then the local part is a
/// role when (1) it is a role word (`info`, `no-reply`), (2) it is a role
/// word followed by digits (`sales2`, `info2024`), or (3) split on `.` `_`
/// `-` into two or more tokens, every token is a role word or a role word
/// with digits, digit-only tokens aside (`sales.team`, `it_support`,
/// `hr-2024`). Only whole tokens count, never prefixes: `johnson`,
/// `adminton`, `marketa` and `sales.jones` are people. The view points into
/// the role list and lives as long as `l`.
std::optional<std::string_view> role_of(const lists& l,
                                        std::string_view local_part);

/// Returns the probable first name in a local part, capitalised, or nullopt.
///
/// The `+tag` is dropped; the rest is split on `.` `_` `-`, digits and
/// lower-to-upper case changes (`JohnSmith`); the first token of two or more
/// letters found in the first-name list wins (`maria.garcia83` gives
/// `Maria`). A local part that starts with an initial names no first name
/// (`j.smith`, `JSmith`), and neither does a role account.
std::optional<std::string> first_name(const lists& l,
                                      std::string_view local_part);

namespace detail {

/// `first_name` for a local part already known not to be a role account
/// (saves `assess` a second role lookup).
std::optional<std::string> first_name_of_person(const lists& l,
                                                std::string_view local_part);

} // namespace detail

} // namespace mailassay::core::risk
