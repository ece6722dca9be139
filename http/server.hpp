#pragma once

#include <memory>
#include <string>

namespace mailassay::http {

struct services;

/// The RESTinio front end: reads requests on its I/O threads, matches the
/// route table, and hands each request to its handler without blocking.
class server {
public:
  explicit server(services& svc);
  ~server();

  /// Binds and starts serving; returns an error text, or "" on success.
  std::string start();

  /// Answers new requests with 503, waits up to `grace_ms` for requests in
  /// flight, then stops the I/O threads.
  void drain_and_stop(int grace_ms);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace mailassay::http
