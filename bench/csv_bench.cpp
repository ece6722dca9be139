// Batch upload intake throughput: a generated 200000-row, 10 MB CSV through
// the CSV reader alone and through the whole intake (reader, header and
// column choice, syntax check, de-duplication, items), beside a same-run
// baseline that only counts the newlines of the buffer with memchr.
// Throughput is in thread CPU time (Google Benchmark's default), on one core.
//
//   csv_bench [--benchmark_repetitions=N ...]

#include "bench_support.hpp"

#include "core/batch/csv.hpp"
#include "core/batch/intake.hpp"

#include <benchmark/benchmark.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

namespace batch = mailassay::core::batch;

constexpr std::size_t row_count = 200000;
// The service's default upload limit (MAILASSAY_BATCH_MAX_FILE_BYTES).
constexpr std::size_t file_bytes = 10 * 1024 * 1024;

using rng = mailassay::bench::splitmix;

constexpr std::string_view first_names[] = {
    "john",  "maria", "wei",   "olga",  "ahmed", "sophie", "lukas", "aiko",
    "pedro", "fatma", "ngozi", "james", "anna",  "li",     "jose",  "priya"};
constexpr std::string_view last_names[] = {
    "smith",  "garcia", "wang",   "ivanova", "hassan", "martin", "muller",
    "tanaka", "silva",  "yilmaz", "okafor",  "brown",  "nguyen", "patel"};
constexpr std::string_view domains[] = {
    "gmail.com",    "yahoo.com",      "outlook.com",    "gmx.de",
    "acme-corp.io", "initech.co.uk",  "globex.com",     "umbrella.net",
    "hooli.xyz",    "piedpiper.shop", "soylent.com.br", "tyrell.fr"};
constexpr std::string_view cities[] = {"Springfield", "Lyon",   "Osaka",
                                       "Porto",       "Kraków", "Lagos"};

// The address of row `i`: the same whenever asked.
std::string email_of(std::size_t i) {
  rng g{i * 0x2545F4914F6CDD1Dull + 1};
  std::string email;
  email.append(g.pick(first_names))
      .append(".")
      .append(g.pick(last_names))
      .append(std::to_string(i))
      .append("@")
      .append(g.pick(domains));
  return email;
}

// A CRM-style export: email, first name, city, a quoted note (one in ten
// with a comma or doubled quotes); ~3% duplicates of an earlier row with
// the domain in capitals, ~1% invalid cells; notes padded so that the file
// is 10 MiB.
std::string generate() {
  rng g{0x5EED};
  std::string out = "Email,First Name,City,Notes\r\n";
  out.reserve(file_bytes + 4096);
  for (std::size_t i = 0; i < row_count; ++i) {
    auto kind = g.below(100);
    std::string email;
    if (kind < 3 && i > 10) {
      email = email_of(i - 7);
      for (auto at = email.find('@'); at < email.size(); ++at)
        if (email[at] >= 'a' && email[at] <= 'z')
          email[at] = static_cast<char>(email[at] - 'a' + 'A');
    } else if (kind == 3) {
      email = "not-an-address-" + std::to_string(i);
    } else {
      email = email_of(i);
    }
    auto row_start = out.size();
    // The row length that keeps the file on course for `file_bytes`.
    auto target =
        row_start < file_bytes ? (file_bytes - row_start) / (row_count - i) : 0;
    out.append(email).append(",");
    out.append(g.pick(first_names)).append(",");
    out.append(g.pick(cities)).append(",\"");
    if (g.below(10) == 0)
      out.append(g.below(2) == 0 ? "said \"\"hi\"\", " : "met at fair, ");
    while (out.size() - row_start + 3 < target)
      out += static_cast<char>('a' + g.below(26));
    out.append("\"\r\n");
  }
  return out;
}

const std::string& file() {
  static const std::string f = generate();
  return f;
}

void report(benchmark::State& state, std::size_t bytes) {
  auto total =
      static_cast<double>(bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(total));
  state.counters["MB"] =
      benchmark::Counter(total / 1e6, benchmark::Counter::kIsRate);
  state.counters["rows"] = benchmark::Counter(
      static_cast<double>(row_count) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

// Baseline: the least any reader must do, touch every byte once.
void memchr_newlines(benchmark::State& state) {
  const auto& f = file();
  for (auto _ : state) {
    std::size_t lines = 0;
    const char* p = f.data();
    const char* end = p + f.size();
    while ((p = static_cast<const char*>(std::memchr(p, '\n', end - p)))) {
      ++lines;
      ++p;
    }
    benchmark::DoNotOptimize(lines);
  }
  report(state, f.size());
}
BENCHMARK(memchr_newlines)->Unit(benchmark::kMillisecond);

void csv_reader_only(benchmark::State& state) {
  const auto& f = file();
  for (auto _ : state) {
    std::size_t fields = 0;
    batch::csv_reader reader{[&](const batch::csv_record& r) {
      fields += r.fields.size();
      return true;
    }};
    if (!reader.feed(f) || !reader.finish())
      state.SkipWithError("the CSV did not parse");
    benchmark::DoNotOptimize(fields);
  }
  report(state, f.size());
}
BENCHMARK(csv_reader_only)->Unit(benchmark::kMillisecond);

void intake_whole(benchmark::State& state) {
  const auto& f = file();
  for (auto _ : state) {
    auto r = batch::read_csv(f, {});
    if (!r) {
      state.SkipWithError(r.error_value().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(r->items.data());
  }
  report(state, f.size());
}
BENCHMARK(intake_whole)->Unit(benchmark::kMillisecond);

// As the CLI reads a file: 64 KiB at a time.
void intake_64k_chunks(benchmark::State& state) {
  const auto& f = file();
  std::string_view all{f};
  for (auto _ : state) {
    batch::intake in{batch::intake_options{}};
    for (std::size_t i = 0; i < all.size(); i += 65536)
      if (!in.feed(all.substr(i, 65536)))
        state.SkipWithError("feed failed");
    auto r = in.finish();
    if (!r) {
      state.SkipWithError(r.error_value().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(r->items.data());
  }
  report(state, f.size());
}
BENCHMARK(intake_64k_chunks)->Unit(benchmark::kMillisecond);

void intake_no_dedupe(benchmark::State& state) {
  const auto& f = file();
  batch::intake_options opts;
  opts.deduplicate = false;
  for (auto _ : state) {
    auto r = batch::read_csv(f, opts);
    if (!r) {
      state.SkipWithError(r.error_value().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(r->items.data());
  }
  report(state, f.size());
}
BENCHMARK(intake_no_dedupe)->Unit(benchmark::kMillisecond);

} // namespace

int main(int argc, char** argv) {
  const auto& f = file();
  auto r = batch::read_csv(f, {});
  if (!r) {
    std::fprintf(stderr, "generated file refused: %s\n",
                 r.error_value().message.c_str());
    return 1;
  }
  std::printf("file: %zu bytes, %lld rows, %lld unique, %lld duplicates, "
              "%lld invalid\n",
              f.size(), static_cast<long long>(r->total_rows),
              static_cast<long long>(r->unique_emails),
              static_cast<long long>(r->duplicates_removed),
              static_cast<long long>(r->invalid_rows));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
