#include "actors/credits/ledger.hpp"

#include "actors/storage_pool.hpp"
#include "log/log.hpp"

#include <caf/all.hpp>

#include <unordered_map>
#include <utility>
#include <variant>

namespace mailassay::actors::credits {

namespace {

/// A write in flight and whom to answer.
using pending = std::variant<caf::typed_response_promise<reserve_outcome>,
                             caf::typed_response_promise<bool>>;

struct ledger_state {
  std::shared_ptr<ledger_store> store;
  std::shared_ptr<ledger_counters> counters;
  std::unordered_map<std::uint64_t, std::pair<reservation, pending>> writes;
  std::uint64_t next_id = 0;
  static inline const char* name = "credit_ledger";
};

using self_ptr = ledger_actor::stateful_pointer<ledger_state>;

// The store answers on its own thread: back into the actor, in order.
ledger_store::callback back_to(self_ptr self, std::uint64_t id) {
  auto me = caf::actor_cast<ledger_actor>(self);
  return [me, id](core::expected<core::unit> r) {
    caf::anon_send(me, ledger_write_done{id, r ? std::optional<core::error>{}
                                               : r.error_value()});
  };
}

void on_reserved(self_ptr self, reservation& r,
                 caf::typed_response_promise<reserve_outcome>& rp,
                 const std::optional<core::error>& failure) {
  auto& c = *self->state.counters;
  reserve_outcome out;
  out.held = r;
  if (!failure) {
    out.held.held = true;
    ++c.reserved;
  } else if (failure->code == core::errc::insufficient_credits) {
    ++c.refused;
    // The spec's message for 402.
    out.refused = core::make_error(core::errc::insufficient_credits,
                                   "Insufficient credits for SMTP validation");
  } else {
    ++c.failed;
    out.refused = *failure;
  }
  rp.deliver(std::move(out));
}

void on_refunded(self_ptr self, const reservation& r,
                 caf::typed_response_promise<bool>& rp,
                 const std::optional<core::error>& failure) {
  auto& c = *self->state.counters;
  if (!failure) {
    ++c.refunded;
  } else {
    ++c.failed;
    log::event(
        log::level::error, "smtp_refund_failed",
        {{"organization_id", r.organization_id}, {"error", failure->message}});
  }
  rp.deliver(!failure);
}

ledger_actor::behavior_type
ledger_fn(self_ptr self, std::shared_ptr<ledger_store> store,
          std::shared_ptr<ledger_counters> counters) {
  self->state.store = std::move(store);
  self->state.counters = std::move(counters);
  return {
      [self](reserve_credit& req) {
        auto& st = self->state;
        auto rp = self->make_response_promise<reserve_outcome>();
        auto id = ++st.next_id;
        reservation r{std::move(req.organization_id), std::move(req.reference),
                      false};
        st.store->take(r, back_to(self, id));
        st.writes.emplace(id, std::make_pair(std::move(r), pending{rp}));
        return rp;
      },
      [self](commit_credit&) { ++self->state.counters->committed; },
      [self](refund_credit& req) {
        auto& st = self->state;
        auto rp = self->make_response_promise<bool>();
        if (!req.held.held) {
          rp.deliver(true);
          return rp;
        }
        auto id = ++st.next_id;
        st.store->give_back(req.held, back_to(self, id));
        st.writes.emplace(id, std::make_pair(std::move(req.held), pending{rp}));
        return rp;
      },
      [self](ledger_write_done& done) {
        auto& st = self->state;
        auto it = st.writes.find(done.id);
        if (it == st.writes.end())
          return;
        auto [r, rp] = std::move(it->second);
        st.writes.erase(it);
        if (auto* reserve =
                std::get_if<caf::typed_response_promise<reserve_outcome>>(&rp))
          on_reserved(self, r, *reserve, done.failure);
        else
          on_refunded(self, r, std::get<caf::typed_response_promise<bool>>(rp),
                      done.failure);
      },
  };
}

/// Writes through the storage workers.
class storage_store final : public ledger_store {
public:
  storage_store(storage_pool& pool, std::function<std::int64_t()> now)
      : pool_(pool), now_(std::move(now)) {}

  void take(const reservation& r, callback done) override {
    pool_.submit({[r, done = std::move(done), now = now_](job_context& ctx) {
      if (!ctx.db)
        return done(ctx.open_error);
      auto b = ctx.db->take_credits(r.organization_id, 1, "smtp_check",
                                    r.reference, true, now());
      if (!b)
        return done(b.error_value());
      done(core::unit{});
    }});
  }

  void give_back(const reservation& r, callback done) override {
    pool_.submit({[r, done = std::move(done), now = now_](job_context& ctx) {
      if (!ctx.db)
        return done(ctx.open_error);
      auto b = ctx.db->refund_credits(r.organization_id, 1, "smtp_refund",
                                      r.reference, now());
      if (!b)
        return done(b.error_value());
      done(core::unit{});
    }});
  }

private:
  storage_pool& pool_;
  std::function<std::int64_t()> now_;
};

} // namespace

std::shared_ptr<ledger_store>
storage_ledger_store(storage_pool& pool, std::function<std::int64_t()> now) {
  return std::make_shared<storage_store>(pool, std::move(now));
}

ledger_actor spawn_ledger(caf::actor_system& sys,
                          std::shared_ptr<ledger_store> store,
                          std::shared_ptr<ledger_counters> counters) {
  return sys.spawn(ledger_fn, std::move(store), std::move(counters));
}

} // namespace mailassay::actors::credits
