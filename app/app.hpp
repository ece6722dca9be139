#pragma once

#include "actors/validation/validator.hpp"
#include "config/settings.hpp"
#include "core/base/expected.hpp"
#include "net/egress_audit.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mailassay::actors {
class rate_limiter;
class batch_runner;
namespace smtp {
class scheduler;
} // namespace smtp
} // namespace mailassay::actors

namespace mailassay::app {

/// Loads settings from `--config` (or MAILASSAY_CONFIG) and the
/// environment; prints the error and exits 2 when they are invalid.
config::settings load_settings_or_exit(const std::optional<std::string>& file);

/// Returns the server key (64 hex digits) sealing the webhook signing
/// secrets and the access-token signing keys in the database: configured,
/// else read from (or generated into, mode 0600) `webhooks.secret_key_file`.
/// Exits 2 when the file holds something else or cannot be written.
std::string webhook_key_or_exit(const config::settings& cfg);

/// Logs a warning for each file holding secrets or customers' data (the
/// SQLite database and its -wal/-shm, the server key file) that its group
/// or others may read or write (docs/security.md).
void warn_exposed_files(const config::settings& cfg);

/// Current time as Unix seconds.
std::int64_t unix_now();

/// Builds the validation pipeline (risk lists, DNS resolver); the error
/// (its message what to print) when a list or the resolver setting is bad.
core::expected<std::shared_ptr<actors::validation::validator>>
make_validator(const config::settings& cfg);

/// `make_validator`, printing the error and exiting 2 when it fails: for a
/// command that has started no thread yet.
std::shared_ptr<actors::validation::validator>
validator_or_exit(const config::settings& cfg);

/// Starts the DNS resolver the settings describe; the error when the
/// provider table, the provider limits or the server list is bad.
core::expected<std::shared_ptr<net::dns_resolver>>
make_resolver(const config::settings& cfg);

/// `make_resolver`, printing the error and exiting 2 when it fails: for a
/// command that has started no thread yet.
std::shared_ptr<net::dns_resolver>
resolver_or_exit(const config::settings& cfg);

/// The egress audit's settings: the SMTP identity (smtp.helo or the host
/// name it defaults to), port, proxy, source address and private targets,
/// and the `[egress]` lists. Exits 2 on a bad smtp.allow_private_targets.
net::egress_audit_config egress_config(const config::settings& cfg);

/// `mailassay doctor`: audits the egress of SMTP probes and prints one line
/// per check, or with `json` one JSON object; returns 0 when no check
/// failed, 1 otherwise.
int doctor(const config::settings& cfg, bool json);

/// The address parser's options the settings ask for.
core::syntax::options syntax_options(const config::settings& cfg);

/// `mailassay check`: validates each address (or stdin lines for "-") and
/// prints JSON lines or a table.
int check(const config::settings& cfg, const std::vector<std::string>& inputs,
          bool table);

/// Options of `mailassay batch`.
struct batch_options {
  std::string file; ///< CSV path, or "-" for stdin.
  std::string out;  ///< Results CSV path; empty or "-": stdout.
  bool smtp = false;
  bool deduplicate = true;
  std::string email_column;
  bool progress = false; ///< Draw the progress bar even without a terminal.
};

/// `mailassay batch`: the batch pipeline (CSV intake, validation, export)
/// run locally, with a progress bar on stderr.
int batch(const config::settings& cfg, const batch_options& opt);

/// `mailassay serve`: runs until SIGINT/SIGTERM; SIGHUP reloads the
/// settings from `file` (or MAILASSAY_CONFIG) and the environment.
int serve(config::settings& cfg, const std::optional<std::string>& file);

/// `mailassay status`: reads /metrics of the running server at `url`
/// (http://host:port; empty: the configured `http.address` and
/// `http.port`, 127.0.0.1 for a wildcard address) and prints its pool
/// gauges as tables. With `health`, reads only its /health and prints the
/// body: exit 0 when it answers 200 within 3 s (the container
/// HEALTHCHECK). Returns 1 when the server cannot be read (or is not
/// healthy), 2 for a URL that is not http://.
int status(const config::settings& cfg, const std::string& url, bool health);

/// What a reload changes in a running server.
struct reload_targets {
  /// The settings the server's threads read (its live values change).
  config::settings* current = nullptr;
  /// Takes the new default per-IP limit.
  actors::rate_limiter* limiter = nullptr;
  /// Takes the new batch pacing.
  actors::batch_runner* batches = nullptr;
  /// Takes the new per-host politeness; null when SMTP is off.
  actors::smtp::scheduler* scheduler = nullptr;
};

/// What a reload did.
struct reload_report {
  /// The settings did not load (a bad value): nothing changed.
  bool refused = false;
  /// Why they were refused (the setting and what is wrong).
  std::string why;
  /// The file read, "(environment)" without one.
  std::string config;
  /// Settings applied, "name before -> after".
  std::vector<std::string> applied;
  /// Changed settings that take a restart (their old values stay).
  std::vector<std::string> restart;
  /// A part of the server that did not take its new values; empty: none.
  std::string failure;
};

/// Reloads the settings (SIGHUP, `mailassay admin reload`): reads `file`
/// (or MAILASSAY_CONFIG) and the environment again and checks them as at
/// start-up. Invalid: nothing changes and the log says why
/// (`config_reload_refused`). Valid: applies per-host SMTP politeness, the
/// rate limits, the log level and the batch pacing (`config_reloaded` lists
/// what changed) and names the changed settings that take a restart
/// (`config_needs_restart`). Not safe to call from two threads at once.
reload_report reload(const std::optional<std::string>& file,
                     const reload_targets& t);

/// The report as lines for an operator: "reloaded FILE", "applied: ...",
/// "needs a restart (old value kept): ...", or "refused: WHY".
std::string to_text(const reload_report& r);

/// `mailassay admin create-org`.
int admin_create_org(const config::settings& cfg, const std::string& name,
                     const std::string& email, const std::string& password,
                     std::optional<std::int64_t> credits);

/// `mailassay admin grant-credits`.
int admin_grant_credits(const config::settings& cfg, const std::string& org,
                        std::int64_t amount, const std::string& reason);

/// `mailassay admin list-orgs`.
int admin_list_orgs(const config::settings& cfg, bool json);

/// `mailassay admin reload`: asks the server listening on the control
/// socket `socket` (empty: `control.socket`) to reload its settings and
/// prints its report. Returns 0 when applied, 1 when refused or when no
/// server answers, 2 without a socket to ask.
int admin_reload(const config::settings& cfg, const std::string& socket);

/// `mailassay admin rotate-jwt-key`.
int admin_rotate_jwt_key(const config::settings& cfg, bool drop_old);

} // namespace mailassay::app
