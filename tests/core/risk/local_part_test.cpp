#include "shipped_lists.hpp"

#include "core/risk/local_part.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string_view>

using namespace mailassay::core::risk;
using mailassay::tests::shipped_lists;

TEST_SUITE("core.risk.local_part") {
  TEST_CASE("recognises role accounts by whole tokens") {
    const auto& l = shipped_lists();
    struct row {
      std::string_view local;
      std::optional<std::string_view> role;
    };
    const row rows[] = {
        {"info", "info"},
        {"INFO", "info"},
        {"info+news", "info"},
        {"sales+q3-2024", "sales"},
        {"info2", "info"},
        {"sales01", "sales"},
        {"support2024", "support"},
        {"admin", "admin"},
        {"postmaster", "postmaster"},
        {"abuse", "abuse"},
        {"no-reply", "no-reply"},
        {"noreply", "noreply"},
        {"webmaster", "webmaster"},
        {"hr", "hr"},
        {"sales.team", "sales.team"},
        {"sales_team", "sales"},
        {"support-team", "support-team"},
        {"it_support", "it"},
        {"dev-ops", "dev"},
        {"hr-2024", "hr"},
        {"info.sales", "info"},
        {"marketing.2024", "marketing"},
        {"johnson", std::nullopt},
        {"adminton", std::nullopt},
        {"marketa", std::nullopt},
        {"information", "information"},
        {"informationen", std::nullopt},
        {"salesforce.jane", std::nullopt},
        {"sales.jones", std::nullopt},
        {"john.info", std::nullopt},
        {"infoman", std::nullopt},
        {"supporter", std::nullopt},
        {"alexa", std::nullopt},
        {"per.gardner", std::nullopt},
        {"j.smith1987", std::nullopt},
        {"2024", std::nullopt},
        {"", std::nullopt},
        {"+info", std::nullopt},
    };
    for (const auto& r : rows) {
      CAPTURE(r.local);
      CHECK(role_of(l, r.local) == r.role);
    }
  }

  TEST_CASE("operator roles extend the shipped list") {
    list_texts t;
    t.roles = "info\n";
    t.extra_roles = "ops-oncall\nleitstelle\n";
    auto l = lists_from_texts(t);
    CHECK(role_of(l, "leitstelle") ==
          std::optional<std::string_view>{"leitstelle"});
    CHECK(role_of(l, "ops-oncall+pager") ==
          std::optional<std::string_view>{"ops-oncall"});
    CHECK_FALSE(role_of(l, "leitstellen"));
  }

  TEST_CASE("finds the probable first name") {
    const auto& l = shipped_lists();
    struct row {
      std::string_view local;
      std::optional<std::string_view> name;
    };
    const row rows[] = {
        {"john.smith", "John"},
        {"maria.garcia83", "Maria"},
        {"JohnSmith", "John"},
        {"J.Smith", std::nullopt},
        {"JSmith", std::nullopt},
        {"j.smith", std::nullopt},
        {"anna_kowalska", "Anna"},
        {"pierre-louis", "Pierre"},
        {"krzysztof.szczepanski", "Krzysztof"},
        {"1987.michael", "Michael"},
        {"olga+shop", "Olga"},
        {"xkq7zv9pw", std::nullopt},
        {"info", std::nullopt},
        {"sales.team", std::nullopt},
        {"", std::nullopt},
        {"x", std::nullopt},
    };
    for (const auto& r : rows) {
      CAPTURE(r.local);
      auto name = first_name(l, r.local);
      CHECK(name.has_value() == r.name.has_value());
      if (name && r.name)
        CHECK(*name == *r.name);
    }
  }
}
