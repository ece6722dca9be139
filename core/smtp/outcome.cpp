#include "core/smtp/outcome.hpp"

namespace mailassay::core::smtp {

std::string_view to_string(answer_source s) {
  switch (s) {
    case answer_source::probe: return "probe";
    case answer_source::joined: return "joined";
    case answer_source::cache: return "cache";
  }
  return "probe";
}

bool definitive(rcpt_verdict v) {
  switch (v) {
    case rcpt_verdict::accepted:
    case rcpt_verdict::no_such_user:
    case rcpt_verdict::mailbox_full:
    case rcpt_verdict::disabled: return true;
    default: return false;
  }
}

} // namespace mailassay::core::smtp
