#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;

namespace {

constexpr const char* zone = R"(
good.test MX 10 mx.good.test
other.test MX 10 mx.other.test
gone.test NXDOMAIN
shop.test MX 10 mx1.prov.test
*.slow.test MX 10 mx.slow.test
*.slow.test DELAY 150
)";

std::string source_dir() {
  return std::getenv("MAILASSAY_SOURCE_DIR");
}

struct batch_env {
  std::unique_ptr<pg_schema> schema; // outlives the servers
  dns_peer dns;
  std::map<std::string, std::string> env;
  std::unique_ptr<server_process> srv;
  std::unique_ptr<api> a;
  std::string jwt;
  std::string key;

  explicit batch_env(std::map<std::string, std::string> extra = {}) {
    dns.load_zone(zone);
    env = {{"MAILASSAY_DNS_SERVERS", dns.server()},
           {"MAILASSAY_DNS_TIMEOUT_MS", "1000"},
           {"MAILASSAY_DNS_TRIES", "1"},
           {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
           {"MAILASSAY_BATCH_POLL_MS", "100"},
           {"MAILASSAY_RISK_DATA_DIR", source_dir() + "/data/risk"}};
    for (auto& [k, v] : extra)
      env[k] = v;
    schema = own_schema(env, "mailassay_bt");
    start();
    jwt = a->signup("B", unique_email("b"))["accessToken"].get<std::string>();
    key = a->create_key(jwt)["key"].get<std::string>();
  }

  void start() {
    a.reset();
    srv = std::make_unique<server_process>(env);
    a = std::make_unique<api>(api{*srv});
  }

  http_response upload(const std::string& csv, const std::string& query = "",
                       const std::string& type = "text/csv") {
    return a->call(
        "POST", "/v2/batch/upload" + query, "", csv,
        {{"Authorization", "Bearer " + key}, {"Content-Type", type}});
  }

  http_response
  upload_multipart(const std::string& csv,
                   const std::map<std::string, std::string>& fields = {},
                   const std::string& filename = "list.csv") {
    std::string b = "XyZbOuNdArY";
    std::string body;
    for (auto& [name, value] : fields)
      body += "--" + b + "\r\nContent-Disposition: form-data; name=\"" + name +
              "\"\r\n\r\n" + value + "\r\n";
    body += "--" + b +
            "\r\nContent-Disposition: form-data; name=\"file\"; "
            "filename=\"" +
            filename + "\"\r\nContent-Type: text/csv\r\n\r\n" + csv + "\r\n--" +
            b + "--\r\n";
    return upload(body, "", "multipart/form-data; boundary=" + b);
  }

  json get(const std::string& path, int expect = 200) {
    auto r = a->call("GET", path, key);
    REQUIRE_MESSAGE(r.status == expect, r.body);
    return json::parse(r.body);
  }

  // Polls until the job leaves the active states (or `limit` passes).
  json wait_done(const std::string& id,
                 std::chrono::seconds limit = std::chrono::seconds(60)) {
    auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
      auto j = get("/v2/batch/" + id);
      auto s = j["status"].get<std::string>();
      if (s != "queued" && s != "processing")
        return j;
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, j.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  std::vector<std::vector<std::string>> export_csv(const std::string& id,
                                                   const std::string& q = "") {
    auto r = a->call("GET", "/v2/batch/" + id + "/results?format=csv" + q, key);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    CHECK(r.header("content-type").rfind("text/csv", 0) == 0);
    CHECK(r.header("transfer-encoding") == "chunked");
    CHECK(r.header("content-length").empty());
    std::vector<std::vector<std::string>> rows;
    std::istringstream in{r.body};
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      std::vector<std::string> cells;
      std::string cell;
      std::istringstream ls{line};
      while (std::getline(ls, cell, ','))
        cells.push_back(cell);
      rows.push_back(cells);
    }
    return rows;
  }
};

// Resident and peak resident memory of a process in kB (/proc/PID/status).
std::pair<long, long> rss_kb(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  long rss = -1;
  long peak = -1;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0)
      rss = std::stol(line.substr(6));
    else if (line.rfind("VmHWM:", 0) == 0)
      peak = std::stol(line.substr(6));
  }
  return {rss, peak};
}

// The status codes of the responses in `raw`, in order.
std::vector<int> statuses_in(const std::string& raw) {
  std::vector<int> out;
  for (auto p = raw.find("HTTP/1.1 "); p != std::string::npos;
       p = raw.find("HTTP/1.1 ", p + 1))
    out.push_back(std::atoi(raw.c_str() + p + 9));
  return out;
}

// The body of the last response in `raw` (a Content-Length body).
std::string last_body(const std::string& raw) {
  auto head_end = raw.rfind("\r\n\r\n");
  return head_end == std::string::npos ? std::string{}
                                       : raw.substr(head_end + 4);
}

std::string numbered_csv(int n, const std::string& domain_fmt) {
  std::string csv = "email\n";
  for (int i = 0; i < n; ++i) {
    auto d = domain_fmt;
    auto p = d.find("{}");
    if (p != std::string::npos)
      d.replace(p, 2, std::to_string(i));
    csv += "user" + std::to_string(i) + "@" + d + "\n";
  }
  return csv;
}

} // namespace

TEST_SUITE("api.batch") {
  TEST_CASE("an upload is de-duplicated, processed and exported row by row") {
    batch_env env;
    std::string csv = "name,Email\n"
                      "Ann,ann@good.test\n"
                      "Ann again,ann@GOOD.test\n"
                      "Bob,bob@good.test\n"
                      "Nobody,not an address\n"
                      "Empty,\n"
                      "Gone,x@gone.test\n"
                      "Case,Ann@good.test\n";
    auto r = env.upload_multipart(csv, {{"deduplicate", "true"}});
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto j = json::parse(r.body);
    CHECK(j["status"] == "queued");
    CHECK(j["fileName"] == "list.csv");
    CHECK(j["emailColumn"] == "Email");
    CHECK(j["totalRows"] == 7);
    CHECK(j["duplicatesRemoved"] == 1); // the domain is case-insensitive
    CHECK(j["invalidRows"] == 2);
    CHECK(j["uniqueEmails"] == 4); // ann, bob, x@gone, Ann (local part exact)
    CHECK(j["smtp"] == false);
    CHECK(j["deduplicate"] == true);

    auto done = env.wait_done(j["id"]);
    CHECK(done["status"] == "completed");
    CHECK(done["processed"] == 6);
    CHECK(done["progress"] == 100.0);
    CHECK(done["counts"]["valid"] == 3);
    CHECK(done["counts"]["invalid"] == 3);
    CHECK(done["etaSeconds"] == 0);
    CHECK_FALSE(done["startedAt"].is_null());
    CHECK_FALSE(done["finishedAt"].is_null());

    auto rows = env.export_csv(j["id"]);
    REQUIRE(rows.size() == 7); // header + 6
    CHECK(rows[0][0] == "email");
    CHECK(rows[0][1] == "status");
    std::multiset<std::string> emails;
    for (std::size_t i = 1; i < rows.size(); ++i)
      emails.insert(rows[i][0]);
    CHECK(emails.count("ann@good.test") == 1);
    CHECK(emails.count("Ann@good.test") == 1);
    CHECK(emails.count("ann@GOOD.test") == 0);
    CHECK(emails.count("not an address") == 1);
    CHECK(rows[1][0] == "ann@good.test"); // file order
    CHECK(rows[1][1] == "valid");

    auto only_invalid = env.export_csv(j["id"], "&status=invalid");
    CHECK(only_invalid.size() == 4);

    auto js = env.get("/v2/batch/" + j["id"].get<std::string>() +
                      "/results?format=json&status=valid");
    REQUIRE(js["results"].size() == 3);
    CHECK(js["results"][0]["email"] == "ann@good.test");
    CHECK(js["results"][0]["status"] == "valid");
    CHECK(js["results"][0]["mx"] == true);

    auto list = env.get("/v2/batch");
    REQUIRE(list["items"].size() == 1);
    CHECK(list["items"][0]["id"] == j["id"]);
  }

  TEST_CASE("each row names its provider, in JSON and as a CSV column "
            "(issue #30)") {
    auto table = std::filesystem::temp_directory_path() /
                 ("mailassay-batch-providers-" + unique_email("t") + ".txt");
    std::ofstream(table) << "prov.test google mailbox\n";
    batch_env env{{{"MAILASSAY_RISK_PROVIDERS_FILE", table.string()}}};
    auto r = env.upload("email\nann@shop.test\nbob@good.test\nnot an "
                        "address\n");
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto id = json::parse(r.body)["id"].get<std::string>();
    env.wait_done(id);
    auto rows = env.export_csv(id);
    std::filesystem::remove(table);
    REQUIRE(rows.size() == 4);
    REQUIRE(rows[0].size() == 14);
    CHECK(rows[0][13] == "provider");
    std::map<std::string, std::string> provider;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      // The helper's split drops a last empty cell.
      REQUIRE(rows[i].size() >= 13);
      provider[rows[i][0]] = rows[i].size() > 13 ? rows[i][13] : "";
    }
    CHECK(provider["ann@shop.test"] == "google");
    CHECK(provider["bob@good.test"] == "");
    CHECK(provider["not an address"] == "");
    auto js = env.get("/v2/batch/" + id + "/results?format=json");
    REQUIRE(js["results"].size() == 3);
    for (auto& row : js["results"]) {
      CAPTURE(row.dump());
      REQUIRE(row.contains("provider"));
      if (row["email"] == "ann@shop.test")
        CHECK(row["provider"] == json{{"name", "google"}, {"kind", "mailbox"}});
      else
        CHECK(row["provider"].is_null());
    }
  }

  TEST_CASE("a raw text/csv body with options as query parameters") {
    batch_env env;
    auto r = env.upload("a@good.test\na@good.test\nb@other.test\n",
                        "?deduplicate=false");
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto j = json::parse(r.body);
    CHECK(j["uniqueEmails"] == 3);
    CHECK(j["duplicatesRemoved"] == 0);
    CHECK(j["emailColumn"].is_null()); // no header row
    auto done = env.wait_done(j["id"]);
    CHECK(done["counts"]["valid"] == 3);
  }

  TEST_CASE("a file name that is not UTF-8 is stored scrubbed, so every "
            "listing still renders") {
    batch_env env;
    // A multipart filename is raw bytes; cut at 255 bytes, never inside a
    // character.
    auto long_name = std::string(254, 'n') + "\xC3\xA9.csv";
    auto r = env.upload_multipart("email\na@good.test\n", {},
                                  "a\xFF"
                                  "b.csv");
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto j = json::parse(r.body);
    CHECK(j["fileName"] == "a\xEF\xBF\xBD"
                           "b.csv");
    auto done = env.wait_done(j["id"]);
    CHECK(done["fileName"] == "a\xEF\xBF\xBD"
                              "b.csv");
    auto list = env.get("/v2/batch");
    REQUIRE(list["items"].size() == 1);
    CHECK(list["items"][0]["fileName"] == "a\xEF\xBF\xBD"
                                          "b.csv");
    auto second = env.upload_multipart("email\nb@good.test\n", {}, long_name);
    REQUIRE_MESSAGE(second.status == 201, second.body);
    CHECK(json::parse(second.body)["fileName"] == std::string(254, 'n'));
    env.wait_done(json::parse(second.body)["id"]);
    CHECK(env.get("/v2/batch")["items"].size() == 2);
  }

  TEST_CASE("cells that look like formulas are escaped in the export") {
    batch_env env;
    auto r = env.upload(
        "email,note\nann@good.test,-1\n=HYPERLINK(\"x\"),a\n@SUM(1),b\n");
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto j = json::parse(r.body);
    env.wait_done(j["id"]);
    auto body =
        env.a
            ->call("GET",
                   "/v2/batch/" + j["id"].get<std::string>() + "/results",
                   env.key)
            .body;
    CHECK(body.find("\r\n=") == std::string::npos);
    CHECK(body.find("\r\n@") == std::string::npos);
    CHECK(body.find("'@SUM(1)") != std::string::npos);
  }

  TEST_CASE("broken files get a precise error and leave no job behind") {
    batch_env env;
    struct row {
      std::string name;
      std::string body;
      std::string query;
      int status;
      std::string says;
    };
    std::string big(11 * 1024 * 1024, 'a');
    std::string many = "email\n";
    for (int i = 0; i < 250000; ++i)
      many += "u" + std::to_string(i) + "@good.test\n";
    std::vector<row> rows{
        {"binary", std::string("\x89PNG\r\n\x1a\n\0\0\0", 11), "", 400,
         "binary"},
        {"empty", "", "", 400, "empty"},
        {"header only", "email\n", "", 400, "no data rows"},
        {"too large", big, "", 413, "larger"},
        {"unterminated quote", "email\n\"a@good.test\n", "", 400, "quote"},
        {"wrong column", "email,name\na@good.test,A\n", "?emailColumn=mail",
         400, "mail"},
        {"too many addresses", many, "", 422, "200000"},
        {"bad option", "a@good.test\n", "?deduplicate=maybe", 422,
         "deduplicate"},
    };
    for (auto& r : rows) {
      CAPTURE(r.name);
      auto res = env.upload(r.body, r.query);
      CHECK(res.status == r.status);
      CHECK_MESSAGE(res.body.find(r.says) != std::string::npos, res.body);
      auto body = json::parse(res.body);
      CHECK(body["statusCode"] == r.status);
    }
    auto json_body =
        env.a->call("POST", "/v2/batch/upload", env.key, "{\"emails\":[]}");
    CHECK(json_body.status == 400);
    CHECK(env.get("/v2/batch")["items"].empty());
  }

  TEST_CASE("one active job per organization; cancel frees the slot") {
    batch_env env{{{"MAILASSAY_BATCH_CONCURRENCY", "2"}}};
    auto first = env.upload(numbered_csv(200, "d{}.slow.test"));
    REQUIRE_MESSAGE(first.status == 201, first.body);
    auto id = json::parse(first.body)["id"].get<std::string>();
    auto second = env.upload("a@good.test\n");
    CHECK(second.status == 409);
    auto body = json::parse(second.body);
    CHECK(body["code"] == "ACTIVE_JOB_EXISTS");
    CHECK(body["message"].get<std::string>().find("already running") !=
          std::string::npos);

    // Another organization is not affected, and cannot see the job.
    auto other_jwt =
        env.a->signup("O", unique_email("o"))["accessToken"].get<std::string>();
    CHECK(env.a->call("GET", "/v2/batch/" + id, other_jwt).status == 404);
    CHECK(
        env.a->call("POST", "/v2/batch/" + id + "/cancel", other_jwt).status ==
        404);
    CHECK(
        env.a->call("GET", "/v2/batch/" + id + "/results", other_jwt).status ==
        404);

    auto cancel = env.a->call("POST", "/batch/" + id + "/cancel", env.key);
    REQUIRE_MESSAGE(cancel.status == 200, cancel.body);
    CHECK(json::parse(cancel.body)["status"] == "cancelled");
    CHECK(env.a->call("POST", "/v2/batch/" + id + "/cancel", env.key).status ==
          409);
    auto third = env.upload("a@good.test\n");
    CHECK_MESSAGE(third.status == 201, third.body);
    // The cancelled job stops: its processed count settles below the total.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    auto a = env.get("/v2/batch/" + id)["processed"].get<int>();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    auto b = env.get("/v2/batch/" + id)["processed"].get<int>();
    CHECK(a == b);
    CHECK(b < 200);
  }

  TEST_CASE("concurrent uploads of one organization create exactly one job") {
    batch_env env{{{"MAILASSAY_BATCH_CONCURRENCY", "1"}}};
    std::vector<int> statuses(6);
    std::vector<std::thread> threads;
    for (int i = 0; i < 6; ++i)
      threads.emplace_back([&, i] {
        statuses[i] = env.upload(numbered_csv(50, "d{}.slow.test")).status;
      });
    for (auto& t : threads)
      t.join();
    // The others are refused, 409 (the active job) or, before their body
    // is read, 429 (more than two uploads of the organization in progress,
    // issue #28): none makes a job.
    CHECK(std::count(statuses.begin(), statuses.end(), 201) == 1);
    CHECK(std::count(statuses.begin(), statuses.end(), 409) +
              std::count(statuses.begin(), statuses.end(), 429) ==
          5);
    CHECK(env.get("/v2/batch")["items"].size() == 1);
  }

  TEST_CASE("an SMTP batch reserves credits, refunds what it did not use, and "
            "402 when short") {
    batch_env env;
    auto smtp_key =
        env.a
            ->create_key(env.jwt, {{"name", "smtp"},
                                   {"config", {{"smtp", true}}}})["key"]
            .get<std::string>();
    // A key without config.smtp may not ask for it.
    auto refused = env.upload("a@good.test\n", "?smtp=true");
    CHECK(refused.status == 403);
    // 100 credits at signup: 150 addresses cannot be covered.
    auto short_r = env.a->call("POST", "/v2/batch/upload?smtp=true", "",
                               numbered_csv(150, "good.test"),
                               {{"Authorization", "Bearer " + smtp_key},
                                {"Content-Type", "text/csv"}});
    CHECK(short_r.status == 402);
    CHECK(json::parse(short_r.body)["code"] == "INSUFFICIENT_CREDITS");
    // The spec's message, as for POST /v2/email/validate.
    CHECK(json::parse(short_r.body)["message"] ==
          "Insufficient credits for SMTP validation");
    CHECK(env.get("/v2/batch")["items"].empty());
    auto r = env.a->call("POST", "/v2/batch/upload?smtp=true", "",
                         numbered_csv(40, "good.test"),
                         {{"Authorization", "Bearer " + smtp_key},
                          {"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto j = json::parse(r.body);
    CHECK(j["creditsReserved"] == 40);
    auto during = env.get("/v2/credits/balance");
    CHECK(during["balance"].get<int>() <= 100);
    auto done = env.wait_done(j["id"]);
    CHECK(done["status"] == "completed");
    auto used = done["creditsUsed"].get<int>();
    auto after = env.get("/v2/credits/balance");
    CHECK(after["balance"].get<int>() == 100 - used);
  }

  TEST_CASE("a job survives kill -9 and completes after a restart with every "
            "row exactly once") {
    auto dir = temp_dir("batch-crash");
    auto settings = durable_db(dir);
    settings.insert({{"MAILASSAY_BATCH_CONCURRENCY", "4"},
                     {"MAILASSAY_BATCH_CHECKPOINT_ROWS", "10"},
                     {"MAILASSAY_BATCH_LEASE_SECONDS", "3"},
                     {"MAILASSAY_DNS_TIMEOUT_MS", "60000"}});
    batch_env env{settings};
    // The first 100 rows are answered at once; the other 200 wait for DNS
    // until the test lets them go, so the process dies mid-job however fast
    // or busy the machine is.
    env.dns.load_zone("*.fast.test MX 10 mx.fast.test\n"
                      "*.held.test MX 10 mx.held.test\n"
                      "*.held.test DELAY 3600000\n");
    const int n = 300;
    auto held = numbered_csv(n - 100, "h{}.held.test");
    auto r = env.upload(numbered_csv(100, "d{}.fast.test") +
                        held.substr(held.find('\n') + 1));
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto id = json::parse(r.body)["id"].get<std::string>();
    // Checkpoints every 10 rows: the last one before the held rows.
    REQUIRE(eventually(
        [&] { return env.get("/v2/batch/" + id)["processed"] >= 90; },
        std::chrono::seconds(60), std::chrono::milliseconds(50)));
    auto before = env.get("/v2/batch/" + id);
    CHECK(before["status"] == "processing");
    CHECK(before["processed"].get<int>() <= 100);
    env.srv->kill_hard();
    env.dns.set_delay("*.held.test", std::chrono::milliseconds(0));
    env.start();
    auto done = env.wait_done(id, std::chrono::seconds(90));
    CHECK(done["status"] == "completed");
    CHECK(done["processed"] == n);
    auto& c = done["counts"];
    CHECK_MESSAGE(c["valid"].get<int>() + c["risky"].get<int>() +
                          c["invalid"].get<int>() + c["unknown"].get<int>() ==
                      n,
                  done.dump());
    CHECK(c["unknown"] == 0); // every DNS answer arrived
    auto rows = env.export_csv(id);
    REQUIRE(rows.size() == n + 1);
    std::set<std::string> emails;
    for (std::size_t i = 1; i < rows.size(); ++i)
      emails.insert(rows[i][0]);
    CHECK(emails.size() == static_cast<std::size_t>(n));
  }

  TEST_CASE("two processes share one database: when the one holding a job "
            "dies, the other finishes it") {
    auto dir = temp_dir("batch-takeover");
    auto settings = durable_db(dir);
    settings.insert({{"MAILASSAY_BATCH_CONCURRENCY", "2"},
                     {"MAILASSAY_BATCH_CHECKPOINT_ROWS", "5"},
                     {"MAILASSAY_BATCH_LEASE_SECONDS", "3"}});
    batch_env env{settings};
    const int n = 150;
    auto r = env.upload(numbered_csv(n, "t{}.slow.test"));
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto id = json::parse(r.body)["id"].get<std::string>();
    // Only the first process runs while the job is claimed, so it holds it.
    for (int i = 0; i < 400; ++i) {
      if (env.get("/v2/batch/" + id)["processed"].get<int>() > 10)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    auto second_env = env.env;
    second_env["MAILASSAY_LOG_LEVEL"] = "info";
    server_process second{second_env};
    api b{second};
    env.srv->kill_hard();
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    json done;
    for (;;) {
      auto res = b.call("GET", "/v2/batch/" + id, env.key);
      REQUIRE(res.status == 200);
      done = json::parse(res.body);
      if (done["status"] != "processing" && done["status"] != "queued")
        break;
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, done.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(done["status"] == "completed");
    CHECK(done["processed"] == n);
    auto res = b.call("GET", "/v2/batch/" + id + "/results", env.key);
    REQUIRE(res.status == 200);
    std::set<std::string> lines;
    std::istringstream in{res.body};
    int count = 0;
    for (std::string line; std::getline(in, line); ++count)
      lines.insert(line);
    CHECK(count == n + 1);
    CHECK(lines.size() == static_cast<std::size_t>(n + 1));
    CHECK(second.log().find("batch_claimed") != std::string::npos);
  }

  TEST_CASE("an upload over the file limit gets 413 while it arrives, "
            "whatever its framing") {
    batch_env env;
    auto auth = "Authorization: Bearer " + env.key + "\r\n";
    auto expect_413 = [](const std::string& raw) {
      REQUIRE_MESSAGE(statuses_in(raw) == std::vector<int>{413},
                      raw.substr(0, 400));
      CHECK(raw.find("Connection: close") != std::string::npos);
      CHECK(raw.find("X-Request-Id: ") != std::string::npos);
      auto body = json::parse(last_body(raw));
      CHECK(body["statusCode"] == 413);
      CHECK(body["code"] == "PAYLOAD_TOO_LARGE");
      CHECK(body["message"] ==
            "The file is larger than the limit of 10485760 bytes");
    };
    SUBCASE("Expect: 100-continue with a too large length: the body is "
            "never sent") {
      auto started = std::chrono::steady_clock::now();
      auto raw = raw_exchange(env.srv->port(),
                              "POST /v2/batch/upload HTTP/1.1\r\n"
                              "Host: x\r\n" +
                                  auth +
                                  "Content-Type: text/csv\r\n"
                                  "Content-Length: 11534336\r\n"
                                  "Expect: 100-continue\r\n\r\n",
                              5000);
      expect_413(raw);
      // Answered at once, not after a read timeout.
      CHECK(std::chrono::steady_clock::now() - started <
            std::chrono::seconds(3));
    }
    SUBCASE("a chunked body passing 10 MB") {
      std::string big(11 * 1024 * 1024, 'a');
      auto raw = raw_exchange(env.srv->port(),
                              "POST /v2/batch/upload HTTP/1.1\r\n"
                              "Host: x\r\n" +
                                  auth +
                                  "Content-Type: text/csv\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n" +
                                  chunked(big, 100000));
      expect_413(raw);
    }
    SUBCASE("a body over RESTinio's own 32 MB limit is answered, not "
            "dropped") {
      std::string huge(33 * 1024 * 1024, 'a');
      auto r = env.upload(huge);
      CHECK(r.status == 413);
      REQUIRE_FALSE(r.body.empty());
      CHECK(json::parse(r.body)["code"] == "PAYLOAD_TOO_LARGE");
      // Any other route too, with its own message.
      auto other = env.a->call("POST", "/v2/email/validate", env.key, huge);
      CHECK(other.status == 413);
      CHECK_MESSAGE(other.body.find("33554432") != std::string::npos,
                    other.body);
    }
    CHECK(env.get("/v2/batch")["items"].empty());
  }

  TEST_CASE("uploads on a keep-alive connection and pipelined after other "
            "requests are framed exactly") {
    batch_env env;
    std::vector<std::pair<std::string, std::string>> auth{
        {"Authorization", "Bearer " + env.key}};
    http_connection conn{env.srv->port()};
    CHECK(conn.request("GET", "/v2/batch", auth).status == 200);
    auto csv_auth = auth;
    csv_auth.emplace_back("Content-Type", "text/csv");
    auto up = conn.request("POST", "/v2/batch/upload", csv_auth,
                           "email\na@good.test\n");
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto id = json::parse(up.body)["id"].get<std::string>();
    env.wait_done(id);
    CHECK(conn.request("GET", "/v2/batch/" + id, auth).status == 200);

    // Three requests in one write: a chunked upload between two others,
    // its chunk lines split across reads by the chunk size.
    auto a = "Authorization: Bearer " + env.key + "\r\n";
    auto raw = raw_exchange(
        env.srv->port(),
        "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
        "POST /v2/batch/upload?deduplicate=false HTTP/1.1\r\nHost: x\r\n" +
            a + "Content-Type: text/csv\r\nTransfer-Encoding: chunked\r\n\r\n" +
            chunked(numbered_csv(2000, "good.test"), 777) +
            "GET /v2/batch HTTP/1.1\r\nHost: x\r\n" + a +
            "Connection: close\r\n\r\n");
    CHECK(statuses_in(raw) == std::vector<int>{200, 201, 200});
    auto list = json::parse(last_body(raw));
    REQUIRE(list["items"].size() == 2);
    CHECK(list["items"][0]["totalRows"] == 2000);
  }

  TEST_CASE("the export is streamed in chunks, as CSV or as one JSON "
            "document") {
    batch_env env;
    auto r = env.upload(numbered_csv(4500, "good.test") + "=1+2\n");
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto id = json::parse(r.body)["id"].get<std::string>();
    env.wait_done(id);
    auto csv = env.a->call("GET", "/v2/batch/" + id + "/results", env.key);
    REQUIRE(csv.status == 200);
    CHECK(csv.header("transfer-encoding") == "chunked");
    CHECK(csv.header("content-disposition") ==
          "attachment; filename=\"" + id + "-results.csv\"");
    CHECK(csv.body.rfind("email,status,reason,score,normalized,has_mx,"
                         "disposable,role_account,free_provider,random,"
                         "catch_all,smtp_checked,suggestion,provider\r\n",
                         0) == 0);
    // "user" is a role account.
    CHECK(csv.body.find("\r\nuser0@good.test,risky,role_account,") !=
          std::string::npos);
    CHECK(csv.body.find("\r\n'=1+2,invalid,") != std::string::npos);
    CHECK(std::count(csv.body.begin(), csv.body.end(), '\n') == 4502);

    auto js =
        env.a->call("GET", "/v2/batch/" + id + "/results?format=json", env.key);
    REQUIRE(js.status == 200);
    CHECK(js.header("transfer-encoding") == "chunked");
    CHECK(js.body.rfind("{\"jobId\":\"" + id +
                            "\",\"status\":\"completed\",\"results\":[{",
                        0) == 0);
    auto doc = json::parse(js.body); // one valid document across pages
    REQUIRE(doc["results"].size() == 4501);
    CHECK(doc["results"][0]["email"] == "user0@good.test");
    CHECK(doc["results"][4499]["email"] == "user4499@good.test");
    CHECK(doc["results"][4500]["status"] == "invalid");

    // A filter that matches nothing still gives a whole document.
    auto none =
        env.get("/v2/batch/" + id + "/results?format=json&status=unknown");
    CHECK(none["results"].empty());
    CHECK(env.export_csv(id, "&status=unknown").size() == 1);
  }

  TEST_CASE("a 200000-row file with 20% duplicates completes and exports one "
            "row per unique address plus the invalid rows") {
    auto dir = temp_dir("batch-200k");
    auto settings = durable_db(dir);
    settings.insert({{"MAILASSAY_BATCH_CONCURRENCY", "256"}});
    batch_env env{settings};
    env.dns.load_zone("*.w.test MX 10 mx.w.test\n");
    // 159000 addresses over 5000 domains, each repeated once for 40000 of
    // them (rows 160000..199999 repeat rows 0..39999), plus 1000 bad rows.
    std::string csv = "email\n";
    csv.reserve(5 * 1024 * 1024);
    for (int i = 0; i < 159000; ++i)
      csv += "u" + std::to_string(i) + "@d" + std::to_string(i % 5000) +
             ".w.test\n";
    for (int i = 0; i < 1000; ++i)
      csv += "bad row " + std::to_string(i) + "\n";
    for (int i = 0; i < 40000; ++i)
      csv += "u" + std::to_string(i) + "@D" + std::to_string(i % 5000) +
             ".W.test\n";
    REQUIRE(csv.size() < 10 * 1024 * 1024);
    auto r = env.upload(csv);
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto j = json::parse(r.body);
    CHECK(j["totalRows"] == 200000);
    CHECK(j["uniqueEmails"] == 159000);
    CHECK(j["duplicatesRemoved"] == 40000);
    CHECK(j["invalidRows"] == 1000);
    auto done = env.wait_done(j["id"], std::chrono::seconds(240));
    CHECK(done["status"] == "completed");
    CHECK(done["processed"] == 160000);
    auto& c = done["counts"];
    CHECK(c["valid"].get<int>() + c["risky"].get<int>() +
              c["unknown"].get<int>() + c["invalid"].get<int>() ==
          160000);
    CHECK(c["unknown"] == 0);
    // The export holds a page at a time: the peak memory of a fresh server
    // (one storage connection, so one SQLite page cache) grows by far less
    // than the 16 MB body while it runs.
    env.env["MAILASSAY_ACTORS_STORAGE_WORKERS"] = "1";
    env.start();
    {
      std::ofstream clear{"/proc/" + std::to_string(env.srv->pid()) +
                          "/clear_refs"};
      clear << "5"; // resets the peak (VmHWM) to the current RSS
    }
    auto before = rss_kb(env.srv->pid());
    auto res = env.a->call("GET",
                           "/v2/batch/" + j["id"].get<std::string>() +
                               "/results?format=csv",
                           env.key);
    REQUIRE(res.status == 200);
    CHECK(res.header("transfer-encoding") == "chunked");
    CHECK(res.body.size() > 16u * 1000 * 1000);
    auto after = rss_kb(env.srv->pid());
    MESSAGE("export of " << res.body.size() << " bytes: RSS " << before.first
                         << " kB before, peak " << after.second << " kB");
    CHECK(after.second - before.first < 10 * 1024);

    // A client that leaves in the middle: the server stops that export,
    // says so in its log, and goes on serving.
    auto part = raw_exchange(env.srv->port(),
                             "GET /v2/batch/" + j["id"].get<std::string>() +
                                 "/results HTTP/1.1\r\nHost: x\r\n"
                                 "Authorization: Bearer " +
                                 env.key + "\r\n\r\n",
                             10000, 1 << 20);
    CHECK(part.size() >= 1u << 20);
    for (int i = 0; i < 100; ++i) {
      if (env.srv->log().find("stream_aborted") != std::string::npos)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(env.srv->log().find("stream_aborted") != std::string::npos);
    auto metrics = http_request(env.srv->port(), "GET", "/metrics").body;
    CHECK(metrics.find("\nmailassay_http_streams_aborted_total 1\n") !=
          std::string::npos);
    CHECK(env.get("/v2/batch")["items"].size() == 1);
    std::size_t lines = 0;
    std::set<std::string> seen;
    std::istringstream in{res.body};
    for (std::string line; std::getline(in, line); ++lines)
      seen.insert(line.substr(0, line.find(',')));
    CHECK(lines == 160001);
    CHECK(seen.size() == 160001); // header + every row once
  }

  TEST_CASE("query strings are read parameter by parameter, unencoded legal "
            "characters included") {
    batch_env env;
    // `,` `;` `(` `)` are legal unencoded in a query: the whole query was
    // once dropped for them, and with it deduplicate=false.
    auto r = env.upload("email\nann@good.test\nann@good.test\n"
                        "info@good.test\nx@gone.test\n",
                        "?deduplicate=false&fileName=a,b;c(1).csv");
    REQUIRE_MESSAGE(r.status == 201, r.body);
    auto j = json::parse(r.body);
    CHECK(j["fileName"] == "a,b;c(1).csv");
    CHECK(j["uniqueEmails"] == 4);
    CHECK(j["duplicatesRemoved"] == 0);
    auto id = j["id"].get<std::string>();
    env.wait_done(id);
    auto all = env.get("/v2/batch/" + id + "/results?format=json");
    std::size_t wanted = 0;
    for (auto& row : all["results"])
      wanted += row["status"] == "valid" || row["status"] == "risky";
    REQUIRE(wanted < all["results"].size()); // x@gone.test is invalid
    // The form docs/api.md shows, unencoded.
    auto some = env.a->call(
        "GET", "/v2/batch/" + id + "/results?format=json&status=valid,risky",
        env.key);
    REQUIRE_MESSAGE(some.status == 200, some.body);
    CHECK(some.header("content-type") == "application/json");
    auto filtered = json::parse(some.body)["results"];
    CHECK(filtered.size() == wanted);
    for (auto& row : filtered)
      CHECK((row["status"] == "valid" || row["status"] == "risky"));
    auto refused = [&](const std::string& query, int status,
                       const std::string& says) {
      auto res =
          env.a->call("GET", "/v2/batch/" + id + "/results" + query, env.key);
      CAPTURE(query);
      CHECK(res.status == status);
      CHECK_MESSAGE(res.body.find(says) != std::string::npos, res.body);
    };
    refused("?format=json&status=bogus", 422,
            "status must be a comma-separated list");
    refused("?format=json&status=", 422,
            "status must be a comma-separated list");
    refused("?format=json&status=valid&status=risky", 422,
            "query parameter status must be given only once");
    refused("?format=json&x=a,b", 422, "query parameter x should not exist");
    refused("?format=xml", 422, "format must be csv or json");
    refused("?format=%zz", 400, "parameter 'format'");
    refused("?format=json&=x", 400, "a parameter has no name");
    // An option the upload does not read is refused, and makes no job.
    auto note = env.upload("a@good.test\n", "?deduplicate=false&note=a,b");
    CHECK(note.status == 422);
    CHECK(json::parse(note.body)["message"] ==
          json::array({"query parameter note should not exist"}));
    CHECK(env.get("/v2/batch")["items"].size() == 1);
  }

  TEST_CASE("multipart fields: one rule with JSON fields, unknown or repeated "
            "names are 422 and make no job") {
    batch_env env;
    auto expect = [&](const http_response& res, const std::string& message) {
      CHECK(res.status == 422);
      CHECK_MESSAGE(res.body.find(message) != std::string::npos, res.body);
    };
    expect(env.upload_multipart("email\na@good.test\n", {{"note", "x"}}),
           "multipart field note should not exist");
    // Two file parts: the second is not silently used (or dropped).
    std::string b = "XyZbOuNdArY";
    auto part = [&](const std::string& name, const std::string& body) {
      return "--" + b + "\r\nContent-Disposition: form-data; name=\"" + name +
             "\"; filename=\"f.csv\"\r\n\r\n" + body + "\r\n";
    };
    expect(env.upload(part("file", "email\na@good.test\n") +
                          part("file", "email\nb@good.test\n") + "--" + b +
                          "--\r\n",
                      "", "multipart/form-data; boundary=" + b),
           "multipart field file must be given only once");
    std::string field_twice =
        "--" + b +
        "\r\nContent-Disposition: form-data; name=\"smtp\"\r\n\r\nfalse\r\n" +
        "--" + b +
        "\r\nContent-Disposition: form-data; name=\"smtp\"\r\n\r\ntrue\r\n" +
        part("file", "email\na@good.test\n") + "--" + b + "--\r\n";
    expect(env.upload(field_twice, "", "multipart/form-data; boundary=" + b),
           "multipart field smtp must be given only once");
    auto both = env.a->call(
        "POST", "/v2/batch/upload?deduplicate=true", "",
        "--" + b +
            "\r\nContent-Disposition: form-data; name=\"deduplicate\"\r\n\r\n"
            "false\r\n" +
            part("file", "email\na@good.test\n") + "--" + b + "--\r\n",
        {{"Authorization", "Bearer " + env.key},
         {"Content-Type", "multipart/form-data; boundary=" + b}});
    expect(both, "deduplicate must be given either as a query parameter or "
                 "as a form field, not both");
    CHECK(env.get("/v2/batch")["items"].empty());
    // The known fields still work.
    auto ok = env.upload_multipart("email\na@good.test\na@good.test\n",
                                   {{"deduplicate", "false"}});
    REQUIRE_MESSAGE(ok.status == 201, ok.body);
    CHECK(json::parse(ok.body)["uniqueEmails"] == 2);
  }

  TEST_CASE("the 10 MB limit is the file's: a multipart file of exactly the "
            "limit is accepted, one byte more is 413") {
    batch_env env;
    constexpr std::size_t limit = 10485760;
    // One address, then rows without one (cheap to process), padded to
    // exactly the limit.
    std::string csv = "email,pad\na@good.test,x\n";
    std::string row = "," + std::string(98, 'p') + "\n";
    while (csv.size() + row.size() <= limit)
      csv += row;
    csv += "," + std::string(limit - csv.size() - 2, 'q') + "\n";
    REQUIRE(csv.size() == limit);
    auto over = env.upload_multipart(csv + "z");
    CHECK(over.status == 413);
    CHECK_MESSAGE(over.body.find("The file is larger than the limit of "
                                 "10485760 bytes") != std::string::npos,
                  over.body);
    auto exact = env.upload_multipart(csv);
    CHECK_MESSAGE(exact.status == 201, exact.body.substr(0, 300));
  }
}
