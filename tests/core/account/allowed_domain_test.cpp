#include "core/account/allowed_domain.hpp"

#include <doctest/doctest.h>

using mailassay::core::account::domain_scope;
using mailassay::core::account::scope_of_allowed_domain;

TEST_SUITE("core.account.allowed_domain") {
  TEST_CASE("single labels and public suffixes cannot restrict a key") {
    struct row {
      const char* domain;
      domain_scope want;
    };
    for (auto [d, want] : {
             row{"com", domain_scope::single_label},
             row{"localhost", domain_scope::single_label},
             row{"co.uk", domain_scope::public_suffix},
             row{"github.io", domain_scope::public_suffix},
             row{"blogspot.com", domain_scope::public_suffix},
             row{"example.com", domain_scope::site},
             row{"shop.example.co.uk", domain_scope::site},
             row{"me.github.io", domain_scope::site},
             row{"127.0.0.1", domain_scope::site},
         }) {
      CAPTURE(d);
      CHECK(scope_of_allowed_domain(d) == want);
    }
  }
}
