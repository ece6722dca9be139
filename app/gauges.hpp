#pragma once

// The /metrics gauges of the parts `mailassay serve` wires together, one
// function per part (app/serve.cpp calls them once, at start).

#include "actors/batch/retention_sweeper.hpp"
#include "actors/batch/runner.hpp"
#include "actors/cluster_events.hpp"
#include "actors/credits/ledger.hpp"
#include "actors/egress_monitor.hpp"
#include "actors/rate_limiter.hpp"
#include "actors/shared_limiter.hpp"
#include "actors/smtp/scheduler.hpp"
#include "actors/storage_pool.hpp"
#include "actors/validation/validator.hpp"
#include "actors/webhooks/dispatcher.hpp"
#include "http/metrics.hpp"
#include "net/redis_client.hpp"

#include <memory>
#include <string>

namespace mailassay::app {

/// A worker pool's workers, queue, busy workers and jobs done, labelled
/// `pool=name`.
void add_pool_gauges(http::metrics& stats, const std::string& name, int size,
                     const actors::pool_gauges& gauges);

/// The rate limiter's buckets, checks and evictions.
void add_limiter_gauges(http::metrics& stats, const actors::limiter_gauges& g);

/// The cluster listener (PostgreSQL LISTEN/NOTIFY): up, failures,
/// notifications, key-cache flushes and acknowledgements.
void add_cluster_gauges(http::metrics& stats,
                        const actors::cluster_events& events);

/// Redis: up, failures and time-outs, and who decided the shared limits.
void add_redis_gauges(http::metrics& stats, const net::redis_client& redis,
                      const actors::shared_limiter& limits);

/// The resolver's queries sent, queued and in flight, and its cache.
void add_dns_gauges(http::metrics& stats,
                    std::shared_ptr<actors::validation::validator> v);

/// Batch jobs running in this process, items in flight and done, paced
/// waits.
void add_batch_gauges(http::metrics& stats, const actors::batch_gauges& g);

/// The retention sweeps, their failures and the results they erased.
void add_retention_gauges(http::metrics& stats,
                          const actors::retention_gauges& g);

/// The SMTP scheduler's and the credit ledger's counters (docs/smtp.md,
/// "Counters"); the per-host series appear as hosts are used. `scheduler`
/// may be null (SMTP probing off).
void add_smtp_gauges(http::metrics& stats,
                     const actors::smtp::scheduler* scheduler,
                     const actors::credits::ledger_counters& ledger,
                     std::shared_ptr<const core::provider::table> providers);

/// The egress audit's checks (1 ok, 0.5 warn, 0 fail), once the first
/// audit ended.
void add_egress_gauges(http::metrics& stats,
                       const actors::egress_monitor& monitor);

/// Webhook deliveries in flight, attempted, delivered and given up.
void add_webhook_gauges(http::metrics& stats,
                        const actors::webhooks::dispatcher_gauges& g);

} // namespace mailassay::app
