#include "actors/batch/result_row.hpp"
#include "app/app.hpp"
#include "core/batch/intake.hpp"
#include "http/codec/batch_results.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <unistd.h>

namespace mailassay::app {

namespace {

// Draws "[#####.....]  45%  90000/200000  1234/s" on one terminal line.
class progress_bar {
public:
  progress_bar(std::int64_t total, bool enabled)
      : total_(total), enabled_(enabled),
        started_(std::chrono::steady_clock::now()) {}

  void update(std::int64_t done, bool final = false) {
    if (!enabled_)
      return;
    auto now = std::chrono::steady_clock::now();
    if (!final && now - last_ < std::chrono::milliseconds(200))
      return;
    last_ = now;
    constexpr int width = 30;
    auto frac = total_ == 0
                    ? 1.0
                    : static_cast<double>(done) / static_cast<double>(total_);
    auto filled = static_cast<int>(frac * width);
    auto secs = std::chrono::duration<double>(now - started_).count();
    auto rate = secs > 0 ? static_cast<double>(done) / secs : 0.0;
    std::fprintf(
        stderr, "\r[%s%s] %3d%%  %lld/%lld  %.0f/s",
        std::string(static_cast<std::size_t>(filled), '#').c_str(),
        std::string(static_cast<std::size_t>(width - filled), '.').c_str(),
        static_cast<int>(frac * 100), static_cast<long long>(done),
        static_cast<long long>(total_), rate);
    if (final)
      std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

private:
  std::int64_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_{};
};

// Feeds the file (or stdin) to the intake in chunks: memory stays bounded by
// the items, not the file.
core::expected<core::batch::intake_result>
read_file(const std::string& path, core::batch::intake_options opts,
          std::int64_t max_bytes) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file)
      return core::make_error(core::errc::bad_request, "cannot read " + path);
    in = &file;
  }
  core::batch::intake reader{std::move(opts)};
  std::string chunk(64 * 1024, '\0');
  std::int64_t total = 0;
  while (*in) {
    in->read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    auto n = in->gcount();
    if (n <= 0)
      break;
    total += n;
    if (total > max_bytes)
      return core::make_error(core::errc::payload_too_large,
                              "the file is larger than the limit of " +
                                  std::to_string(max_bytes) +
                                  " bytes (batch.max_file_bytes)");
    if (auto fed = reader.feed({chunk.data(), static_cast<std::size_t>(n)});
        !fed)
      return fed.error_value();
  }
  return reader.finish();
}

} // namespace

int batch(const config::settings& cfg, const batch_options& opt) {
  core::batch::intake_options in;
  in.deduplicate = opt.deduplicate;
  in.email_column = opt.email_column;
  in.max_addresses = static_cast<std::size_t>(cfg.batch.max_addresses);
  in.syntax = syntax_options(cfg);
  auto read = read_file(opt.file, std::move(in), cfg.batch.max_file_bytes);
  if (!read) {
    auto& e = read.error_value();
    std::cerr << "mailassay: " << opt.file << ": " << e.message;
    for (auto& d : e.details)
      std::cerr << (e.message.empty() ? "" : "; ") << d;
    std::cerr << "\n";
    return 1;
  }
  if (opt.smtp)
    std::cerr << "mailassay: SMTP probing is not available yet; results come "
                 "from syntax, DNS and the risk checks\n";

  auto validator = validator_or_exit(cfg);
  auto& items = read->items;
  std::mutex mtx;
  std::condition_variable cv;
  std::size_t pending = 0;
  std::int64_t done = read->invalid_rows;
  const auto total = static_cast<std::int64_t>(items.size());
  progress_bar bar{total, isatty(STDERR_FILENO) != 0 || opt.progress};
  constexpr std::size_t window = 256;
  for (auto& it : items) {
    if (it.done)
      continue;
    {
      std::unique_lock lock{mtx};
      cv.wait(lock, [&] { return pending < window; });
      ++pending;
      bar.update(done);
    }
    actors::validation::request req;
    req.email = it.email;
    auto* slot = &it;
    validator->validate(
        std::move(req), [&, slot](actors::validation::result r) {
          auto row = actors::batch::item_from_result(
              slot->seq, slot->email, r, http::codec::batch_item_detail);
          std::lock_guard lock{mtx};
          *slot = std::move(row);
          --pending;
          ++done;
          cv.notify_all();
        });
  }
  {
    std::unique_lock lock{mtx};
    cv.wait(lock, [&] { return pending == 0; });
  }
  bar.update(done, true);

  std::string out;
  http::codec::append_csv_header(out);
  core::batch::status_counts counts;
  for (auto& it : items) {
    http::codec::append_csv_row(out, it);
    counts.add(it.status);
  }
  if (opt.out.empty() || opt.out == "-") {
    std::cout << out;
  } else {
    std::ofstream f{opt.out, std::ios::binary | std::ios::trunc};
    f << out;
    if (!f) {
      std::cerr << "mailassay: cannot write " << opt.out << "\n";
      return 1;
    }
  }
  std::cerr << "rows " << read->total_rows << ", unique " << read->unique_emails
            << ", duplicates removed " << read->duplicates_removed
            << ", invalid rows " << read->invalid_rows << "; valid "
            << counts.valid << ", invalid " << counts.invalid << ", risky "
            << counts.risky << ", unknown " << counts.unknown << "\n";
  return 0;
}

} // namespace mailassay::app
