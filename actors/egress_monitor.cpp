#include "actors/egress_monitor.hpp"

#include "log/log.hpp"
#include "net/egress_audit.hpp"

#include <string>

namespace mailassay::actors {

egress_monitor::egress_monitor(std::shared_ptr<net::egress_audit> audit,
                               egress_monitor_options options)
    : audit_(std::move(audit)), options_(std::move(options)) {
  if (scheduled())
    thread_ = std::thread{[this] { run(); }};
}

egress_monitor::~egress_monitor() {
  stop();
}

bool egress_monitor::scheduled() const {
  return options_.at_start || options_.interval.count() > 0;
}

std::optional<egress_reading> egress_monitor::latest() const {
  std::lock_guard guard{mutex_};
  return latest_;
}

void egress_monitor::stop() {
  {
    std::lock_guard guard{mutex_};
    stopping_ = true;
  }
  wake_.notify_all();
  audit_->cancel();
  if (thread_.joinable())
    thread_.join();
}

void egress_monitor::run() {
  bool first = true;
  for (;;) {
    if (!first || options_.at_start) {
      auto report = audit_->run();
      {
        std::lock_guard guard{mutex_};
        if (stopping_)
          return; // a cancelled audit's report is partial: not published
        latest_ = egress_reading{report, options_.now ? options_.now() : 0};
      }
      for (const auto& c : report.checks)
        if (c.result == core::egress::status::fail)
          log::event(log::level::warn, "egress_check_failed",
                     {{"check", c.name},
                      {"detail", c.detail},
                      {"effect", "SMTP answers may be unknown"}});
      std::string failed;
      for (const auto& name : report.failed())
        failed += (failed.empty() ? "" : ",") + name;
      log::event(report.ok() ? log::level::info : log::level::warn,
                 "egress_audit",
                 {{"egress_address", report.egress_address},
                  {"failed", failed.empty() ? "none" : failed}});
    }
    first = false;
    std::unique_lock lock{mutex_};
    if (options_.interval.count() <= 0) {
      wake_.wait(lock, [this] { return stopping_; });
      return;
    }
    if (wake_.wait_for(lock, options_.interval, [this] { return stopping_; }))
      return;
  }
}

} // namespace mailassay::actors
