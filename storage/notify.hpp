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

/// One process's acknowledgement that it applied a change (so the process
/// that made it may answer: actors/cluster_events.hpp).
struct change_ack {
  std::string node;    ///< The acknowledging process (random id).
  std::string payload; ///< The change's payload, as received.
};

/// Returns the payload of `a`: "a:", the node id, ':' and the change's
/// payload. Node ids hold no ':'.
std::string encode_ack(const change_ack& a);

/// Reads an acknowledgement; nullopt when `payload` is not one.
std::optional<change_ack> decode_ack(std::string_view payload);

/// Returns the `application_name` of the LISTEN connections of the
/// database `u` points at ("mailassay-listen", ':' and the schema, at most
/// 63 characters as PostgreSQL keeps them), so the processes listening can
/// be counted (`store::listening_processes`).
std::string listener_application_name(const database_url& u);

/// Returns the channel of the database `u` points at: one per schema, so
/// deployments (or test runs) sharing a database in separate schemas do
/// not hear each other.
std::string notify_channel(const database_url& u);

} // namespace mailassay::storage
