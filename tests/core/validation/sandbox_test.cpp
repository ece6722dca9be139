#include "shipped_lists.hpp"

#include "core/validation/free_checks.hpp"
#include "core/validation/sandbox.hpp"
#include "core/validation/verdict.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

using namespace mailassay::core;
using mailassay::tests::shipped_lists;
using validation::sandbox_case;
using validation::status;

namespace {

// What the pipeline does with a sandbox answer: syntax and the free checks
// with the shipped lists, the answer's facts, the verdict.
validation::verdict sandbox_verdict(std::string_view input) {
  syntax::options opts;
  auto a = syntax::parse(input, opts);
  REQUIRE(a.valid);
  auto checks = validation::run_free_checks(shipped_lists(), a, {});
  auto answer =
      validation::sandbox_answer_of(validation::sandbox_case_of(a.local_part));
  validation::facts f;
  f.address = &a;
  f.route = answer.route.kind;
  f.disposable = checks.disposable;
  f.role_account = checks.role_account;
  f.random = checks.random;
  f.free_provider = checks.free_provider;
  f.typo = checks.suggested_domain.has_value();
  f.smtp = answer.smtp;
  return validation::decide(f);
}

} // namespace

TEST_SUITE("core.validation.sandbox") {
  TEST_CASE("the local part picks the case; a tag and ASCII case are "
            "ignored; anything else is valid") {
    struct row {
      std::string_view local;
      sandbox_case want;
    };
    for (auto r :
         {row{"valid", sandbox_case::valid},
          row{"invalid", sandbox_case::invalid},
          row{"catchall", sandbox_case::catch_all},
          row{"full", sandbox_case::full},
          row{"disabled", sandbox_case::disabled},
          row{"greylisted", sandbox_case::greylisted},
          row{"timeout", sandbox_case::timeout},
          row{"nomx", sandbox_case::no_mx},
          row{"valid+123", sandbox_case::valid},
          row{"invalid+a+b", sandbox_case::invalid},
          row{"NoMX", sandbox_case::no_mx}, row{"Full+x", sandbox_case::full},
          row{"invalid.x", sandbox_case::valid},
          row{"xinvalid", sandbox_case::valid},
          row{"+invalid", sandbox_case::valid}, row{"", sandbox_case::valid},
          row{"jane.doe", sandbox_case::valid},
          row{"catch-all", sandbox_case::valid}}) {
      CAPTURE(r.local);
      CHECK(validation::sandbox_case_of(r.local) == r.want);
    }
    for (auto c :
         {sandbox_case::valid, sandbox_case::invalid, sandbox_case::catch_all,
          sandbox_case::full, sandbox_case::disabled, sandbox_case::greylisted,
          sandbox_case::timeout, sandbox_case::no_mx})
      CHECK(validation::sandbox_case_of(validation::to_string(c)) == c);
  }

  TEST_CASE("every row of the table gets its status and reason from the "
            "verdict") {
    struct row {
      std::string_view email;
      status state;
      std::string_view reason;
    };
    for (auto r :
         {row{"valid@example.com", status::valid, "accepted_email"},
          row{"invalid@example.com", status::invalid, "rejected_email"},
          row{"catchall@example.com", status::risky, "catch_all"},
          row{"full@example.com", status::risky, "mailbox_full"},
          row{"disabled@example.com", status::invalid, "mailbox_disabled"},
          row{"greylisted@example.com", status::valid, "accepted_email"},
          row{"timeout@example.com", status::unknown, "timeout"},
          row{"nomx@example.com", status::invalid, "no_mx"},
          row{"jane.doe@example.com", status::valid, "accepted_email"},
          row{"valid+123@example.com", status::valid, "accepted_email"},
          row{"Invalid+x@Example.COM", status::invalid, "rejected_email"},
          // The free checks still count.
          row{"valid@mailinator.com", status::risky, "disposable"},
          row{"valid@gmial.com", status::risky, "typo"}}) {
      CAPTURE(r.email);
      auto v = sandbox_verdict(r.email);
      CHECK(v.state == r.state);
      CHECK(v.reason == r.reason);
    }
  }

  TEST_CASE("the facts of each case are the table's") {
    using validation::sandbox_answer_of;
    auto valid = sandbox_answer_of(sandbox_case::valid);
    CHECK(valid.route.kind == dns::route_kind::mx);
    REQUIRE(valid.route.hosts.size() == 1);
    CHECK(valid.route.hosts[0].host == validation::sandbox_mx_host);
    CHECK(valid.smtp.checked);
    CHECK(valid.smtp.deliverable == true);
    CHECK(valid.smtp.catch_all == false);
    CHECK(valid.reply.code == 250);
    CHECK(valid.reply.attempts == 1);

    auto invalid = sandbox_answer_of(sandbox_case::invalid);
    CHECK(invalid.reply.code == 550);
    CHECK(invalid.reply.enhanced == "5.1.1");
    CHECK(invalid.smtp.deliverable == false);

    auto catch_all = sandbox_answer_of(sandbox_case::catch_all);
    CHECK(catch_all.smtp.catch_all == true);

    auto full = sandbox_answer_of(sandbox_case::full);
    CHECK(full.reply.code == 552);
    CHECK(full.reply.enhanced == "5.2.2");
    CHECK(full.smtp.full_inbox);

    auto disabled = sandbox_answer_of(sandbox_case::disabled);
    CHECK(disabled.reply.code == 550);
    CHECK(disabled.reply.enhanced == "5.2.1");
    CHECK(disabled.smtp.disabled);

    auto grey = sandbox_answer_of(sandbox_case::greylisted);
    CHECK(grey.smtp.greylisted);
    CHECK_FALSE(grey.smtp.deferred);
    CHECK(grey.reply.attempts == 2);
    CHECK(grey.reply.code == 250);

    auto timeout = sandbox_answer_of(sandbox_case::timeout);
    CHECK(timeout.smtp.attempted);
    CHECK_FALSE(timeout.smtp.checked);
    CHECK(timeout.smtp.timed_out);
    CHECK(timeout.smtp.failure == validation::smtp_failure::timeout);
    CHECK_FALSE(timeout.smtp.deliverable.has_value());
    CHECK(timeout.reply.code == 0);

    auto nomx = sandbox_answer_of(sandbox_case::no_mx);
    CHECK(nomx.route.kind == dns::route_kind::no_mx);
    CHECK(nomx.route.hosts.empty());
    CHECK_FALSE(nomx.smtp.attempted);
    CHECK_FALSE(nomx.smtp.checked);
  }
}
