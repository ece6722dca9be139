#pragma once
// What the in-process benchmarks in bench/ share: deterministic generators
// (the same input on every run and platform), reading the shipped data
// files, and timing in thread CPU time. Header-only: each benchmark is one
// translation unit.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <time.h>
#include <vector>

namespace mailassay::bench {

/// A fixed-seed xorshift generator: the same addresses on every run.
struct xorshift {
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  /// The next 64 random bits.
  std::uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  /// A number in [0, n).
  std::size_t below(std::size_t n) { return next() % n; }
  /// A number in [0, n) skewed towards 0, as real traffic is (a few
  /// domains dominate): the least of three draws.
  std::size_t skewed(std::size_t n) {
    auto a = below(n);
    auto b = below(n);
    auto c = below(n);
    return std::min({a, b, c});
  }
  /// True p times in 100.
  bool percent(std::size_t p) { return below(100) < p; }
  /// One element of a non-empty vector.
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }
};

/// splitmix64: deterministic across platforms, unlike std distributions;
/// the seed is the initial state.
struct splitmix {
  std::uint64_t state = 0;
  /// The next 64 random bits.
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// A number in [0, n).
  std::size_t below(std::size_t n) { return next() % n; }
  /// One element of an array.
  template <class T, std::size_t N>
  const T& pick(const T (&items)[N]) {
    return items[below(N)];
  }
};

/// The whole file at `path`; exits with status 1 when it cannot be read
/// (a benchmark without its data has nothing to measure).
inline std::string read_file(const std::string& path) {
  std::ifstream in{path};
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(1);
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// The lines of a data list (data/risk/*.txt), without blank lines and
/// `#` comments.
inline std::vector<std::string> entries(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#')
      out.push_back(line);
  return out;
}

/// The source tree holding data/: the first argument, else
/// $MAILASSAY_SOURCE_DIR, else `built_from` (the tree the benchmark was
/// built from).
inline std::string source_root(int argc, char** argv, const char* built_from) {
  if (argc > 1)
    return argv[1];
  if (const char* env = std::getenv("MAILASSAY_SOURCE_DIR"))
    return env;
  return built_from;
}

/// The CPU time of this thread: the machine is shared, and time spent
/// descheduled while others build is not time the code took.
inline double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

/// The best of `runs` calls of `f`, in thread CPU seconds.
template <class F>
double best_seconds(int runs, F&& f) {
  double best = 1e9;
  for (int p = 0; p < runs; ++p) {
    auto start = thread_seconds();
    f();
    best = std::min(best, thread_seconds() - start);
  }
  return best;
}

} // namespace mailassay::bench
