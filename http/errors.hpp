#pragma once

#include "core/base/errc.hpp"

namespace mailassay::http {

/// The HTTP status of an error kind (the one table; see docs/api.md).
int status_of(core::errc code);

/// The machine `code` of an error kind, e.g. "UNAUTHORIZED".
const char* code_of(core::errc code);

} // namespace mailassay::http
