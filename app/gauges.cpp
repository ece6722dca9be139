// The /metrics gauges of each part `mailassay serve` wires together: each
// reads that part's counters when /metrics is asked.
#include "app/gauges.hpp"

#include "net/dns_resolver.hpp"

#include <string>
#include <string_view>

namespace mailassay::app {

namespace {

// A label value as Prometheus reads it: backslash, quote and newline escaped.
std::string label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

} // namespace

void add_pool_gauges(http::metrics& stats, const std::string& name, int size,
                     const actors::pool_gauges& gauges) {
  auto* g = &gauges;
  auto label = "{pool=\"" + name + "\"}";
  stats.add_gauge("mailassay_pool_workers" + label, "Workers in an actor pool.",
                  [size] { return static_cast<double>(size); });
  stats.add_gauge("mailassay_pool_queued" + label,
                  "Jobs waiting in an actor pool's mailboxes.",
                  [g] { return static_cast<double>(g->queued.load()); });
  stats.add_gauge("mailassay_pool_busy" + label,
                  "Jobs running in an actor pool.",
                  [g] { return static_cast<double>(g->busy.load()); });
  stats.add_gauge("mailassay_pool_done" + label,
                  "Jobs an actor pool finished since start.",
                  [g] { return static_cast<double>(g->done.load()); });
}

void add_limiter_gauges(http::metrics& stats, const actors::limiter_gauges& g) {
  auto* p = &g;
  auto gauge = [&stats](std::string name, std::string help, auto read) {
    stats.add_gauge(std::move(name), std::move(help),
                    [read] { return static_cast<double>(read().load()); });
  };
  auto table = [](const char* t) {
    return std::string{"mailassay_rate_limit_buckets{table=\""} + t + "\"}";
  };
  const char* help = "Rate-limit buckets held, per table.";
  gauge(
      table("ip"), help, [p]() -> auto& { return p->ip_buckets; });
  gauge(
      table("key"), help, [p]() -> auto& { return p->key_buckets; });
  gauge(
      table("widget_device"),
      help, [p]() -> auto& { return p->device_buckets; });
  gauge(
      table("widget_ip"),
      help, [p]() -> auto& { return p->widget_ip_buckets; });
  gauge(
      table("auth"), help, [p]() -> auto& { return p->auth_buckets; });
  const char* checks = "Rate-limit checks since start, by outcome.";
  gauge(
      "mailassay_rate_limit_checks{outcome=\"allowed\"}",
      checks, [p]() -> auto& { return p->allowed; });
  gauge(
      "mailassay_rate_limit_checks{outcome=\"refused\"}",
      checks, [p]() -> auto& { return p->refused; });
  gauge(
      "mailassay_rate_limit_evictions",
      "Buckets dropped because a table was full.", [p]() -> auto& {
        return p->evictions;
      });
  // Above zero: the tables are too small for the traffic, or a flood.
  gauge(
      "mailassay_rate_limit_active_evictions",
      "Buckets dropped while still in use because a table was full.",
      [p]() -> auto& { return p->active_evictions; });
}

void add_cluster_gauges(http::metrics& stats,
                        const actors::cluster_events& events) {
  auto* e = &events;
  stats.add_gauge("mailassay_cluster_listener_up",
                  "1 while this process LISTENs for other processes' "
                  "changes (PostgreSQL).",
                  [e] { return e->listener().listening.load() ? 1.0 : 0.0; });
  stats.add_gauge(
      "mailassay_cluster_listener_failures",
      "Times the LISTEN connection was lost or refused since start.",
      [e] { return static_cast<double>(e->listener().failures.load()); });
  stats.add_gauge(
      "mailassay_cluster_notifications",
      "Notifications of other processes' changes received since start.",
      [e] { return static_cast<double>(e->listener().notifications.load()); });
  stats.add_gauge(
      "mailassay_cluster_key_cache_flushes",
      "Whole key-cache flushes because LISTEN was (re)established.",
      [e] { return static_cast<double>(e->counters().flushes.load()); });
  stats.add_gauge(
      "mailassay_cluster_key_change_acks{way=\"sent\"}",
      "Acknowledgements of API-key changes this process applied (sent), and "
      "acknowledgements heard from every process (own ones included).",
      [e] { return static_cast<double>(e->counters().acks_sent.load()); });
  stats.add_gauge(
      "mailassay_cluster_key_change_acks{way=\"heard\"}",
      "Acknowledgements of API-key changes this process applied (sent), and "
      "acknowledgements heard from every process (own ones included).",
      [e] { return static_cast<double>(e->counters().acks_heard.load()); });
}

void add_redis_gauges(http::metrics& stats, const net::redis_client& redis,
                      const actors::shared_limiter& limits) {
  auto* r = &redis;
  auto* l = &limits;
  stats.add_gauge("mailassay_redis_up",
                  "1 while the connection to the shared Redis is ready.",
                  [r] { return r->up() ? 1.0 : 0.0; });
  stats.add_gauge(
      "mailassay_redis_failures",
      "Times the connection to Redis was lost or refused since start.",
      [r] { return static_cast<double>(r->counters().failures.load()); });
  stats.add_gauge(
      "mailassay_redis_timeouts",
      "Redis replies later than redis.timeout_ms since start (the "
      "connection is then dropped and made again).",
      [r] { return static_cast<double>(r->counters().timeouts.load()); });
  const char* help =
      "Rate-limit checks by who decided them: the shared Redis, or this "
      "process alone because Redis was unreachable (fall-back).";
  stats.add_gauge(
      "mailassay_rate_limit_shared_checks{decided_by=\"redis\"}", help,
      [l] { return static_cast<double>(l->counters().shared.load()); });
  stats.add_gauge(
      "mailassay_rate_limit_shared_checks{decided_by=\"local_fallback\"}", help,
      [l] { return static_cast<double>(l->counters().fallbacks.load()); });
}

void add_dns_gauges(http::metrics& stats,
                    std::shared_ptr<actors::validation::validator> v) {
  using counters = net::dns_resolver_counters;
  auto add = [&](const char* name, const char* help,
                 std::uint64_t counters::*field) {
    stats.add_gauge(name, help, [v, field] {
      return static_cast<double>(v->resolver().counters().*field);
    });
  };
  add("mailassay_dns_queries_sent", "DNS queries sent since start.",
      &counters::queries_sent);
  add("mailassay_dns_in_flight", "DNS queries in flight.",
      &counters::in_flight);
  add("mailassay_dns_queued", "DNS queries waiting for a slot.",
      &counters::queued);
  add("mailassay_dns_cache_hits", "Mail routes answered from the cache.",
      &counters::cache_hits);
  add("mailassay_dns_cache_misses", "Mail routes not in the cache.",
      &counters::cache_misses);
  add("mailassay_dns_cache_size", "Domains in the DNS cache.",
      &counters::cache_size);
}

void add_batch_gauges(http::metrics& stats, const actors::batch_gauges& g) {
  auto* gp = &g;
  stats.add_gauge(
      "mailassay_batch_running_jobs", "Batch jobs this process is working on.",
      [gp] { return static_cast<double>(gp->running_jobs.load()); });
  stats.add_gauge("mailassay_batch_in_flight", "Batch validations running.",
                  [gp] { return static_cast<double>(gp->in_flight.load()); });
  stats.add_gauge(
      "mailassay_batch_paced_waits",
      "Times batch jobs were held back while real-time validations arrived.",
      [gp] { return static_cast<double>(gp->paced_waits.load()); });
  stats.add_gauge("mailassay_batch_items_done",
                  "Batch results checkpointed since start.",
                  [gp] { return static_cast<double>(gp->items_done.load()); });
}

void add_retention_gauges(http::metrics& stats,
                          const actors::retention_gauges& g) {
  auto* gp = &g;
  stats.add_gauge(
      "mailassay_batch_results_erased",
      "Batch jobs whose results this process erased after their retention.",
      [gp] { return static_cast<double>(gp->jobs_erased.load()); });
  stats.add_gauge("mailassay_batch_retention_sweeps",
                  "Retention sweeps this process finished since start.",
                  [gp] { return static_cast<double>(gp->sweeps.load()); });
  stats.add_gauge("mailassay_batch_retention_failures",
                  "Retention sweeps that failed (the log says why).",
                  [gp] { return static_cast<double>(gp->failures.load()); });
}

// The SMTP scheduler's and the credit ledger's counters (docs/smtp.md,
// "Counters"; the dashboard's Operations page reads some); the per-host
// series appear as hosts are used.
void add_smtp_gauges(http::metrics& stats,
                     const actors::smtp::scheduler* scheduler,
                     const actors::credits::ledger_counters& ledger,
                     std::shared_ptr<const core::provider::table> providers) {
  auto* l = &ledger;
  auto counter = [&stats](std::string name, std::string help, auto* value) {
    stats.add_gauge(std::move(name), std::move(help),
                    [value] { return static_cast<double>(value->load()); });
  };
  const char* credits = "SMTP credits by what the ledger did with them.";
  counter("mailassay_smtp_credits{outcome=\"reserved\"}", credits,
          &l->reserved);
  counter("mailassay_smtp_credits{outcome=\"refused\"}", credits, &l->refused);
  counter("mailassay_smtp_credits{outcome=\"charged\"}", credits,
          &l->committed);
  counter("mailassay_smtp_credits{outcome=\"refunded\"}", credits,
          &l->refunded);
  counter("mailassay_smtp_credits{outcome=\"failed\"}", credits, &l->failed);
  if (!scheduler)
    return;
  const auto* c = &scheduler->counters();
  counter("mailassay_smtp_probes", "SMTP addresses asked since start.",
          &c->requests);
  counter("mailassay_smtp_probes_active",
          "SMTP addresses asked and not answered yet.", &c->in_flight);
  counter("mailassay_smtp_queued",
          "SMTP addresses waiting for a session or a greylisting retry.",
          &c->waiting);
  counter("mailassay_smtp_sessions", "SMTP sessions started since start.",
          &c->sessions);
  counter("mailassay_smtp_result_cache_hits",
          "SMTP answers served from the result cache.", &c->cache_hits);
  counter("mailassay_smtp_joined",
          "SMTP asks that joined a probe of the same address in flight.",
          &c->joined);
  counter("mailassay_smtp_catch_all_cache_hits",
          "Routes that found the domain's catch-all verdict stored.",
          &c->catch_all_hits);
  counter("mailassay_smtp_catch_all_probes", "Catch-all probe RCPTs asked.",
          &c->catch_all_probes);
  counter("mailassay_smtp_retries",
          "SMTP greylisting retries scheduled since start.",
          &c->greylist_rechecks);
  counter("mailassay_smtp_blocked_addresses",
          "MX addresses the outbound address policy refused.", &c->blocked);
  for (std::size_t i = 0; i < actors::smtp::answer_classes; ++i) {
    auto name = std::string{"mailassay_smtp_answers{class=\""} +
                std::string{actors::smtp::to_string(
                    static_cast<actors::smtp::answer_class>(i))} +
                "\"}";
    counter(std::move(name), "SMTP answers by class.", &c->answers[i]);
  }
  stats.add_histogram(
      "mailassay_smtp_rcpts_per_session",
      "RCPT commands each SMTP session sent (catch-all probes included).", [c] {
        http::metrics::histogram_reading r;
        std::uint64_t n = 0;
        for (std::size_t b = 0; b <= actors::smtp::rcpt_buckets.size(); ++b) {
          n += c->rcpts[b].load();
          r.buckets.emplace_back(
              b < actors::smtp::rcpt_buckets.size()
                  ? std::to_string(actors::smtp::rcpt_buckets[b])
                  : std::string{"+Inf"},
              n);
        }
        r.count = n;
        r.sum = static_cast<double>(c->rcpts_sent.load());
        return r;
      });
  // Only the hosts in use (smtp.host_metrics_idle_seconds,
  // smtp.host_metrics_max_hosts): a bounded label set.
  const auto* sched = scheduler;
  auto per_host = [sched](std::uint64_t actors::smtp::host_counters::*field) {
    return [sched, field] {
      std::vector<std::pair<std::string, double>> out;
      for (const auto& [host, h] : sched->hosts_in_use())
        out.emplace_back("host=\"" + label_value(host) + "\"",
                         static_cast<double>(h.*field));
      return out;
    };
  };
  stats.add_gauge_family("mailassay_smtp_host_sessions_open",
                         "SMTP sessions open per MX host.",
                         per_host(&actors::smtp::host_counters::open));
  stats.add_gauge_family("mailassay_smtp_host_connections_opened",
                         "SMTP connections opened per MX host since start.",
                         per_host(&actors::smtp::host_counters::opened));
  stats.add_gauge_family("mailassay_smtp_host_sessions_peak",
                         "Most SMTP sessions open at once per MX host.",
                         per_host(&actors::smtp::host_counters::peak));
  // Per provider (issue #30): every name of the table and "none", whatever
  // hosts come and go, so the series stay bounded.
  stats.add_gauge_family(
      "mailassay_smtp_provider_sessions_open",
      "SMTP sessions open per mail provider (its MX hosts share one budget; "
      "none: hosts of no known provider).",
      [sched, providers] {
        std::map<std::string, double> open;
        if (providers)
          for (const auto& name : providers->names())
            open[name] = 0;
        open["none"] = 0;
        for (const auto& [host, h] : sched->hosts_in_use()) {
          const auto* p = providers ? providers->find(host) : nullptr;
          open[p ? p->name : std::string{"none"}] +=
              static_cast<double>(h.open);
        }
        std::vector<std::pair<std::string, double>> out;
        for (const auto& [name, n] : open)
          out.emplace_back("provider=\"" + label_value(name) + "\"", n);
        return out;
      });
  // Answers per provider and class (issue #30): the table's names and
  // "none", fixed when the scheduler started, so the series stay bounded.
  stats.add_gauge_family(
      "mailassay_smtp_provider_answers",
      "SMTP answers per mail provider and class (none: hosts of no known "
      "provider).",
      [c] {
        std::vector<std::pair<std::string, double>> out;
        const auto& names = c->provider_names();
        for (std::size_t p = 0; p < names.size(); ++p)
          for (std::size_t i = 0; i < actors::smtp::answer_classes; ++i)
            out.emplace_back(
                "provider=\"" + label_value(names[p]) + "\",class=\"" +
                    std::string{actors::smtp::to_string(
                        static_cast<actors::smtp::answer_class>(i))} +
                    "\"",
                static_cast<double>(c->provider_answers(p)[i].load()));
        return out;
      });
  stats.add_gauge("mailassay_smtp_hosts_untracked",
                  "MX hosts left out of the per-host series because every "
                  "place was held by a host with a session open.",
                  [c] { return static_cast<double>(c->hosts_untracked()); });
}

// The egress audit's checks (1 ok, 0.5 warn, 0 fail; a skipped check has
// no series), once the first audit ended.
void add_egress_gauges(http::metrics& stats,
                       const actors::egress_monitor& monitor) {
  const auto* m = &monitor;
  stats.add_gauge_family(
      "mailassay_egress_check",
      "The egress self-audit's checks: 1 ok, 0.5 warn, 0 fail "
      "(docs/operations.md, \"Why is every answer unknown?\").",
      [m] {
        std::vector<std::pair<std::string, double>> out;
        if (auto reading = m->latest())
          for (const auto& c : reading->report.checks)
            if (auto v = core::egress::gauge_value(c.result))
              out.emplace_back("check=\"" + label_value(c.name) + "\"", *v);
        return out;
      });
}

void add_webhook_gauges(http::metrics& stats,
                        const actors::webhooks::dispatcher_gauges& g) {
  auto* gp = &g;
  stats.add_gauge("mailassay_webhook_in_flight",
                  "Webhook delivery attempts running.",
                  [gp] { return static_cast<double>(gp->in_flight.load()); });
  stats.add_gauge("mailassay_webhook_attempts",
                  "Webhook delivery attempts recorded since start.",
                  [gp] { return static_cast<double>(gp->attempts.load()); });
  stats.add_gauge("mailassay_webhook_delivered",
                  "Webhook deliveries answered with a 2xx since start.",
                  [gp] { return static_cast<double>(gp->delivered.load()); });
  stats.add_gauge("mailassay_webhook_given_up",
                  "Webhook deliveries given up after their retry window.",
                  [gp] { return static_cast<double>(gp->given_up.load()); });
}

} // namespace mailassay::app
