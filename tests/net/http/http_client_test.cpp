#include "net/http_client.hpp"
#include "tests/peers/http_peer.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

using namespace mailassay;
using namespace std::chrono_literals;
using net::http_failure;
using tests::peers::http_peer;
using tests::peers::http_peer_options;
using tests::peers::http_peer_reply;

namespace {

core::smtp::target_policy loopback_allowed() {
  std::vector<std::string> allow{"127.0.0.0/8"};
  return core::smtp::target_policy::parse(allow).value();
}

std::unique_ptr<net::http_client> make_client(net::http_client_config c = {}) {
  auto made = net::http_client::create(std::move(c));
  REQUIRE(made.has_value());
  return std::move(*made);
}

net::http_post post_to(const std::string& url, std::string body = "{}",
                       std::chrono::milliseconds timeout = 5000ms) {
  auto u = core::webhooks::parse_target_url(url);
  REQUIRE_MESSAGE(u, url);
  net::http_post p;
  p.url = *u;
  p.fields = {{"Content-Type", "application/json"},
              {"Mailassay-Event", "ping"}};
  p.body = std::move(body);
  p.timeout = timeout;
  return p;
}

net::http_result run(net::http_client& c, net::http_post p) {
  std::promise<net::http_result> done;
  auto f = done.get_future();
  c.post(std::move(p), [&done](net::http_result r) { done.set_value(r); });
  REQUIRE(f.wait_for(30s) == std::future_status::ready);
  return f.get();
}

// A resolver that answers every name with `addresses` (or `error`).
auto stub_resolver(std::vector<std::string> addresses, std::string error = {}) {
  return [addresses, error](std::string,
                            std::function<void(net::http_resolution)> done) {
    done(net::http_resolution{addresses, error});
  };
}

// A loopback port with nothing listening.
std::uint16_t closed_port() {
  http_peer p;
  return p.port();
}

} // namespace

TEST_SUITE("net.http_client") {
  TEST_CASE("posts the body with Host, the fields and Connection: close") {
    http_peer peer;
    net::http_client_config cfg;
    cfg.policy = loopback_allowed();
    auto client = make_client(cfg);
    auto r = run(*client, post_to(peer.url("/in?x=1"), R"({"a":1})"));
    CHECK(r.failure == http_failure::none);
    CHECK(r.status_code == 200);
    CHECK(r.address == "127.0.0.1");
    auto got = peer.requests();
    REQUIRE(got.size() == 1);
    CHECK(got[0].method == "POST");
    CHECK(got[0].target == "/in?x=1");
    CHECK(got[0].header("host") == "127.0.0.1:" + std::to_string(peer.port()));
    CHECK(got[0].header("content-type") == "application/json");
    CHECK(got[0].header("mailassay-event") == "ping");
    CHECK(got[0].header("content-length") == "7");
    CHECK(got[0].header("connection") == "close");
    CHECK(got[0].body == R"({"a":1})");
  }

  TEST_CASE("any status is an answer; the caller judges it") {
    http_peer peer;
    peer.script({{500}, {404}, {301}});
    net::http_client_config cfg;
    cfg.policy = loopback_allowed();
    auto client = make_client(cfg);
    for (int code : {500, 404, 301}) {
      auto r = run(*client, post_to(peer.url()));
      CHECK(r.failure == http_failure::none);
      CHECK(r.status_code == code);
    }
    CHECK(client->counters().answered == 3);
  }

  TEST_CASE("a refused address is never connected to") {
    http_peer peer;
    auto client = make_client(); // public addresses only
    auto r = run(*client, post_to(peer.url()));
    CHECK(r.failure == http_failure::blocked);
    CHECK(r.detail == "address policy: loopback address 127.0.0.1");
    CHECK(peer.connections() == 0);
    CHECK(client->counters().blocked == 1);
  }

  TEST_CASE("every address a name resolves to is checked before connecting") {
    http_peer peer;
    auto url = "http://hooks.test:" + std::to_string(peer.port()) + "/h";
    {
      net::http_client_config cfg;
      cfg.policy = loopback_allowed();
      cfg.resolve = stub_resolver({"127.0.0.1"});
      auto client = make_client(cfg);
      auto r = run(*client, post_to(url));
      CHECK(r.failure == http_failure::none);
      CHECK(r.status_code == 200);
      REQUIRE(peer.requests().size() == 1);
      CHECK(peer.requests()[0].header("host") ==
            "hooks.test:" + std::to_string(peer.port()));
    }
    {
      // One refused address among allowed ones refuses the name.
      net::http_client_config cfg;
      cfg.policy = loopback_allowed();
      cfg.resolve = stub_resolver({"127.0.0.1", "10.0.0.7"});
      auto client = make_client(cfg);
      auto r = run(*client, post_to(url));
      CHECK(r.failure == http_failure::blocked);
      CHECK(r.detail == "address policy: private address 10.0.0.7");
    }
    {
      net::http_client_config cfg;
      cfg.policy = loopback_allowed();
      cfg.resolve = stub_resolver({}, "NXDOMAIN");
      auto client = make_client(cfg);
      auto r = run(*client, post_to(url));
      CHECK(r.failure == http_failure::resolve);
      CHECK(r.detail == "NXDOMAIN");
    }
    {
      auto client = make_client(); // no resolver
      auto r = run(*client, post_to(url));
      CHECK(r.failure == http_failure::resolve);
    }
    CHECK(peer.requests().size() == 1);
  }

  TEST_CASE("connects to the next checked address when one refuses") {
    http_peer peer;
    net::http_client_config cfg;
    cfg.policy = loopback_allowed();
    // Nothing listens on that port of 127.0.0.2.
    cfg.resolve = stub_resolver({"127.0.0.2", "127.0.0.1"});
    auto client = make_client(cfg);
    auto r =
        run(*client,
            post_to("http://hooks.test:" + std::to_string(peer.port()) + "/"));
    CHECK(r.failure == http_failure::none);
    CHECK(r.address == "127.0.0.1");
  }

  TEST_CASE("TLS: the certificate and the host name are verified") {
    http_peer_options o;
    o.tls = true;
    o.tls_name = "hooks.test";
    http_peer peer{o};
    auto port = std::to_string(peer.port());
    net::http_client_config cfg;
    cfg.policy = loopback_allowed();
    cfg.ca_file = peer.ca_file();
    cfg.resolve = [](std::string host,
                     std::function<void(net::http_resolution)> done) {
      done({{"127.0.0.1"}, {}});
    };
    auto client = make_client(cfg);
    auto ok = run(*client, post_to("https://hooks.test:" + port + "/x"));
    CHECK(ok.failure == http_failure::none);
    CHECK(ok.status_code == 200);
    // The certificate also names 127.0.0.1.
    auto by_ip = run(*client, post_to("https://127.0.0.1:" + port + "/x"));
    CHECK(by_ip.failure == http_failure::none);
    auto wrong_name = run(*client, post_to("https://other.test:" + port + "/"));
    CHECK(wrong_name.failure == http_failure::tls);
    REQUIRE(peer.requests().size() == 2);
    CHECK(peer.requests()[0].body == "{}");

    // Without the certificate as a trust anchor: refused.
    net::http_client_config untrusting = cfg;
    untrusting.ca_file.clear();
    auto other = make_client(untrusting);
    auto r = run(*other, post_to("https://hooks.test:" + port + "/"));
    CHECK(r.failure == http_failure::tls);
    CHECK(peer.requests().size() == 2);
  }

  TEST_CASE("a bad CA file stops the start") {
    net::http_client_config cfg;
    cfg.ca_file = "/nonexistent/ca.pem";
    auto made = net::http_client::create(cfg);
    CHECK_FALSE(made.has_value());
  }

  TEST_CASE("plain http to a TLS port fails as a protocol error") {
    http_peer_options o;
    o.tls = true;
    http_peer peer{o};
    net::http_client_config cfg;
    cfg.policy = loopback_allowed();
    auto client = make_client(cfg);
    auto r =
        run(*client, post_to("http://127.0.0.1:" + std::to_string(peer.port()),
                             "{}", 2000ms));
    CHECK((r.failure == http_failure::protocol ||
           r.failure == http_failure::timeout));
  }

  TEST_CASE("the whole call is bounded by its time-out") {
    http_peer peer;
    peer.set_fallback({200, 20s});
    net::http_client_config cfg;
    cfg.policy = loopback_allowed();
    auto client = make_client(cfg);
    auto start = std::chrono::steady_clock::now();
    auto r = run(*client, post_to(peer.url(), "{}", 300ms));
    auto took = std::chrono::steady_clock::now() - start;
    CHECK(r.failure == http_failure::timeout);
    CHECK(took >= 250ms);
    CHECK(took < 10s);
    CHECK(peer.requests().size() == 1); // it arrived, the answer did not
  }

  TEST_CASE("a connection closed without an answer, or refused") {
    http_peer peer;
    http_peer_reply close;
    close.close = true;
    peer.script({close});
    net::http_client_config cfg;
    cfg.policy = loopback_allowed();
    auto client = make_client(cfg);
    auto r = run(*client, post_to(peer.url()));
    CHECK(r.failure == http_failure::protocol);
    auto refused =
        run(*client,
            post_to("http://127.0.0.1:" + std::to_string(closed_port()) + "/"));
    CHECK(refused.failure == http_failure::connect);
  }

  TEST_CASE("a field that would inject a header is refused before sending") {
    http_peer peer;
    net::http_client_config cfg;
    cfg.policy = loopback_allowed();
    auto client = make_client(cfg);
    auto p = post_to(peer.url());
    p.fields.push_back({"X-Evil", "a\r\nInjected: 1"});
    auto r = run(*client, std::move(p));
    CHECK(r.failure == http_failure::bad_request);
    CHECK(peer.connections() == 0);
  }

  TEST_CASE("shutdown ends calls in flight and refuses new ones") {
    http_peer peer;
    peer.set_fallback({200, 20s});
    net::http_client_config cfg;
    cfg.policy = loopback_allowed();
    auto client = make_client(cfg);
    std::promise<net::http_result> done;
    auto f = done.get_future();
    client->post(post_to(peer.url(), "{}", 30s),
                 [&done](net::http_result r) { done.set_value(r); });
    REQUIRE(peer.wait_for(1, 10s));
    client->shutdown();
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    CHECK(f.get().failure == http_failure::shutdown);
    auto after = run(*client, post_to(peer.url()));
    CHECK(after.failure == http_failure::shutdown);
  }
}
