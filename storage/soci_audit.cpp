// The audit log (docs/privacy.md, "Audit log"): recording a change, folding
// failed logins into bursts, listing newest first.
#include "storage/soci_store.hpp"

#include <limits>

namespace mailassay::storage {

namespace {

using soci::into;
using soci::use;

acc::audit_actor actor_of(const std::string& text) {
  if (text == "api_key")
    return acc::audit_actor::api_key;
  if (text == "operator")
    return acc::audit_actor::operator_cli;
  return acc::audit_actor::user;
}

} // namespace

expected<unit> soci_store::record_audit(const acc::audit_entry& e) {
  return run<unit>(false, [&] {
    std::string actor{acc::to_string(e.actor_type)};
    if (e.action == acc::login_failed_action) {
      // One burst per account and address: a guessing run is one entry.
      transaction tx{*this};
      std::int64_t since = e.at - acc::login_failure_window;
      soci::statement fold =
          (sql_.prepare << "UPDATE audit_log SET occurrences = occurrences "
                           "+ 1, at = :at WHERE organization_id = :o AND "
                           "action = :a AND target = :t AND ip = :ip AND "
                           "at > :s",
           use(e.at), use(e.organization_id), use(e.action), use(e.target),
           use(e.ip), use(since));
      fold.execute(true);
      if (fold.get_affected_rows() == 0)
        sql_ << "INSERT INTO audit_log (organization_id, at, action, "
                "actor_type, actor_id, target, ip, details, occurrences) "
                "VALUES (:o, :at, :a, :ty, :id, :t, :ip, :d, 1)",
            use(e.organization_id), use(e.at), use(e.action), use(actor),
            use(e.actor_id), use(e.target), use(e.ip), use(e.details);
      tx.commit();
      return unit{};
    }
    sql_ << "INSERT INTO audit_log (organization_id, at, action, actor_type, "
            "actor_id, target, ip, details, occurrences) "
            "VALUES (:o, :at, :a, :ty, :id, :t, :ip, :d, :n)",
        use(e.organization_id), use(e.at), use(e.action), use(actor),
        use(e.actor_id), use(e.target), use(e.ip), use(e.details),
        use(e.occurrences);
    return unit{};
  });
}

expected<std::vector<acc::audit_entry>>
soci_store::list_audit(const std::string& organization_id, std::int64_t limit,
                       std::int64_t before_id,
                       const std::optional<std::string>& action) {
  return run<std::vector<acc::audit_entry>>(true, [&] {
    std::vector<acc::audit_entry> out;
    if (limit <= 0)
      return out;
    std::int64_t before =
        before_id > 0 ? before_id : std::numeric_limits<std::int64_t>::max();
    // "" matches every action: one statement for both questions.
    std::string only = action.value_or("");
    acc::audit_entry e;
    std::string actor;
    soci::statement st =
        (sql_.prepare << "SELECT id, organization_id, at, action, actor_type, "
                         "actor_id, target, ip, details, occurrences FROM "
                         "audit_log WHERE organization_id = :o AND id < :b "
                         "AND (:a = '' OR action = :a2) ORDER BY id DESC "
                         "LIMIT :l",
         use(organization_id), use(before), use(only), use(only), use(limit),
         into(e.id), into(e.organization_id), into(e.at), into(e.action),
         into(actor), into(e.actor_id), into(e.target), into(e.ip),
         into(e.details), into(e.occurrences));
    st.execute();
    while (st.fetch()) {
      e.actor_type = actor_of(actor);
      out.push_back(e);
    }
    return out;
  });
}

} // namespace mailassay::storage
