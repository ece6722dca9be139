#include "use_cases/accounts/change_echo.hpp"

#include <algorithm>
#include <vector>

namespace mailassay::use_cases::accounts {

std::uint64_t change_echo::mark() const {
  std::lock_guard guard{mtx_};
  return seq_;
}

bool change_echo::await(const std::string& payload, std::uint64_t since,
                        std::int64_t processes,
                        std::chrono::milliseconds limit) const {
  std::unique_lock lock{mtx_};
  auto done = [&] {
    bool heard = false;
    std::vector<std::string_view> nodes;
    for (auto i = recent_.rbegin(); i != recent_.rend() && i->seq > since;
         ++i) {
      if (i->payload != payload)
        continue;
      if (i->node.empty())
        heard = true;
      else if (std::find(nodes.begin(), nodes.end(), i->node) == nodes.end())
        nodes.push_back(i->node);
    }
    return heard && static_cast<std::int64_t>(nodes.size()) >= processes;
  };
  return cv_.wait_for(lock, limit, [&] { return !listening_ || done(); }) &&
         done();
}

void change_echo::remember(std::string_view node, std::string_view payload) {
  {
    std::lock_guard guard{mtx_};
    recent_.push_back(seen{++seq_, std::string{node}, std::string{payload}});
    // Waits last milliseconds; a few hundred entries cover any burst.
    while (recent_.size() > 1024)
      recent_.pop_front();
  }
  cv_.notify_all();
}

void change_echo::heard(std::string_view payload) {
  remember({}, payload);
}

void change_echo::acked(std::string_view node, std::string_view payload) {
  remember(node, payload);
}

void change_echo::set_listening(bool on) {
  {
    std::lock_guard guard{mtx_};
    listening_ = on;
  }
  cv_.notify_all();
}

} // namespace mailassay::use_cases::accounts
