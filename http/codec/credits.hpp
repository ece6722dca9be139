#pragma once

// The credit documents: the balance and the ledger's entries.

#include "core/account/records.hpp"
#include "http/codec/json_text.hpp"

#include <cstdint>
#include <vector>

namespace mailassay::http::codec {

/// {organizationId, balance, consumed, updatedAt}.
json balance(const core::account::credit_balance& b);

/// {id, delta, kind, reference, balanceAfter, createdAt}.
json credit_entry(const core::account::credit_entry& e);

/// One page of entries: {items, nextBefore}; nextBefore is the last
/// entry's id when the page is full (`limit` entries), else null.
json transactions(const std::vector<core::account::credit_entry>& rows,
                  std::int64_t limit);

} // namespace mailassay::http::codec
