#pragma once
// The shipped risk lists (data/risk/*.txt) read as texts, for the
// benchmarks that time core::risk::lists_from_texts themselves
// (free_checks_bench, risk_bench).

#include "bench_support.hpp"

#include "core/risk/lists.hpp"

#include <string>

namespace mailassay::bench {

/// The texts of ROOT/data/risk/*.txt.
struct risk_files {
  std::string disposable, disposable_allow, free_providers, roles, tlds,
      first_names, last_names, common_words;

  /// Reads every list under `root`/data/risk; exits 1 when one is missing.
  static risk_files read(const std::string& root) {
    auto file = [&](const char* name) {
      return read_file(root + "/data/risk/" + name + ".txt");
    };
    return {file("disposable"),     file("disposable_allow"),
            file("free_providers"), file("roles"),
            file("tlds"),           file("first_names"),
            file("last_names"),     file("common_words")};
  }

  /// Views of the texts for core::risk::lists_from_texts (valid while this
  /// object lives).
  core::risk::list_texts texts() const {
    core::risk::list_texts t;
    t.disposable = disposable;
    t.disposable_allow = disposable_allow;
    t.free_providers = free_providers;
    t.roles = roles;
    t.tlds = tlds;
    t.first_names = first_names;
    t.last_names = last_names;
    t.common_words = common_words;
    return t;
  }
};

} // namespace mailassay::bench
