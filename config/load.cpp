// Loading: defaults, then the file, then MAILASSAY_* variables, each value
// checked by its row of the registry (config/registry.hpp); and what a
// reload copies, `mailassay config` lists and `changes` compares.
#include "config/registry.hpp"
#include "config/settings.hpp"

#include <fstream>

extern char** environ;

namespace mailassay::config {

namespace {

using core::errc;
using core::make_error;
using keys::env_name;
using keys::find_key;
using keys::key_spec;
using keys::registry;
using keys::trim;

// Unquotes a TOML-ish value: "text", 'text', [ "a", "b" ], or a bare word.
std::string file_value(std::string v) {
  v = trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') &&
      v.back() == v.front())
    return v.substr(1, v.size() - 2);
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') {
    std::string out;
    for (char c : v.substr(1, v.size() - 2))
      if (c != '"' && c != '\'')
        out += c;
    return out;
  }
  return v;
}

core::error bad(std::string message) {
  return make_error(errc::bad_request, std::move(message));
}

} // namespace

environment process_environment() {
  environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry{*e};
    auto eq = entry.find('=');
    if (eq != std::string::npos && entry.rfind("MAILASSAY_", 0) == 0)
      env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

core::expected<settings> load(const std::optional<std::string>& path,
                              const environment& env) {
  settings s;
  if (path) {
    std::ifstream in(*path);
    if (!in)
      return bad("cannot read configuration file " + *path);
    std::string line, section;
    for (int number = 1; std::getline(in, line); ++number) {
      auto hash = line.find('#');
      if (hash != std::string::npos && line.find('"') > hash)
        line.erase(hash);
      line = trim(line);
      if (line.empty())
        continue;
      auto where = *path + ":" + std::to_string(number) + ": ";
      if (line.front() == '[') {
        if (line.back() != ']')
          return bad(where + "malformed section header");
        section = trim(line.substr(1, line.size() - 2));
        continue;
      }
      auto eq = line.find('=');
      if (eq == std::string::npos)
        return bad(where + "expected key = value");
      auto key = trim(line.substr(0, eq));
      auto* spec = find_key(section, key);
      if (!spec)
        return bad(where + "unknown setting " + section + "." + key);
      if (auto err = spec->io.apply(s, file_value(line.substr(eq + 1)));
          !err.empty())
        return bad(where + section + "." + key + " " + err);
    }
  }
  for (auto& [name, value] : env) {
    if (name.rfind("MAILASSAY_", 0) != 0 || name == "MAILASSAY_CONFIG")
      continue;
    const key_spec* spec = nullptr;
    for (auto& k : registry())
      if (env_name(k) == name)
        spec = &k;
    if (!spec) {
      // Only names inside a known section are ours to refuse: tests and
      // tools use other MAILASSAY_ variables (MAILASSAY_TEST_PG_URL ...).
      for (auto& k : registry())
        if (name.rfind(keys::env_prefix(k.section), 0) == 0)
          return bad("unknown setting in environment: " + name);
      continue;
    }
    if (auto err = spec->io.apply(s, trim(value)); !err.empty())
      return bad(name + " " + err);
  }
  return s;
}

std::optional<std::string> file_of(const std::optional<std::string>& given,
                                   const environment& env) {
  if (given)
    return given;
  if (auto i = env.find("MAILASSAY_CONFIG"); i != env.end())
    return i->second;
  return std::nullopt;
}

void apply_reloadable(settings& live, const settings& next) {
  // Only live<T> fields have a reload copy (config/key_spec.hpp); each
  // takes the value `next` holds under its own atomic or lock.
  for (auto& k : registry())
    k.io.reload(live, next);
}

std::vector<key_doc> describe() {
  std::vector<key_doc> out;
  settings defaults;
  for (auto& k : registry())
    out.push_back({k.section, k.key, env_name(k), k.show(defaults),
                   k.description, k.io.reloadable()});
  return out;
}

std::vector<key_change> changes(const settings& before, const settings& after) {
  std::vector<key_change> out;
  for (auto& k : registry()) {
    auto was = k.show(before), now = k.show(after);
    // The JWT secret shows as "(generated)" either way.
    bool differs = k.section == "auth" && k.key == "jwt_secret"
                       ? before.auth.jwt_secret != after.auth.jwt_secret
                       : was != now;
    if (!differs)
      continue;
    key_change c{k.section + "." + k.key, {}, {}, k.io.reloadable()};
    if (c.reloadable) {
      c.before = std::move(was);
      c.after = std::move(now);
    }
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace mailassay::config
