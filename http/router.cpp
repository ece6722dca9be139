#include "http/router.hpp"

namespace mailassay::http {

namespace {

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t start = 1;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos)
      end = path.size();
    out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool matches(std::string_view pattern, std::string_view path,
             std::map<std::string, std::string>* params) {
  auto want = segments(pattern);
  auto got = segments(path);
  if (want.size() != got.size())
    return false;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!want[i].empty() && want[i].front() == ':') {
      if (got[i].empty())
        return false;
      if (params)
        (*params)[std::string{want[i].substr(1)}] = std::string{got[i]};
    } else if (want[i] != got[i]) {
      return false;
    }
  }
  return true;
}

} // namespace

route_match match_route(std::string_view method, std::string_view path) {
  route_match out;
  if (path.empty() || path.front() != '/')
    return out;
  if (path.size() > 1 && path.back() == '/')
    path.remove_suffix(1);
  for (auto& r : routes()) {
    // Literal segments win over parameters because the table lists them
    // first (e.g. /v2/api-keys/rate-limits before /v2/api-keys/:id).
    if (!matches(r.pattern, path, nullptr))
      continue;
    if (method == r.method) {
      out.found = &r;
      out.params.clear();
      matches(r.pattern, path, &out.params);
      return out;
    }
    if (out.allow.find(r.method) == std::string::npos)
      out.allow += (out.allow.empty() ? "" : ", ") + std::string{r.method};
  }
  return out;
}

} // namespace mailassay::http
