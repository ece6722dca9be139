#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

namespace mailassay::use_cases::accounts {

/// Lets the process that made a change wait until every process listening
/// applied it. Each process acknowledges the API-key changes it applied
/// (a notification of its own, storage::encode_ack, sent on its LISTEN
/// connection right after it dropped the cache entry); the writer counts
/// the processes listening (store::listening_processes) and waits for that
/// many acknowledgements, its own included. Its answer (the revoke's 200)
/// thus reaches the client only after every process forgot the key, so
/// the client's next request is refused wherever it lands. A bounded wait
/// on a storage worker, only while LISTEN is in place; nothing on SQLite.
class change_echo {
public:
  /// Marks the point after which a notification or acknowledgement counts;
  /// take it before the change is committed.
  std::uint64_t mark() const;

  /// Waits at most `limit` until `payload` was heard after `since` and
  /// acknowledged by `processes` distinct processes (0: heard is enough);
  /// returns at once (false) when not listening. Returns whether it was.
  bool await(const std::string& payload, std::uint64_t since,
             std::int64_t processes, std::chrono::milliseconds limit) const;

  /// The listener heard `payload`.
  void heard(std::string_view payload);

  /// Process `node` acknowledged `payload`.
  void acked(std::string_view node, std::string_view payload);

  /// Whether LISTEN is in place (no echo comes otherwise).
  void set_listening(bool on);

private:
  struct seen {
    std::uint64_t seq;
    std::string node; // "" for the payload itself
    std::string payload;
  };
  void remember(std::string_view node, std::string_view payload);
  mutable std::mutex mtx_;
  mutable std::condition_variable cv_;
  bool listening_ = false;
  std::uint64_t seq_ = 0; // payloads and acknowledgements heard so far
  // The last ones heard, oldest first.
  std::deque<seen> recent_;
};

} // namespace mailassay::use_cases::accounts
