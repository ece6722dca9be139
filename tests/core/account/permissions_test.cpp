// Who may erase what (docs/privacy.md): a table per rule, every role.
#include "core/account/permissions.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core::account;

TEST_SUITE("core.account.permissions") {
  TEST_CASE("owners and admins erase and export data; only owners erase the "
            "organization or set its retention") {
    struct row {
      role r;
      bool erase_data, erase_org, retention;
    };
    for (auto [r, data, org, retention] :
         {row{role::owner, true, true, true},
          row{role::admin, true, false, false},
          row{role::member, false, false, false}}) {
      CAPTURE(to_string(r));
      CHECK(may_erase_data(r) == data);
      CHECK(may_erase_organization(r) == org);
      CHECK(may_set_retention(r) == retention);
    }
  }
}
