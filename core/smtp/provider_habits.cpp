#include "core/smtp/provider_habits.hpp"

#include <array>
#include <string_view>

namespace mailassay::core::smtp {

namespace {

// One provider whose answers are read differently from the generic
// classification (core/smtp/classify.cpp), with the reply it was written
// for. A provider that is not here is read like any host. The names are
// those of data/risk/providers.txt.
struct habit_row {
  std::string_view provider;
  bool accepts_all;
  bool one_rcpt_per_transaction;
};

// clang-format off
constexpr std::array habit_rows{
    // Yahoo (yahoo.com, AOL, Yahoo Small Business behind *.yahoodns.net):
    // "250 recipient <nobody-x9q@yahoo.com> ok" to every RCPT; unknown
    // mailboxes bounce after DATA.
    habit_row{"yahoo", true, false},
    // Consumer Outlook.com / Hotmail (*.olc.protection.outlook.com): the
    // second RCPT of a transaction from a sender it does not know gets
    // "452 4.5.3 Too many recipients ([...].prod.outlook.com)".
    habit_row{"outlook", false, true},
};
// clang-format on

} // namespace

provider_habits habits_of(const provider::provider_ref* provider) {
  provider_habits h;
  if (provider == nullptr)
    return h;
  h.gateway = provider->kind == provider::provider_kind::gateway;
  for (const auto& row : habit_rows)
    if (row.provider == provider->name) {
      h.accepts_all = row.accepts_all;
      h.one_rcpt_per_transaction = row.one_rcpt_per_transaction;
    }
  return h;
}

} // namespace mailassay::core::smtp
