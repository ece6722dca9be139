#include "net/dns_wire.hpp"

#include <ares.h>

#include <algorithm>
#include <arpa/inet.h>

namespace mailassay::net::dns_wire {

namespace {

using core::dns::lookup_result;
using core::dns::rcode;
using core::dns::record_type;

constexpr int type_a = 1;             // RFC 1035 §3.2.2
constexpr int type_soa = 6;           // RFC 1035 §3.2.2
constexpr int type_ptr = 12;          // RFC 1035 §3.2.2
constexpr int type_mx = 15;           // RFC 1035 §3.2.2
constexpr int type_txt = 16;          // RFC 1035 §3.2.2
constexpr int type_aaaa = 28;         // RFC 3596 §2.1
constexpr int header_bytes = 12;      // RFC 1035 §4.1.1
constexpr int question_fixed = 4;     // QTYPE, QCLASS
constexpr int record_fixed = 10;      // TYPE, CLASS, TTL, RDLENGTH
constexpr int soa_numbers_bytes = 20; // SERIAL ... MINIMUM
constexpr int max_addresses = 256;
constexpr std::size_t max_texts = 64;
constexpr std::size_t max_text_bytes = 4096;

lookup_result failed(rcode code) {
  lookup_result r;
  r.code = code;
  return r;
}

std::uint32_t get32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
         (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
}

std::uint16_t get16(const unsigned char* p) {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}

// Moves `p` past a (possibly compressed) name; c-ares checks the bounds.
bool skip_name(const unsigned char*& p, const unsigned char* abuf, int alen) {
  char* name = nullptr;
  long len = 0;
  if (ares_expand_name(p, abuf, alen, &name, &len) != ARES_SUCCESS)
    return false;
  ares_free_string(name);
  p += len;
  return true;
}

void lower(std::optional<std::uint32_t>& acc, std::uint32_t ttl) {
  acc = acc ? std::min(*acc, ttl) : ttl;
}

lookup_result read_mx(const unsigned char* abuf, int alen) {
  ares_mx_reply* head = nullptr;
  auto status = ares_parse_mx_reply(abuf, alen, &head);
  if (status != ARES_SUCCESS)
    return failed(rcode_of(status));
  lookup_result r;
  for (auto* mx = head; mx != nullptr; mx = mx->next)
    r.mx.push_back({mx->host != nullptr ? mx->host : "", mx->priority});
  ares_free_data(head);
  r.code = r.mx.empty() ? rcode::nodata : rcode::ok;
  return r;
}

lookup_result read_addresses(record_type type, const unsigned char* abuf,
                             int alen) {
  lookup_result r;
  int count = max_addresses;
  char text[INET6_ADDRSTRLEN];
  if (type == record_type::a) {
    ares_addrttl addrs[max_addresses];
    auto status = ares_parse_a_reply(abuf, alen, nullptr, addrs, &count);
    if (status != ARES_SUCCESS)
      return failed(rcode_of(status));
    for (int i = 0; i < count; ++i)
      if (inet_ntop(AF_INET, &addrs[i].ipaddr, text, sizeof text) != nullptr)
        r.addresses.emplace_back(text);
    r.has_a = !r.addresses.empty();
  } else {
    ares_addr6ttl addrs[max_addresses];
    auto status = ares_parse_aaaa_reply(abuf, alen, nullptr, addrs, &count);
    if (status != ARES_SUCCESS)
      return failed(rcode_of(status));
    for (int i = 0; i < count; ++i)
      if (inet_ntop(AF_INET6, &addrs[i].ip6addr, text, sizeof text) != nullptr)
        r.addresses.emplace_back(text);
    r.has_aaaa = !r.addresses.empty();
  }
  r.code = r.addresses.empty() ? rcode::nodata : rcode::ok;
  return r;
}

// Calls `each(rdata, rdlen)` for every answer record of `type` (CNAME
// links before them are passed over); false on a malformed message.
template <class F>
bool for_each_answer(const unsigned char* abuf, int alen, int type, F each) {
  if (abuf == nullptr || alen < header_bytes)
    return false;
  const unsigned char* end = abuf + alen;
  const unsigned char* p = abuf + header_bytes;
  auto qd = get16(abuf + 4);
  auto an = get16(abuf + 6);
  for (unsigned i = 0; i < qd; ++i) {
    if (!skip_name(p, abuf, alen) || end - p < question_fixed)
      return false;
    p += question_fixed;
  }
  for (unsigned i = 0; i < an; ++i) {
    if (!skip_name(p, abuf, alen) || end - p < record_fixed)
      return false;
    auto rtype = get16(p);
    auto rdlen = get16(p + 8);
    p += record_fixed;
    if (end - p < rdlen)
      return false;
    if (rtype == type)
      each(p, static_cast<int>(rdlen));
    p += rdlen;
  }
  return true;
}

// PTR (RFC 1035 §3.3.12) names or TXT (§3.3.14) texts, at most max_texts.
lookup_result read_texts(record_type type, const unsigned char* abuf,
                         int alen) {
  lookup_result r;
  bool ok = for_each_answer(
      abuf, alen, type == record_type::ptr ? type_ptr : type_txt,
      [&](const unsigned char* rd, int rdlen) {
        if (r.texts.size() >= max_texts)
          return;
        if (type == record_type::ptr) {
          char* name = nullptr;
          long len = 0;
          if (ares_expand_name(rd, abuf, alen, &name, &len) != ARES_SUCCESS)
            return;
          r.texts.push_back(core::dns::normalize_name(name));
          ares_free_string(name);
          return;
        }
        // <character-string>s: a length octet, then that many octets.
        std::string text;
        for (int i = 0; i < rdlen;) {
          auto n = rd[i];
          if (i + 1 + n > rdlen)
            break;
          text.append(reinterpret_cast<const char*>(rd + i + 1), n);
          i += 1 + n;
        }
        if (text.size() > max_text_bytes)
          text.resize(max_text_bytes);
        r.texts.push_back(std::move(text));
      });
  if (!ok)
    return failed(rcode::other_error);
  r.code = r.texts.empty() ? rcode::nodata : rcode::ok;
  return r;
}

} // namespace

int type_code(record_type type) {
  switch (type) {
    case record_type::mx: return type_mx;
    case record_type::a: return type_a;
    case record_type::aaaa: return type_aaaa;
    case record_type::ptr: return type_ptr;
    case record_type::txt: return type_txt;
  }
  return type_mx;
}

rcode rcode_of(int ares_status) {
  switch (ares_status) {
    case ARES_SUCCESS: return rcode::ok;
    case ARES_ENODATA: return rcode::nodata;
    case ARES_ENOTFOUND: return rcode::nxdomain;
    case ARES_ESERVFAIL: return rcode::servfail;
    case ARES_ETIMEOUT:
    case ARES_ECANCELLED:
    case ARES_EDESTRUCTION: return rcode::timeout;
    case ARES_EREFUSED: return rcode::refused;
    default: return rcode::other_error;
  }
}

ttls read_ttls(const unsigned char* abuf, int alen) {
  ttls out;
  if (abuf == nullptr || alen < header_bytes)
    return out;
  const unsigned char* end = abuf + alen;
  const unsigned char* p = abuf + header_bytes;
  auto qd = get16(abuf + 4);
  auto an = get16(abuf + 6);
  auto ns = get16(abuf + 8);
  for (unsigned i = 0; i < qd; ++i) {
    if (!skip_name(p, abuf, alen) || end - p < question_fixed)
      return out;
    p += question_fixed;
  }
  for (unsigned i = 0; i < unsigned{an} + ns; ++i) {
    if (!skip_name(p, abuf, alen) || end - p < record_fixed)
      return out;
    auto type = get16(p);
    auto ttl = get32(p + 4);
    auto rdlen = get16(p + 8);
    p += record_fixed;
    if (end - p < rdlen)
      return out;
    if (i < an) {
      lower(out.answer, ttl);
    } else if (type == type_soa) {
      const unsigned char* rd = p; // MNAME, RNAME, then the five numbers
      if (skip_name(rd, abuf, alen) && skip_name(rd, abuf, alen) &&
          rd + soa_numbers_bytes <= p + rdlen)
        lower(out.negative, std::min(ttl, get32(rd + 16)));
    }
    p += rdlen;
  }
  return out;
}

lookup_result read_answer(int ares_status, record_type type,
                          const unsigned char* abuf, int alen) {
  auto found = read_ttls(abuf, alen);
  lookup_result r;
  if (ares_status != ARES_SUCCESS)
    r = failed(rcode_of(ares_status));
  else if (type == record_type::mx)
    r = read_mx(abuf, alen);
  else if (type == record_type::ptr || type == record_type::txt)
    r = read_texts(type, abuf, alen);
  else
    r = read_addresses(type, abuf, alen);
  if (r.code == rcode::ok)
    r.ttl = found.answer;
  else if (r.code == rcode::nxdomain || r.code == rcode::nodata)
    r.ttl = found.negative;
  return r;
}

} // namespace mailassay::net::dns_wire
