#include "http/codec/credits.hpp"

#include "core/base/time_format.hpp"

namespace mailassay::http::codec {

namespace acc = core::account;

json balance(const acc::credit_balance& b) {
  return {{"organizationId", b.organization_id},
          {"balance", b.balance},
          {"consumed", b.consumed},
          {"updatedAt", core::iso8601(b.updated_at)}};
}

json credit_entry(const acc::credit_entry& e) {
  return {{"id", e.id},
          {"delta", e.delta},
          {"kind", e.kind},
          {"reference", e.reference},
          {"balanceAfter", e.balance_after},
          {"createdAt", core::iso8601(e.created_at)}};
}

json transactions(const std::vector<acc::credit_entry>& rows,
                  std::int64_t limit) {
  auto items = json::array();
  for (auto& r : rows)
    items.push_back(credit_entry(r));
  json next = nullptr;
  if (static_cast<std::int64_t>(rows.size()) == limit && !rows.empty())
    next = rows.back().id;
  return json{{"items", items}, {"nextBefore", next}};
}

} // namespace mailassay::http::codec
