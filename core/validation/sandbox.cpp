#include "core/validation/sandbox.hpp"

#include <array>
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

bool same_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto c = a[i];
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i])
      return false;
  }
  return true;
}

// A probe whose last pass got `code` from the simulated MX host.
sandbox_answer answered(int code, std::string_view enhanced,
                        std::string_view message, std::size_t attempts = 1) {
  sandbox_answer a;
  a.route.kind = dns::route_kind::mx;
  a.route.hosts.push_back({std::string{sandbox_mx_host}, 10});
  a.smtp.attempted = true;
  a.smtp.checked = true;
  a.reply = {sandbox_mx_host, attempts, code, enhanced, message};
  return a;
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
    if (same_ignoring_case(local_part, word))
      return which;
  return sandbox_case::valid;
}

sandbox_answer sandbox_answer_of(sandbox_case c) {
  switch (c) {
    case sandbox_case::invalid: {
      auto a = answered(550, "5.1.1",
                        "5.1.1 Recipient address rejected: User unknown "
                        "(sandbox)");
      a.smtp.deliverable = false;
      return a;
    }
    case sandbox_case::catch_all: {
      auto a = answered(250, "2.1.5", "2.1.5 Ok (sandbox: catch-all domain)");
      a.smtp.deliverable = true;
      a.smtp.catch_all = true;
      return a;
    }
    case sandbox_case::full: {
      auto a = answered(552, "5.2.2", "5.2.2 Mailbox full (sandbox)");
      a.smtp.deliverable = false;
      a.smtp.full_inbox = true;
      return a;
    }
    case sandbox_case::disabled: {
      auto a = answered(550, "5.2.1", "5.2.1 Mailbox disabled (sandbox)");
      a.smtp.deliverable = false;
      a.smtp.disabled = true;
      return a;
    }
    case sandbox_case::greylisted: {
      // A 450 4.7.1 on the first pass, accepted on the second.
      auto a =
          answered(250, "2.1.5", "2.1.5 Ok (sandbox: after greylisting)", 2);
      a.smtp.deliverable = true;
      a.smtp.catch_all = false;
      a.smtp.greylisted = true;
      return a;
    }
    case sandbox_case::timeout: {
      // The RCPT went out and no reply came within the time-out: nothing
      // answered for the address.
      auto a = answered(0, {}, {});
      a.smtp.checked = false;
      a.smtp.timed_out = true;
      return a;
    }
    case sandbox_case::no_mx: {
      // No route: the SMTP stage never runs (as for a real domain).
      sandbox_answer a;
      a.route.kind = dns::route_kind::no_mx;
      return a;
    }
    case sandbox_case::valid: break;
  }
  auto a = answered(250, "2.1.5", "2.1.5 Ok (sandbox)");
  a.smtp.deliverable = true;
  a.smtp.catch_all = false;
  return a;
}

} // namespace mailassay::core::validation
