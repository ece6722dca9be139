#include "config/risk_files.hpp"

#include "core/smtp/host_limits.hpp"

#include <fstream>
#include <iterator>

namespace mailassay::config {

namespace {

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return false;
  out.assign(std::istreambuf_iterator<char>{in}, {});
  return true;
}

} // namespace

core::expected<std::shared_ptr<const core::risk::lists>>
load_risk_lists(const risk_settings& cfg) {
  struct shipped {
    const char* file;
    std::string text;
  };
  shipped files[] = {{"disposable.txt", {}},     {"disposable_allow.txt", {}},
                     {"free_providers.txt", {}}, {"roles.txt", {}},
                     {"tlds.txt", {}},           {"first_names.txt", {}},
                     {"last_names.txt", {}},     {"common_words.txt", {}}};
  for (auto& f : files) {
    auto path = cfg.data_dir + "/" + f.file;
    if (!read_file(path, f.text))
      return core::make_error(core::errc::bad_request,
                              "cannot read risk list " + path +
                                  " (set MAILASSAY_RISK_DATA_DIR)");
  }
  std::string extras[3];
  const std::string* extra_paths[] = {
      &cfg.extra_disposable_file, &cfg.extra_free_file, &cfg.extra_roles_file};
  for (int i = 0; i < 3; ++i)
    if (!extra_paths[i]->empty() && !read_file(*extra_paths[i], extras[i]))
      return core::make_error(core::errc::bad_request,
                              "cannot read risk file " + *extra_paths[i]);
  core::risk::list_texts texts;
  texts.disposable = files[0].text;
  texts.disposable_allow = files[1].text;
  texts.free_providers = files[2].text;
  texts.roles = files[3].text;
  texts.tlds = files[4].text;
  texts.first_names = files[5].text;
  texts.last_names = files[6].text;
  texts.common_words = files[7].text;
  texts.extra_disposable = extras[0];
  texts.extra_free_providers = extras[1];
  texts.extra_roles = extras[2];
  return std::make_shared<const core::risk::lists>(
      core::risk::lists_from_texts(texts));
}

core::expected<std::shared_ptr<const core::provider::table>>
load_provider_table(const risk_settings& cfg) {
  auto path = cfg.providers_file.empty() ? cfg.data_dir + "/providers.txt"
                                         : cfg.providers_file;
  std::string text;
  if (!read_file(path, text))
    return core::make_error(core::errc::bad_request,
                            "cannot read provider table " + path +
                                " (set MAILASSAY_RISK_PROVIDERS_FILE)");
  auto table = core::provider::table::parse(text);
  if (!table)
    return core::make_error(core::errc::bad_request,
                            path + ": " + table.error_value().message);
  return std::make_shared<const core::provider::table>(std::move(*table));
}

core::expected<core::unit>
check_provider_limits(const smtp_settings& smtp,
                      const core::provider::table& known) {
  auto limits = core::smtp::parse_provider_limits(smtp.provider_limits);
  if (!limits)
    return std::move(limits).error_value();
  auto unknown = core::smtp::unknown_providers(*limits, known);
  if (unknown.empty())
    return core::unit{};
  auto list = [](const std::vector<std::string>& xs) {
    std::string out;
    for (const auto& x : xs)
      out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  return core::make_error(
      core::errc::bad_request,
      "smtp.provider_limits names a provider the provider table does not "
      "know: " +
          list(unknown) + " (known: " + list(known.names()) + ")");
}

} // namespace mailassay::config
