// GET /v2/audit-log (docs/api.md, "Audit log"): owners and admins read who
// changed what in their organization.
#include "http/codec/audit.hpp"

#include "http/handler_support.hpp"
#include "use_cases/accounts/audit.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;

void handle_audit_log(call c) {
  c.ex->add_header("Cache-Control", "no-store");
  with_principal(
      c, true,
      [c, q = codec::audit_log_query(c.req())](uc::account_env& env,
                                               const uc::principal& who) {
        // A bad query is answered only after the credentials.
        if (!q)
          return c.ex->fail(q.error_value());
        reply(c, uc::audit_log(env, who, q->limit, q->before, q->action), 200,
              [&](const auto& rows) {
                return codec::audit_page(rows, q->limit);
              });
      });
}

} // namespace mailassay::http
