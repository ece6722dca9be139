#include "core/batch/retention.hpp"

#include <algorithm>

namespace mailassay::core::batch {

std::optional<std::int64_t>
effective_retention(std::int64_t server_seconds,
                    std::optional<std::int64_t> organization_seconds) {
  // A non-positive stored value is no choice at all (never written by the
  // API, which refuses it): the server's setting applies.
  if (organization_seconds && *organization_seconds <= 0)
    organization_seconds.reset();
  if (server_seconds <= 0)
    return organization_seconds;
  if (!organization_seconds)
    return server_seconds;
  return std::min(server_seconds, *organization_seconds);
}

std::optional<std::int64_t>
retention_cutoff(std::int64_t now, std::int64_t server_seconds,
                 std::optional<std::int64_t> organization_seconds) {
  auto keep = effective_retention(server_seconds, organization_seconds);
  if (!keep)
    return std::nullopt;
  return now - *keep;
}

std::optional<std::string>
organization_retention_refusal(std::int64_t requested,
                               std::int64_t server_seconds) {
  if (requested <= 0)
    return "batchRetentionSeconds must be greater than 0 (null: the "
           "server's retention)";
  auto most = server_seconds > 0 ? server_seconds : max_retention_seconds;
  if (requested > most)
    return "batchRetentionSeconds must not be longer than " +
           std::string{server_seconds > 0 ? "the server's retention, "
                                          : "ten years, "} +
           std::to_string(most) + " seconds";
  return std::nullopt;
}

} // namespace mailassay::core::batch
