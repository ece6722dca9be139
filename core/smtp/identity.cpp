#include "core/smtp/identity.hpp"

#include "core/base/ascii.hpp"
#include "core/smtp/session.hpp"

#include <algorithm>
#include <array>

namespace mailassay::core::smtp {

namespace {

bool ldh_label(std::string_view label) {
  if (label.empty() || label.size() > 63 || label.front() == '-' ||
      label.back() == '-')
    return false;
  return std::all_of(label.begin(), label.end(),
                     [](char c) { return is_ascii_alnum(c) || c == '-'; });
}

bool ends_with_label(std::string_view name, std::string_view suffix) {
  return name == suffix ||
         (name.size() > suffix.size() && name.ends_with(suffix) &&
          name[name.size() - suffix.size() - 1] == '.');
}

bool wire_safe(std::string_view s) {
  return !s.empty() && safe_argument(s) &&
         std::none_of(s.begin(), s.end(), [](char c) {
           return c == ' ' || static_cast<unsigned char>(c) >= 0x80;
         });
}

error invalid(std::string message) {
  return make_error(errc::validation_failed, std::move(message));
}

} // namespace

bool is_fqdn(std::string_view name) {
  if (name.empty() || name.size() > 253)
    return false;
  std::size_t labels = 0;
  std::string_view last;
  while (true) {
    auto dot = name.find('.');
    auto label = name.substr(0, dot);
    if (!ldh_label(label))
      return false;
    ++labels;
    last = label;
    if (dot == std::string_view::npos)
      break;
    name.remove_prefix(dot + 1);
  }
  bool numeric = std::all_of(last.begin(), last.end(), is_ascii_digit);
  return labels >= 2 && !numeric;
}

bool is_local_name(std::string_view name) {
  auto n = ascii_lower(name);
  while (!n.empty() && n.back() == '.')
    n.pop_back();
  // RFC 6761 special-use names, RFC 8375 home.arpa, RFC 7686 onion, and
  // suffixes routers and corporate networks use without owning them.
  static constexpr std::array<std::string_view, 17> suffixes = {
      "localhost",   "localdomain", "local", "lan",         "home",
      "internal",    "intranet",    "corp",  "home.arpa",   "test",
      "example",     "invalid",     "onion", "example.com", "example.net",
      "example.org", "localnet"};
  return std::any_of(suffixes.begin(), suffixes.end(),
                     [&](std::string_view s) { return ends_with_label(n, s); });
}

std::string choose_helo(std::string_view configured,
                        std::string_view hostname) {
  if (!configured.empty())
    return std::string{configured};
  if (is_fqdn(hostname) && !is_local_name(hostname))
    return ascii_lower(hostname);
  return {};
}

expected<unit> check_identity(const identity& id, bool force,
                              const free_mail_predicate& is_free_mail) {
  if (!wire_safe(id.helo))
    return invalid("smtp.helo: empty, or holds spaces, control or non-ASCII "
                   "characters; set MAILASSAY_SMTP_HELO to this host's FQDN");
  if (!id.mail_from.empty() && !wire_safe(id.mail_from))
    return invalid("smtp.mail_from: holds spaces, control or non-ASCII "
                   "characters");
  if (force)
    return unit{};
  if (!is_fqdn(id.helo) || is_local_name(id.helo))
    return invalid("smtp.helo: \"" + id.helo +
                   "\" is not a public FQDN; receiving servers refuse or "
                   "blocklist such names (set MAILASSAY_SMTP_FORCE_IDENTITY="
                   "true to use it anyway)");
  if (id.mail_from.empty())
    return unit{};
  auto at = id.mail_from.rfind('@');
  if (at == std::string::npos || at == 0)
    return invalid("smtp.mail_from: expected local@domain or empty (the null "
                   "sender), got \"" +
                   id.mail_from + "\"");
  auto domain = ascii_lower(std::string_view{id.mail_from}.substr(at + 1));
  if (!is_fqdn(domain) || is_local_name(domain))
    return invalid("smtp.mail_from: \"" + domain +
                   "\" is not a public domain (set "
                   "MAILASSAY_SMTP_FORCE_IDENTITY=true to use it anyway)");
  if (is_free_mail && is_free_mail(domain))
    return invalid(
        "smtp.mail_from: \"" + domain +
        "\" is a free-mail provider; its SPF/DMARC do not cover "
        "this host, so probes would be refused as forged (use a "
        "domain you control, or MAILASSAY_SMTP_FORCE_IDENTITY=true)");
  return unit{};
}

} // namespace mailassay::core::smtp
