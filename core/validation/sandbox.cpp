#include "core/validation/sandbox.hpp"

#include "core/base/ascii.hpp"

#include <array>
#include <optional>
#include <utility>

namespace mailassay::core::validation {

namespace {

constexpr std::array<std::pair<std::string_view, sandbox_case>, 8> words{{
    {"valid", sandbox_case::valid},
    {"invalid", sandbox_case::invalid},
    {"catchall", sandbox_case::catch_all},
    {"full", sandbox_case::full},
    {"disabled", sandbox_case::disabled},
    {"greylisted", sandbox_case::greylisted},
    {"timeout", sandbox_case::timeout},
    {"nomx", sandbox_case::no_mx},
}};

// The reply and mailbox facts of each case that a server "answers": the
// table of sandbox.hpp, one row per case.
struct answered_row {
  sandbox_case which;
  int code;
  std::string_view enhanced;
  std::string_view message;
  std::size_t attempts;
  std::optional<bool> deliverable;
  std::optional<bool> catch_all;
  bool full_inbox;
  bool disabled;
  bool greylisted;
};

constexpr std::array<answered_row, 6> answered{{
    {sandbox_case::valid, 250, "2.1.5", "2.1.5 Ok (sandbox)", 1, true, false,
     false, false, false},
    {sandbox_case::invalid, 550, "5.1.1",
     "5.1.1 Recipient address rejected: User unknown (sandbox)", 1, false,
     std::nullopt, false, false, false},
    {sandbox_case::catch_all, 250, "2.1.5",
     "2.1.5 Ok (sandbox: catch-all domain)", 1, true, true, false, false,
     false},
    {sandbox_case::full, 552, "5.2.2", "5.2.2 Mailbox full (sandbox)", 1, false,
     std::nullopt, true, false, false},
    {sandbox_case::disabled, 550, "5.2.1", "5.2.1 Mailbox disabled (sandbox)",
     1, false, std::nullopt, false, true, false},
    // A 450 4.7.1 on the first pass, accepted on the second.
    {sandbox_case::greylisted, 250, "2.1.5",
     "2.1.5 Ok (sandbox: after greylisting)", 2, true, false, false, false,
     true},
}};

// A route of one MX host: the simulated one.
dns::mail_route simulated_route() {
  dns::mail_route r;
  r.kind = dns::route_kind::mx;
  r.hosts.push_back({std::string{sandbox_mx_host}, 10});
  return r;
}

} // namespace

std::string_view to_string(sandbox_case c) {
  for (const auto& [word, which] : words)
    if (which == c)
      return word;
  return "valid";
}

sandbox_case sandbox_case_of(std::string_view local_part) {
  auto tag = local_part.find('+');
  if (tag != std::string_view::npos)
    local_part = local_part.substr(0, tag);
  for (const auto& [word, which] : words)
    if (ascii_iequals(local_part, word))
      return which;
  return sandbox_case::valid;
}

sandbox_answer sandbox_answer_of(sandbox_case c) {
  sandbox_answer a;
  if (c == sandbox_case::no_mx) {
    // No route: the SMTP stage never runs (as for a real domain).
    a.route.kind = dns::route_kind::no_mx;
    return a;
  }
  a.route = simulated_route();
  a.smtp.attempted = true;
  if (c == sandbox_case::timeout) {
    // The RCPT went out and no reply came within the time-out: nothing
    // answered for the address.
    a.smtp.timed_out = true;
    a.smtp.failure = smtp_failure::timeout;
    a.reply = {sandbox_mx_host, 1, 0, {}, {}};
    return a;
  }
  auto row = answered[0];
  for (const auto& r : answered)
    if (r.which == c)
      row = r;
  a.smtp.checked = true;
  a.smtp.deliverable = row.deliverable;
  a.smtp.catch_all = row.catch_all;
  a.smtp.full_inbox = row.full_inbox;
  a.smtp.disabled = row.disabled;
  a.smtp.greylisted = row.greylisted;
  a.reply = {sandbox_mx_host, row.attempts, row.code, row.enhanced,
             row.message};
  return a;
}

} // namespace mailassay::core::validation
