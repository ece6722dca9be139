#pragma once

#include <optional>
#include <string>
#include <vector>

#include "actors/validation/validator.hpp"
#include "config/settings.hpp"

namespace mailassay::app {

/// Loads settings from `--config` (or MAILASSAY_CONFIG) and the
/// environment; prints the error and exits 2 when they are invalid.
config::settings load_settings_or_exit(const std::optional<std::string>& file);

/// Returns the JWT secret: configured, else read from (or generated into)
/// `auth.jwt_secret_file`. Exits 2 when the file cannot be written.
std::string jwt_secret_or_exit(const config::settings& cfg);

/// Current time as Unix seconds.
std::int64_t unix_now();

/// Builds the validation pipeline (risk lists, DNS resolver); prints the
/// error and exits 2 when a list or the resolver setting is bad.
std::shared_ptr<actors::validation::validator>
validator_or_exit(const config::settings& cfg);

/// The address parser's options the settings ask for.
core::syntax::options syntax_options(const config::settings& cfg);

/// `mailassay check`: validates each address (or stdin lines for "-") and
/// prints JSON lines or a table.
int check(const config::settings& cfg, const std::vector<std::string>& inputs,
          bool table);

/// Options of `mailassay batch`.
struct batch_options {
  std::string file;   ///< CSV path, or "-" for stdin.
  std::string out;    ///< Results CSV path; empty or "-": stdout.
  bool smtp = false;
  bool deduplicate = true;
  std::string email_column;
  bool progress = false; ///< Draw the progress bar even without a terminal.
};

/// `mailassay batch`: the batch pipeline (CSV intake, validation, export)
/// run locally, with a progress bar on stderr.
int batch(const config::settings& cfg, const batch_options& opt);

/// `mailassay serve`.
int serve(const config::settings& cfg);

/// `mailassay admin create-org`.
int admin_create_org(const config::settings& cfg, const std::string& name,
                     const std::string& email, const std::string& password,
                     std::optional<std::int64_t> credits);

/// `mailassay admin grant-credits`.
int admin_grant_credits(const config::settings& cfg, const std::string& org,
                        std::int64_t amount, const std::string& reason);

/// `mailassay admin list-orgs`.
int admin_list_orgs(const config::settings& cfg, bool json);

} // namespace mailassay::app
