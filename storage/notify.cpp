#include "storage/notify.hpp"

namespace mailassay::storage {

namespace {

constexpr char letter_of(change_kind k) {
  switch (k) {
    case change_kind::api_key: return 'k';
    case change_kind::member: return 'm';
    case change_kind::batch_cancel: return 'b';
    case change_kind::signing_key: return 'j';
  }
  return '?';
}

} // namespace

std::string encode_change(const change& c) {
  std::string out;
  out.reserve(2 + c.id.size());
  out += letter_of(c.kind);
  out += ':';
  out += c.id;
  return out;
}

std::optional<change> decode_change(std::string_view payload) {
  if (payload.size() < 3 || payload[1] != ':')
    return std::nullopt;
  change c;
  switch (payload[0]) {
    case 'k': c.kind = change_kind::api_key; break;
    case 'm': c.kind = change_kind::member; break;
    case 'b': c.kind = change_kind::batch_cancel; break;
    case 'j': c.kind = change_kind::signing_key; break;
    default: return std::nullopt;
  }
  c.id = std::string{payload.substr(2)};
  return c;
}

std::string encode_ack(const change_ack& a) {
  return "a:" + a.node + ":" + a.payload;
}

std::optional<change_ack> decode_ack(std::string_view payload) {
  if (!payload.starts_with("a:"))
    return std::nullopt;
  payload.remove_prefix(2);
  auto colon = payload.find(':');
  if (colon == 0 || colon == std::string_view::npos)
    return std::nullopt;
  return change_ack{std::string{payload.substr(0, colon)},
                    std::string{payload.substr(colon + 1)}};
}

std::string listener_application_name(const database_url& u) {
  std::string name = "mailassay-listen";
  if (!u.schema.empty())
    name += ":" + u.schema;
  // PostgreSQL truncates longer names (NAMEDATALEN - 1): the count compares
  // the same truncation.
  return name.substr(0, 63);
}

std::string notify_channel(const database_url& u) {
  // Schema names are [a-z0-9_] (url.cpp), so the channel needs no quoting.
  return u.schema.empty() ? "mailassay_events" : "mailassay_events_" + u.schema;
}

} // namespace mailassay::storage
