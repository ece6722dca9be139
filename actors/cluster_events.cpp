#include "actors/cluster_events.hpp"

#include "log/log.hpp"

#include <algorithm>
#include <vector>

namespace mailassay::actors {

bool apply_change(std::string_view payload, const cluster_event_sinks& sinks,
                  cluster_event_counters& counters) {
  auto c = storage::decode_change(payload);
  if (!c) {
    counters.unknown.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  switch (c->kind) {
    case storage::change_kind::api_key:
      if (sinks.keys)
        sinks.keys->erase(c->id);
      counters.keys.fetch_add(1, std::memory_order_relaxed);
      break;
    case storage::change_kind::member:
      counters.members.fetch_add(1, std::memory_order_relaxed);
      break;
    case storage::change_kind::batch_cancel:
      if (sinks.cancel_job)
        sinks.cancel_job(c->id);
      counters.cancels.fetch_add(1, std::memory_order_relaxed);
      break;
    case storage::change_kind::signing_key:
      if (sinks.reload_signing_keys)
        sinks.reload_signing_keys();
      counters.signing_keys.fetch_add(1, std::memory_order_relaxed);
      break;
  }
  return true;
}

void apply_resubscribed(const cluster_event_sinks& sinks,
                        cluster_event_counters& counters) {
  if (sinks.keys)
    sinks.keys->clear();
  if (sinks.reload_signing_keys)
    sinks.reload_signing_keys();
  counters.flushes.fetch_add(1, std::memory_order_relaxed);
}

namespace {

// The listener, for the payload callback that acknowledges on it (the
// callback exists before the listener does).
struct listener_slot {
  std::mutex mtx;
  std::weak_ptr<net::pg_listener> listener;
  std::shared_ptr<net::pg_listener> get() {
    std::lock_guard guard{mtx};
    return listener.lock();
  }
};

} // namespace

cluster_events::cluster_events(asio::io_context& ioctx, std::string conninfo,
                               std::string channel, std::string node,
                               cluster_event_sinks sinks)
    : counters_(std::make_shared<cluster_event_counters>()), echo_(sinks.echo) {
  net::pg_listener_options opts;
  opts.conninfo = std::move(conninfo);
  opts.channel = std::move(channel);
  auto shared_sinks = std::make_shared<cluster_event_sinks>(std::move(sinks));
  auto counters = counters_;
  auto slot = std::make_shared<listener_slot>();
  listener_ = net::pg_listener::start(
      ioctx, std::move(opts),
      [shared_sinks, counters, slot,
       node = std::move(node)](std::string_view payload) {
        if (auto ack = storage::decode_ack(payload)) {
          counters->acks_heard.fetch_add(1, std::memory_order_relaxed);
          if (shared_sinks->echo)
            shared_sinks->echo->acked(ack->node, ack->payload);
          return;
        }
        apply_change(payload, *shared_sinks, *counters);
        // After the change is applied: the writer answers only once every
        // process is up to date (this one included).
        auto c = storage::decode_change(payload);
        if (c && c->kind == storage::change_kind::api_key)
          if (auto l = slot->get()) {
            l->notify(storage::encode_ack({node, std::string{payload}}));
            counters->acks_sent.fetch_add(1, std::memory_order_relaxed);
          }
        if (shared_sinks->echo)
          shared_sinks->echo->heard(payload);
      },
      [shared_sinks, counters](bool first) {
        // Changes sent before LISTEN was in place (or while it was down)
        // were never heard: forget everything they could concern.
        apply_resubscribed(*shared_sinks, *counters);
        if (shared_sinks->echo)
          shared_sinks->echo->set_listening(true);
        log::event(first ? log::level::info : log::level::warn,
                   first ? "cluster_listening" : "cluster_listening_again",
                   {{"flushed", "key_cache"}});
      },
      [shared_sinks](const std::string& why) {
        if (shared_sinks->echo)
          shared_sinks->echo->set_listening(false);
        log::event(log::level::warn, "cluster_listener_down", {{"error", why}});
      });
  std::lock_guard guard{slot->mtx};
  slot->listener = listener_;
}

cluster_events::~cluster_events() {
  stop();
}

void cluster_events::stop() {
  if (listener_)
    listener_->stop();
  if (echo_)
    echo_->set_listening(false);
}

} // namespace mailassay::actors
