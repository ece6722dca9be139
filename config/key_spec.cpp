#include "config/key_spec.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace mailassay::config::keys {

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::vector<std::string> split_list(const std::string& v) {
  std::vector<std::string> items;
  std::stringstream in(v);
  std::string item;
  while (std::getline(in, item, ','))
    if (auto t = trim(item); !t.empty())
      items.push_back(std::move(t));
  return items;
}

std::string show(const std::string& v) {
  return v;
}

std::string show(bool v) {
  return v ? "true" : "false";
}

std::string show(core::smtp::tls_policy v) {
  return std::string{core::smtp::to_string(v)};
}

std::string show(const std::vector<std::string>& v) {
  std::string out;
  for (auto& x : v)
    out += (out.empty() ? "" : ",") + x;
  return out;
}

std::string show(const std::vector<std::int64_t>& v) {
  std::string out;
  for (auto x : v)
    out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

} // namespace mailassay::config::keys
