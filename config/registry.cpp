#include "config/registry.hpp"

#include <cctype>

namespace mailassay::config::keys {

namespace {

std::string upper(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

const std::vector<key_spec>& registry() {
  // Built once, then only read: the one source of start-up, reload and
  // `mailassay config`.
  static const std::vector<key_spec> keys = [] {
    std::vector<key_spec> all;
    for (auto group : {service_keys, batch_smtp_keys, webhook_keys})
      for (auto& k : group())
        all.push_back(std::move(k));
    return all;
  }();
  return keys;
}

std::string env_prefix(const std::string& section) {
  return "MAILASSAY_" + upper(section) + "_";
}

std::string env_name(const key_spec& k) {
  return env_prefix(k.section) + upper(k.key);
}

const key_spec* find_key(const std::string& section, const std::string& key) {
  for (auto& k : registry())
    if (k.section == section && k.key == key)
      return &k;
  return nullptr;
}

} // namespace mailassay::config::keys
