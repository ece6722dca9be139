// API keys.
#include "storage/soci_rows.hpp"
#include "storage/soci_store.hpp"
#include "storage/string_list.hpp"

#include <stdexcept>

namespace mailassay::storage {

namespace {

using core::errc;
using soci::into;
using soci::use;

constexpr const char* key_columns =
    "SELECT id, organization_id, name, key_hash, prefix, allowed_domains, "
    "smtp, disposable, role_account, enrichment, random_detection, "
    "per_minute, per_hour, per_day, status, created_at, updated_at "
    "FROM api_keys ";

// An API key as its columns: flags as 0/1, nullable limits with indicators.
struct key_row {
  acc::api_key k;
  std::string domains;
  int smtp = 0, disposable = 0, role_account = 0, enrichment = 0,
      random_detection = 0;
  std::int64_t per_minute = 0, per_hour = 0, per_day = 0;
  soci::indicator per_minute_ind = soci::i_null, per_hour_ind = soci::i_null,
                  per_day_ind = soci::i_null;
  std::string status;

  key_row() = default;

  explicit key_row(const acc::api_key& key)
      : k(key), domains(encode_string_list(key.allowed_domains)),
        smtp(key.config.smtp), disposable(key.config.disposable),
        role_account(key.config.role_account),
        enrichment(key.config.enrichment),
        random_detection(key.config.random_detection),
        status(acc::to_string(key.status)) {
    set(key.limits.per_minute, per_minute, per_minute_ind);
    set(key.limits.per_hour, per_hour, per_hour_ind);
    set(key.limits.per_day, per_day, per_day_ind);
  }

  static void set(const std::optional<std::int64_t>& in, std::int64_t& value,
                  soci::indicator& ind) {
    value = in.value_or(0);
    ind = in ? soci::i_ok : soci::i_null;
  }

  static std::optional<std::int64_t> get(std::int64_t value,
                                         soci::indicator ind) {
    if (ind == soci::i_null)
      return std::nullopt;
    return value;
  }

  // One `into` per column in `key_columns` order: a column list, written out
  // by design.
  void bind_into(soci::statement& st) {
    st.exchange(into(k.id));
    st.exchange(into(k.organization_id));
    st.exchange(into(k.name));
    st.exchange(into(k.key_hash));
    st.exchange(into(k.prefix));
    st.exchange(into(domains));
    st.exchange(into(smtp));
    st.exchange(into(disposable));
    st.exchange(into(role_account));
    st.exchange(into(enrichment));
    st.exchange(into(random_detection));
    st.exchange(into(per_minute, per_minute_ind));
    st.exchange(into(per_hour, per_hour_ind));
    st.exchange(into(per_day, per_day_ind));
    st.exchange(into(status));
    st.exchange(into(k.created_at));
    st.exchange(into(k.updated_at));
  }

  acc::api_key get() const {
    auto out = k;
    auto list = decode_string_list(domains);
    if (!list)
      throw std::runtime_error("malformed allowed_domains of key " + k.id);
    out.allowed_domains = std::move(*list);
    out.config = {smtp != 0, disposable != 0, role_account != 0,
                  enrichment != 0, random_detection != 0};
    out.limits = {get(per_minute, per_minute_ind), get(per_hour, per_hour_ind),
                  get(per_day, per_day_ind)};
    out.status = status == "revoked" ? acc::key_status::revoked
                                     : acc::key_status::active;
    return out;
  }
};

} // namespace

std::vector<acc::api_key> soci_store::select_keys(const std::string& where,
                                                  const std::string& a,
                                                  const std::string& b) {
  if (b.empty())
    return select_rows<key_row>(sql_, key_columns, where, a);
  return select_rows<key_row>(sql_, key_columns, where, a, b);
}

acc::api_key soci_store::load_key(const std::string& organization_id,
                                  const std::string& key_id) {
  auto rows = select_keys("WHERE organization_id = :o AND id = :id",
                          organization_id, key_id);
  if (rows.empty() || key_id.empty())
    refuse(errc::not_found, "API key not found");
  return rows.front();
}

expected<unit> soci_store::insert_api_key(const acc::api_key& k) {
  return run<unit>(false, [&] {
    key_row r{k};
    sql_ << "INSERT INTO api_keys (id, organization_id, name, key_hash, "
            "prefix, allowed_domains, smtp, disposable, role_account, "
            "enrichment, random_detection, per_minute, per_hour, per_day, "
            "status, created_at, updated_at) VALUES (:id, :o, :n, :h, :p, "
            ":d, :s, :di, :ra, :en, :rd, :pm, :ph, :pd, :st, :c, :u)",
        use(r.k.id), use(r.k.organization_id), use(r.k.name), use(r.k.key_hash),
        use(r.k.prefix), use(r.domains), use(r.smtp), use(r.disposable),
        use(r.role_account), use(r.enrichment), use(r.random_detection),
        use(r.per_minute, r.per_minute_ind), use(r.per_hour, r.per_hour_ind),
        use(r.per_day, r.per_day_ind), use(r.status), use(r.k.created_at),
        use(r.k.updated_at);
    return unit{};
  });
}

expected<std::vector<acc::api_key>>
soci_store::list_api_keys(const std::string& organization_id) {
  return run<std::vector<acc::api_key>>(true, [&] {
    return select_keys("WHERE organization_id = :o ORDER BY created_at, id",
                       organization_id, "");
  });
}

expected<acc::api_key>
soci_store::get_api_key(const std::string& organization_id,
                        const std::string& key_id) {
  return run<acc::api_key>(true,
                           [&] { return load_key(organization_id, key_id); });
}

expected<acc::api_key>
soci_store::find_api_key_by_hash(const std::string& key_hash) {
  return run<acc::api_key>(true, [&] {
    auto rows = select_keys("WHERE key_hash = :h", key_hash, "");
    if (rows.empty())
      refuse(errc::not_found, "API key not found");
    return rows.front();
  });
}

expected<acc::api_key>
soci_store::update_api_key(const std::string& organization_id,
                           const std::string& key_id, const api_key_update& u,
                           acc::unix_time now) {
  return run<acc::api_key>(false, [&] {
    transaction tx{*this};
    auto k = load_key(organization_id, key_id);
    bool revoking = u.status && *u.status == acc::key_status::revoked &&
                    k.status == acc::key_status::active;
    // One line per field the patch may carry: written out by design.
    if (u.name)
      k.name = *u.name;
    if (u.allowed_domains)
      k.allowed_domains = *u.allowed_domains;
    if (u.config)
      k.config = *u.config;
    if (u.limits)
      k.limits = *u.limits;
    if (u.status)
      k.status = *u.status;
    k.updated_at = now;
    key_row r{k};
    sql_ << "UPDATE api_keys SET name = :n, allowed_domains = :d, smtp = :s, "
            "disposable = :di, role_account = :ra, enrichment = :en, "
            "random_detection = :rd, per_minute = :pm, per_hour = :ph, "
            "per_day = :pd, status = :st, updated_at = :u "
            "WHERE organization_id = :o AND id = :id",
        use(r.k.name), use(r.domains), use(r.smtp), use(r.disposable),
        use(r.role_account), use(r.enrichment), use(r.random_detection),
        use(r.per_minute, r.per_minute_ind), use(r.per_hour, r.per_hour_ind),
        use(r.per_day, r.per_day_ind), use(r.status), use(r.k.updated_at),
        use(organization_id), use(key_id);
    notify(change_kind::api_key, k.key_hash);
    if (revoking)
      emit_webhook_event(organization_id,
                         core::webhooks::event_type::key_revoked, key_id, now);
    tx.commit();
    return k;
  });
}

expected<unit> soci_store::delete_api_key(const std::string& organization_id,
                                          const std::string& key_id) {
  return run<unit>(false, [&] {
    transaction tx{*this};
    auto k = load_key(organization_id, key_id);
    // Usage rows go with the key (ON DELETE CASCADE).
    sql_ << "DELETE FROM api_keys WHERE organization_id = :o AND id = :id",
        use(organization_id), use(key_id);
    notify(change_kind::api_key, k.key_hash);
    tx.commit();
    return unit{};
  });
}

} // namespace mailassay::storage
