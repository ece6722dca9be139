#pragma once

#include <string>

namespace mailassay::testing {

/// A PostgreSQL schema of one test's own inside the database of `base_url`
/// (the servers and stores given `url()` create it on first use): nothing a
/// test leaves behind, such as a delivery still waiting for a receiver that
/// is gone, reaches the servers of later tests or runs. Dropped with all it
/// holds on destruction.
class pg_schema {
public:
  /// `tag` starts the schema's name (letters, digits and `_`).
  explicit pg_schema(const std::string& base_url,
                     const std::string& tag = "mailassay_t");
  ~pg_schema();
  pg_schema(const pg_schema&) = delete;
  pg_schema& operator=(const pg_schema&) = delete;

  /// The schema's name, unique across processes and runs.
  const std::string& name() const { return name_; }
  /// `base_url` with `schema=<name>` added.
  const std::string& url() const { return url_; }

private:
  std::string base_;
  std::string name_;
  std::string url_;
};

} // namespace mailassay::testing
