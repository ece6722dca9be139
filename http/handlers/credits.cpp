#include <charconv>

#include "http/handler_support.hpp"

namespace mailassay::http {

namespace uc = actors::accounts;

namespace {

// Parses an integer query parameter within [min, max]; adds a 422 message
// otherwise.
std::int64_t int_param(const request_view& req, const char* name,
                       std::int64_t fallback, std::int64_t min,
                       std::int64_t max, std::vector<std::string>& errors) {
  auto text = req.query_param(name);
  if (!text)
    return fallback;
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc{} || p != text->data() + text->size() || v < min
      || v > max) {
    errors.push_back(std::string{name} + " must be an integer between "
                     + std::to_string(min) + " and " + std::to_string(max));
    return fallback;
  }
  return v;
}

} // namespace

void handle_balance(call c) {
  with_principal(c, false, [c](uc::account_env& env, const uc::principal& p) {
    reply(c, uc::balance(env, p), 200, codec::balance);
  });
}

void handle_transactions(call c) {
  std::vector<std::string> errors;
  auto limit = int_param(c.req(), "limit", 50, 1, 500, errors);
  auto before = int_param(c.req(), "before", 0, 0, INT64_MAX, errors);
  with_principal(c, false, [c, limit, before, errors](uc::account_env& env,
                                                      const uc::principal& p) {
    if (!errors.empty()) {
      auto e = core::make_error(core::errc::validation_failed, "");
      e.details = errors;
      return c.ex->fail(e);
    }
    reply(c, uc::transactions(env, p, limit, before), 200, [&](auto& rows) {
      auto items = codec::json::array();
      for (auto& r : rows)
        items.push_back(codec::credit_entry(r));
      codec::json next = nullptr;
      if (static_cast<std::int64_t>(rows.size()) == limit && !rows.empty())
        next = rows.back().id;
      return codec::json{{"items", items}, {"nextBefore", next}};
    });
  });
}

} // namespace mailassay::http
