#pragma once

// Changes other processes must hear of at once (docs/deployment.md, "What is
// shared where"). On PostgreSQL the store sends them with pg_notify inside
// the transaction that makes the change, so they are delivered when, and
// only if, it commits; every process LISTENs on the channel
// (net/pg_listener). SQLite serves one process: nothing is sent.

#include "storage/url.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mailassay::storage {

/// What changed.
enum class change_kind {
  api_key,      ///< A key was updated, revoked, reactivated or deleted.
  member,       ///< A member's role changed or the member was removed.
  batch_cancel, ///< A batch job was cancelled.
  signing_key,  ///< The JWT signing keys were rotated.
};

/// One change: its kind and the id it concerns (the key's secret hash, a
/// user id, a job id, a signing key id).
struct change {
  change_kind kind = change_kind::api_key;
  std::string id;
};

/// Returns the NOTIFY payload of `c`: a letter, ':' and the id.
std::string encode_change(const change& c);

/// Reads a NOTIFY payload; nullopt for anything this version does not know
/// (a newer process may send more kinds).
std::optional<change> decode_change(std::string_view payload);

/// Returns the channel of the database `u` points at: one per schema, so
/// deployments (or test runs) sharing a database in separate schemas do
/// not hear each other.
std::string notify_channel(const database_url& u);

} // namespace mailassay::storage
