// The composition root: parses the command line and starts one command.
#include "app/app.hpp"
#include "http/router.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

using namespace mailassay;

int main(int argc, char** argv) {
  CLI::App cli{"mailassay — self-hostable email validation service"};
  cli.set_version_flag("--version", MAILASSAY_VERSION);
  cli.require_subcommand(1);
  std::optional<std::string> config_file;
  cli.add_option("-c,--config", config_file,
                 "Configuration file (also MAILASSAY_CONFIG); environment "
                 "variables MAILASSAY_<SECTION>_<KEY> override it");

  auto* serve = cli.add_subcommand("serve", "Run the HTTP service");

  auto* admin = cli.add_subcommand("admin", "Operator commands");
  admin->require_subcommand(1);
  std::string org_name, email, password, org_id, reason = "operator grant";
  std::optional<std::int64_t> credits;
  std::int64_t amount = 0;
  bool json = false;
  auto* create_org = admin->add_subcommand(
      "create-org", "Create an organization with its owner");
  create_org->add_option("--name", org_name, "Organization name")->required();
  create_org->add_option("--email", email, "Owner email")->required();
  create_org
      ->add_option("--password", password,
                   "Owner password (or MAILASSAY_ADMIN_PASSWORD)")
      ->envname("MAILASSAY_ADMIN_PASSWORD")
      ->required();
  create_org->add_option("--credits", credits,
                         "Starting credits (default credits.signup_grant)");
  auto* grant =
      admin->add_subcommand("grant-credits", "Add credits to an organization");
  grant->add_option("--org", org_id, "Organization id")->required();
  grant->add_option("--amount", amount, "Credits to add")->required();
  grant->add_option("--reason", reason, "Ledger reference");
  auto* list = admin->add_subcommand("list-orgs", "List organizations");
  list->add_flag("--json", json, "One JSON object per line");
  bool drop_old_keys = false;
  auto* rotate = admin->add_subcommand(
      "rotate-jwt-key",
      "Make a fresh key sign access tokens for every process sharing the "
      "database; tokens signed before stay valid until they expire");
  rotate->add_flag("--drop-old", drop_old_keys,
                   "Also refuse every access token signed before (a leaked "
                   "key); users refresh or log in again");

  std::string control_socket;
  auto* reload_cmd = admin->add_subcommand(
      "reload",
      "Make the running server on this machine reload its settings (as "
      "SIGHUP does) and print what changed, what needs a restart, or why the "
      "file was refused");
  reload_cmd->add_option("--socket", control_socket,
                         "The server's control socket (default: "
                         "control.socket of the configuration)");

  auto* check = cli.add_subcommand(
      "check", "Validate addresses without the server (JSON Lines)");
  std::vector<std::string> addresses;
  std::string format = "json";
  check->add_option("addresses", addresses, "Addresses, or - for stdin")
      ->required();
  check->add_option("--format", format, "json (default) or table")
      ->check(CLI::IsMember({"json", "table"}));

  auto* batch = cli.add_subcommand(
      "batch",
      "Validate a CSV file of addresses locally and write results CSV");
  app::batch_options batch_opt;
  bool no_dedupe = false;
  batch->add_option("file", batch_opt.file, "CSV file, or - for stdin")
      ->required();
  batch->add_option("--out", batch_opt.out, "Results CSV (default stdout)");
  batch->add_flag("--smtp", batch_opt.smtp, "Probe mailboxes over SMTP");
  batch->add_flag("--no-dedupe", no_dedupe, "Keep duplicate addresses");
  batch->add_option("--email-column", batch_opt.email_column,
                    "Column holding the addresses (default: email, else the "
                    "first)");
  batch->add_flag("--progress", batch_opt.progress,
                  "Draw the progress bar even when stderr is not a terminal");

  auto* status = cli.add_subcommand(
      "status",
      "Print the live pool gauges of a running server (its /metrics)");
  std::string status_url;
  status->add_option("--url", status_url,
                     "The server, http://host:port (default: http.address "
                     "and http.port of the configuration)");
  bool status_health = false;
  status->add_flag("--health", status_health,
                   "Only check /health: exit 0 when it answers 200 within "
                   "3 s, else 1 (the container image's HEALTHCHECK)");

  auto* doctor_cmd = cli.add_subcommand(
      "doctor",
      "Audit the egress of SMTP probes (HELO name, reverse DNS, blocklists, "
      "port 25, a greeting, the sender's domain) with the configuration of "
      "serve; exit 1 when a check fails");
  bool doctor_json = false;
  doctor_cmd->add_flag("--json", doctor_json,
                       "One JSON object: {ok, egressAddress, checks}");

  auto* routes = cli.add_subcommand("routes", "Print the HTTP route table");
  auto* cfg_cmd = cli.add_subcommand(
      "config", "Print every setting with its variable and default");

  CLI11_PARSE(cli, argc, argv);

  if (*routes) {
    for (auto& r : http::routes())
      std::cout << r.method << " " << r.pattern << "\n";
    return 0;
  }
  if (*cfg_cmd) {
    // "[reload]": a running server applies it on SIGHUP; "[restart]":
    // it takes a restart (pool sizes, sockets, storage).
    for (auto& d : config::describe())
      std::cout << d.env_name << "=" << d.default_value << "\t# "
                << (d.reloadable ? "[reload] " : "[restart] ") << d.description
                << "\n";
    return 0;
  }
  if (*reload_cmd && !control_socket.empty())
    // The server reads its own file: an invalid one is its to refuse (and
    // its report says why), not a reason for this command to stop.
    return app::admin_reload(config::settings{}, control_socket);
  auto cfg = app::load_settings_or_exit(config_file);
  if (*serve)
    return app::serve(cfg, config_file);
  if (*status)
    return app::status(cfg, status_url, status_health);
  if (*check)
    return app::check(cfg, addresses, format == "table");
  if (*doctor_cmd)
    return app::doctor(cfg, doctor_json);
  if (*batch) {
    batch_opt.deduplicate = !no_dedupe;
    return app::batch(cfg, batch_opt);
  }
  if (*create_org)
    return app::admin_create_org(cfg, org_name, email, password, credits);
  if (*grant)
    return app::admin_grant_credits(cfg, org_id, amount, reason);
  if (*list)
    return app::admin_list_orgs(cfg, json);
  if (*rotate)
    return app::admin_rotate_jwt_key(cfg, drop_old_keys);
  if (*reload_cmd)
    return app::admin_reload(cfg, control_socket);
  return 0;
}
