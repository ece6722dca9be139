#include "http/codec/credits.hpp"

#include "http/codec/reader.hpp"
#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = use_cases::accounts;

void handle_balance(call c) {
  with_principal(c, false, [c](uc::account_env& env, const uc::principal& p) {
    reply(c, uc::balance(env, p), 200, codec::balance);
  });
}

void handle_transactions(call c) {
  auto limit = codec::integer_param(c.req(), "limit", 50, 1, 500);
  auto before = codec::integer_param(c.req(), "before", 0, 0, INT64_MAX);
  // One message per bad parameter, both at once.
  std::vector<std::string> errors;
  for (auto* p : {&limit, &before})
    if (!*p)
      errors.push_back(p->error_value().details.front());
  with_principal(
      c, false,
      [c, limit, before, errors](uc::account_env& env, const uc::principal& p) {
        if (!errors.empty()) {
          auto e = core::make_error(core::errc::validation_failed, "");
          e.details = errors;
          return c.ex->fail(e);
        }
        reply(c, uc::transactions(env, p, *limit, *before), 200,
              [&](auto& rows) { return codec::transactions(rows, *limit); });
      });
}

} // namespace mailassay::http
