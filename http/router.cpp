#include "http/router.hpp"

#include <algorithm>
#include <unordered_map>

namespace mailassay::http {

namespace {

// Compares `path` with `pattern` segment by segment (both start with '/';
// a `:name` pattern segment matches any non-empty segment). Runs for every
// route of the table on every request, so it walks both strings in step
// instead of splitting them into vectors (two allocations per route).
bool matches(std::string_view pattern, std::string_view path,
             std::map<std::string, std::string>* params) {
  size_t want_at = 1, got_at = 1;
  for (;;) {
    auto want_end = std::min(pattern.find('/', want_at), pattern.size());
    auto got_end = std::min(path.find('/', got_at), path.size());
    auto want = pattern.substr(want_at, want_end - want_at);
    auto got = path.substr(got_at, got_end - got_at);
    if (!want.empty() && want.front() == ':') {
      if (got.empty())
        return false;
      if (params)
        (*params)[std::string{want.substr(1)}] = std::string{got};
    } else if (want != got) {
      return false;
    }
    bool want_done = want_end == pattern.size();
    bool got_done = got_end == path.size();
    if (want_done || got_done)
      return want_done && got_done; // same number of segments
    want_at = want_end + 1;
    got_at = got_end + 1;
  }
}

// The table walk: the first route whose pattern matches `path` and whose
// method is `method`; else the methods the path has (for 405).
route_match walk(std::string_view method, std::string_view path) {
  route_match out;
  auto allow = [&](std::string_view m) {
    if (out.allow.find(m) == std::string::npos)
      out.allow += (out.allow.empty() ? "" : ", ") + std::string{m};
  };
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
    allow(r.method);
    if (std::string_view{r.method} == "GET")
      allow("HEAD");
  }
  return out;
}

// Literal patterns (no `:name` segment) by path, each with the routes the
// walk itself finds for that exact path: one hash lookup instead of a walk
// over the whole table for most requests, with the same answer by
// construction. Built once from the constant table.
class literal_index {
public:
  literal_index() {
    for (const auto& r : routes()) {
      std::string_view pattern = r.pattern;
      if (pattern.find("/:") == std::string_view::npos &&
          walk(r.method, pattern).found == &r)
        by_path_[pattern].push_back(&r);
    }
  }

  /// Returns the route of a literal path and method, or null when only the
  /// walk can tell (parameters, 404, 405).
  const route* find(std::string_view method, std::string_view path) const {
    auto i = by_path_.find(path);
    if (i == by_path_.end())
      return nullptr;
    for (auto* r : i->second)
      if (method == r->method)
        return r;
    return nullptr;
  }

private:
  std::unordered_map<std::string_view, std::vector<const route*>> by_path_;
};

} // namespace

route_match match_route(std::string_view method, std::string_view path) {
  route_match out;
  // A HEAD is answered by the GET route, without the body (exchange.cpp).
  if (method == "HEAD")
    method = "GET";
  if (path.empty() || path.front() != '/')
    return out;
  if (path.size() > 1 && path.back() == '/')
    path.remove_suffix(1);
  // Runs on the I/O thread for every request: most paths are literal.
  static const literal_index literals;
  if (auto* r = literals.find(method, path)) {
    out.found = r;
    return out;
  }
  return walk(method, path);
}

} // namespace mailassay::http
