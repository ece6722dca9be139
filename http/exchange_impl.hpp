#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <restinio/all.hpp>

#include "http/exchange.hpp"

namespace mailassay::http {

/// RESTinio side of an exchange; only server.cpp and exchange.cpp see it.
struct exchange::impl {
  restinio::request_handle_t req;
  request_view view;
  std::string id;
  std::string route; ///< Route pattern, for metrics.
  std::chrono::steady_clock::time_point started;
  rate_headers rate;
  metrics* stats = nullptr;
  std::atomic<std::int64_t>* in_flight = nullptr;
  std::atomic<bool> done{false};
  std::unique_ptr<asio::steady_timer> deadline;
  std::optional<response> on_timeout;
  std::string cors_origin; ///< Echoed in Access-Control-Allow-Origin.
  std::function<void(int)> answered; ///< See exchange::on_answer.
};

} // namespace mailassay::http
