// The service's scheduler: checks the identity, makes the SMTP client and
// spawns the actor; reconfigures and stops it from other threads.
#include "actors/blocking_ask.hpp"
#include "actors/smtp/scheduler.hpp"
#include "log/log.hpp"
#include "net/dns_resolver.hpp"
#include "net/smtp_client.hpp"

#include <caf/all.hpp>

#include <utility>

namespace mailassay::actors::smtp {

using core::limits::millis;

core::expected<std::unique_ptr<scheduler>>
scheduler::create(caf::actor_system& sys, scheduler_config config,
                  std::shared_ptr<net::dns_resolver> resolver,
                  std::unique_ptr<core::smtp::catch_all_store> catch_all,
                  std::unique_ptr<core::smtp::host_slots> slots) {
  if (auto ok = core::smtp::check_identity(
          config.identity, config.force_identity, config.is_free_mail);
      !ok)
    return std::move(ok).error_value();
  auto policy = core::smtp::target_policy::parse(config.allow_private_targets);
  if (!policy)
    return std::move(policy).error_value();
  // The MX hosts of one provider share a budget: the resolver's table
  // names them (issue #30).
  if (resolver && !config.providers)
    config.providers = resolver->providers();
  net::smtp_client_config cc;
  cc.io_threads = config.io_threads;
  cc.policy = *policy;
  cc.verify_tls = config.verify_tls;
  cc.socks5_proxy = config.socks5_proxy;
  cc.source_address = config.source_address;
  cc.quit_timeout = config.quit_timeout;
  auto client = net::smtp_client::create(std::move(cc));
  if (!client)
    return std::move(client).error_value();
  scheduler_parts parts;
  parts.runner = net_session_runner(std::move(*client));
  parts.catch_all = std::move(catch_all);
  parts.slots = std::move(slots);
  if (resolver)
    parts.lookup = [resolver](std::string host,
                              std::function<void(core::dns::mail_route)> done) {
      resolver->resolve_host(std::move(host), std::move(done));
    };
  auto counters = std::make_shared<scheduler_counters>();
  auto runner = parts.runner;
  auto actor =
      spawn_scheduler(sys, std::move(config), std::move(parts), counters);
  return std::unique_ptr<scheduler>(
      new scheduler(sys, std::move(runner), std::move(counters), actor));
}

scheduler::scheduler(caf::actor_system& sys,
                     std::shared_ptr<session_runner> runner,
                     std::shared_ptr<scheduler_counters> counters,
                     scheduler_actor actor)
    : sys_(&sys), runner_(std::move(runner)), counters_(std::move(counters)),
      actor_(std::move(actor)) {}

scheduler::~scheduler() {
  stop();
}

std::map<std::string, host_counters> scheduler::hosts_in_use() const {
  return counters_->hosts(std::chrono::duration_cast<millis>(
      sys_->clock().now().time_since_epoch()));
}

bool scheduler::reconfigure(const scheduler_politeness& p) {
  bool ok = false;
  caf::scoped_actor self{*sys_};
  self->request(actor_, std::chrono::seconds(10), p)
      .receive([&](bool done) { ok = done; }, [](caf::error&) {});
  return ok;
}

void scheduler::forget_expired() {
  caf::anon_send(actor_, scheduler_forget_expired{});
}

void scheduler::stop() {
  {
    std::lock_guard guard{stopping_};
    if (stopped_)
      return;
    stopped_ = true;
  }
  blocking_ask(*sys_, actor_, std::chrono::seconds(10), log::level::debug,
               nullptr, scheduler_stop{});
  runner_->shutdown();
}

} // namespace mailassay::actors::smtp
