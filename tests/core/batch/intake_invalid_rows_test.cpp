// Issue #19: a file whose rows are all invalid is read into a job (its
// items say why each row failed); only a column without a single '@' is
// refused. De-duplication folds the domain's case and what the provider's
// rules allow in the local part (docs/batch-csv.md).

#include "core/batch/intake.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

using namespace mailassay::core;
using namespace mailassay::core::batch;

TEST_SUITE("core.batch.intake.accuracy") {
  TEST_CASE("a file of invalid addresses is a job of invalid items") {
    struct row {
      std::string_view file;
      std::int64_t rows;
    };
    constexpr row rows[] = {
        {"email\nkim@@acme.io\nlena.acme.io\n", 2},
        {"kim@\nlena@\n", 2},
        {"name,email\nKim,kim@\nLena,\n", 2},
        {"email\n@example.org\nops@qa--team.com\nx@gmail.c\n", 3},
    };
    for (const auto& r : rows) {
      CAPTURE(r.file);
      auto read = read_csv(r.file, intake_options{});
      REQUIRE(read);
      CHECK(read->unique_emails == 0);
      CHECK(read->invalid_rows == r.rows);
      CHECK(read->total_rows == r.rows);
      REQUIRE(read->items.size() == static_cast<std::size_t>(r.rows));
      for (const auto& it : read->items) {
        CHECK(it.done);
        CHECK(it.status == mailassay::core::validation::status::invalid);
        CHECK(it.reason == "invalid_syntax");
      }
    }
  }

  TEST_CASE("a column without an @ is refused, and the message says why") {
    auto wrong =
        read_csv("id,name\n1,Kim Berg\n2,Lena Ruiz\n3,\n", intake_options{});
    REQUIRE_FALSE(wrong);
    CHECK(wrong.error_value().code == errc::bad_request);
    CHECK(wrong.error_value().message ==
          "column 'id' holds nothing that looks like an email address (no "
          "cell has an @; 3 data rows read): choose the column of addresses "
          "with emailColumn");
    intake_options named;
    named.email_column = "Name";
    auto by_name = read_csv("id,name,mail\n1,Kim Berg,kim@acme.io\n", named);
    REQUIRE_FALSE(by_name);
    CHECK(by_name.error_value().message ==
          "column 'name' holds nothing that looks like an email address (no "
          "cell has an @; 1 data rows read): choose the column of addresses "
          "with emailColumn");
  }

  TEST_CASE("duplicates are one mailbox by the provider's rules") {
    struct row {
      std::string_view file;
      std::vector<std::string> kept;
      std::int64_t removed;
    };
    const row rows[] = {
        {"d@gmail.com\nD@GMAIL.COM\nd.@gmail.com\n", {"d@gmail.com"}, 1},
        {"j.doe@gmail.com\njdoe+x@googlemail.com\nJDoe@Gmail.com\n",
         {"j.doe@gmail.com"},
         2},
        {"ana@outlook.com\nAna+promo@Outlook.com\n", {"ana@outlook.com"}, 1},
        {"ana@yahoo.com\nANA@YAHOO.COM\nana-x@yahoo.com\n",
         {"ana@yahoo.com", "ana-x@yahoo.com"},
         1},
        // Unknown providers keep the local part as written (RFC 5321 §2.4).
        {"Kim@acme.io\nkim@ACME.IO\nkim@acme.io\nkim+a@acme.io\n",
         {"Kim@acme.io", "kim@ACME.IO", "kim+a@acme.io"},
         1},
        {"jurgen@bücher.de\njurgen@xn--bcher-kva.de\n",
         {"jurgen@bücher.de"},
         1},
    };
    for (const auto& r : rows) {
      CAPTURE(r.file);
      auto read = read_csv(r.file, intake_options{});
      REQUIRE(read);
      std::vector<std::string> kept;
      for (const auto& it : read->items)
        if (!it.done)
          kept.push_back(it.email);
      CHECK(kept == r.kept);
      CHECK(read->duplicates_removed == r.removed);
    }
  }
}
