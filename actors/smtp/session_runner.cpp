#include "actors/smtp/session_runner.hpp"

#include "net/smtp_client.hpp"

#include <caf/all.hpp>

#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace mailassay::actors::smtp {

namespace {

/// Sessions on net::smtp_client; maps the scheduler's ids to the client's.
class net_runner final : public session_runner {
public:
  explicit net_runner(std::shared_ptr<net::smtp_client> client)
      : client_(std::move(client)) {}

  void open(session_spec spec, scheduler_actor events) override {
    core::smtp::session_request req;
    req.open_ended = true;
    auto id = spec.id;
    auto session = core::smtp::session::make(std::move(spec.config), req);
    if (!session) {
      // The identity was checked at start-up; this cannot happen.
      core::smtp::session_report r;
      r.transport = core::smtp::connect_failure::other;
      r.detail = session.error_value().message;
      caf::anon_send(events, session_ended{id, std::move(r)});
      return;
    }
    net::smtp_call call{std::move(spec.dial), std::move(*session)};
    // Only the answers not sent yet: a session of 20 addresses would
    // otherwise copy its whole history at each of them. Calls of one
    // session come one at a time (its strand).
    call.on_need_more = [events, id, sent = std::size_t{0}](
                            const core::smtp::session_result& r) mutable {
      core::smtp::session_result part;
      part.host = r.host;
      part.failure = r.failure;
      part.tls = r.tls;
      part.catch_all = r.catch_all;
      part.rcpt_sent = r.rcpt_sent;
      part.addresses.assign(r.addresses.begin() +
                                static_cast<std::ptrdiff_t>(sent),
                            r.addresses.end());
      caf::anon_send(events, session_idle{id, std::move(part), sent});
      sent = r.addresses.size();
    };
    // The client's id is known only once `run` returns, and the call may
    // end before that (at once when the client is shut down): an end that
    // finds no mapping leaves a mark, so none is added after it.
    auto call_id = client_->run(
        std::move(call), [this, events, id](net::smtp_call_result r) {
          forget(id);
          caf::anon_send(events, session_ended{id, std::move(r.report)});
        });
    std::lock_guard guard{mutex_};
    if (!ended_.erase(id))
      calls_[id] = call_id;
  }

  void give(std::uint64_t id, std::string address, std::string probe) override {
    if (auto call = find(id))
      client_->give(*call, std::move(address), std::move(probe));
  }

  void finish(std::uint64_t id) override {
    if (auto call = find(id))
      client_->finish(*call);
  }

  void shutdown() override { client_->shutdown(); }

private:
  std::optional<net::smtp_client::call_id> find(std::uint64_t id) {
    std::lock_guard guard{mutex_};
    auto it = calls_.find(id);
    if (it == calls_.end())
      return std::nullopt;
    return it->second;
  }

  void forget(std::uint64_t id) {
    std::lock_guard guard{mutex_};
    if (!calls_.erase(id))
      ended_.insert(id);
  }

  std::mutex mutex_;
  std::unordered_map<std::uint64_t, net::smtp_client::call_id> calls_;
  /// Sessions that ended before their mapping was added.
  std::unordered_set<std::uint64_t> ended_;
  /// Last: destroyed first, its calls' callbacks still find the maps.
  std::shared_ptr<net::smtp_client> client_;
};

} // namespace

std::shared_ptr<session_runner>
net_session_runner(std::shared_ptr<net::smtp_client> client) {
  return std::make_shared<net_runner>(std::move(client));
}

} // namespace mailassay::actors::smtp
