// The stored form of a batch item's flags (codec::batch_item_detail): its
// exact bytes, which every stored item and export of earlier versions holds,
// and that the export reads each flag back into its column.

#include "http/codec/batch_results.hpp"

#include <doctest/doctest.h>

#include <string>

namespace codec = mailassay::http::codec;
namespace cb = mailassay::core::batch;
using mailassay::core::provider::provider_kind;

namespace {

cb::item_flags every_flag() {
  cb::item_flags f;
  f.normalized = "anna@gmail.com";
  f.mx = true;
  f.disposable = false;
  f.role = false;
  f.free = true;
  f.random = false;
  f.catch_all = false;
  f.smtp_checked = true;
  f.suggestion = "anna@gmail.com";
  f.provider = {"google", provider_kind::mailbox};
  return f;
}

} // namespace

TEST_SUITE("http.codec.batch_results") {
  TEST_CASE("an item's flags are stored as compact JSON, keys in order") {
    CHECK(codec::batch_item_detail(cb::item_flags{}) ==
          R"({"catchAll":null,"disposable":null,"free":false,"mx":null,)"
          R"("normalized":null,"provider":null,"random":null,"role":null,)"
          R"("smtpChecked":false,"suggestion":null})");
    CHECK(codec::batch_item_detail(every_flag()) ==
          R"({"catchAll":false,"disposable":false,"free":true,"mx":true,)"
          R"("normalized":"anna@gmail.com","provider":{"kind":"mailbox",)"
          R"("name":"google"},"random":false,"role":false,)"
          R"("smtpChecked":true,"suggestion":"anna@gmail.com"})");
    cb::item_flags f;
    f.normalized = "j\xc3\xb6rg@b\xc3\xbc"
                   "cher.example";
    f.mx = false;
    f.disposable = true;
    f.role = true;
    f.random = true;
    f.catch_all = true;
    f.provider = {"proofpoint", provider_kind::gateway};
    CHECK(
        codec::batch_item_detail(f) ==
        R"({"catchAll":true,"disposable":true,"free":false,"mx":false,)"
        "\"normalized\":\"j\xc3\xb6rg@b\xc3\xbc"
        R"(cher.example","provider":{"kind":"gateway","name":"proofpoint"},)"
        R"("random":true,"role":true,"smtpChecked":false,"suggestion":null})");
  }

  TEST_CASE("the export reads every stored flag back into its column") {
    cb::item it;
    it.email = "Anna@gmail.com";
    it.done = true;
    it.status = mailassay::core::validation::status::valid;
    it.reason = "accepted_email";
    it.score = 95;
    it.detail = codec::batch_item_detail(every_flag());
    std::string csv;
    codec::append_csv_row(csv, it);
    CHECK(csv == "Anna@gmail.com,valid,accepted_email,95,anna@gmail.com,true,"
                 "false,false,true,false,false,true,anna@gmail.com,google\r\n");
    std::string json;
    codec::append_result(json, it, false, true);
    CHECK(json ==
          R"({"catchAll":false,"disposable":false,"email":"Anna@gmail.com",)"
          R"("free":true,"mx":true,"normalized":"anna@gmail.com",)"
          R"("provider":{"kind":"mailbox","name":"google"},"random":false,)"
          R"("reason":"accepted_email","role":false,"score":95,)"
          R"("smtpChecked":true,"status":"valid",)"
          R"("suggestion":"anna@gmail.com"})");
  }
}
