#pragma once

// One row of the settings registry and the builders that make rows. A row
// names its field once, through a projection (MAILASSAY_FIELD); the builder
// that parses the field's text also reads the field's type, and only a
// `live<T>` field (config/live.hpp) gets a reload copy. A row has no
// "reloads" flag to get wrong: a restart-only field cannot be reloaded, and
// a field a reload must change cannot be forgotten, because both follow
// from the type in config/settings.hpp at compile time.

#include "config/settings.hpp"
#include "core/limits/client_ip.hpp"
#include "core/smtp/host_limits.hpp"

#include <charconv>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace mailassay::config::keys {

/// Applies a setting's text to the settings; returns why it is refused, or
/// "" when it was taken.
using setter = std::function<std::string(settings&, const std::string&)>;

/// How a row writes its field: from text (start-up, every reload), and, for
/// a `live<T>` field only, by copy from freshly loaded settings on a reload.
class field_io {
public:
  /// Binds `parse` to the field `field` projects the settings to
  /// (`[](auto& s) -> auto& { return s.section.key; }`); the field's type
  /// decides whether a reload copies it.
  template <class Field>
  field_io(Field field, setter parse) : parse_(std::move(parse)) {
    using type =
        std::remove_cvref_t<decltype(field(std::declval<settings&>()))>;
    if constexpr (is_live_v<type>)
      reload_ = [field](settings& live, const settings& next) {
        field(live) = field(next);
      };
  }
  /// Applies the text `v` to `s`; returns why it is refused, or "".
  std::string apply(settings& s, const std::string& v) const {
    return parse_(s, v);
  }
  /// Whether a running server takes the field's new value on a reload.
  bool reloadable() const { return static_cast<bool>(reload_); }
  /// Copies the field from `next` into `live` if it is reloadable.
  void reload(settings& live, const settings& next) const {
    if (reload_)
      reload_(live, next);
  }

private:
  setter parse_;
  std::function<void(settings&, const settings&)> reload_;
};

/// One setting: where it lives, its check (the field_io refuses a bad
/// value with a reason), and how it shows. The same table serves the
/// start-up, a reload and `mailassay config`.
struct key_spec {
  std::string section;
  std::string key;
  std::string description;
  field_io io;
  std::function<std::string(const settings&)> show;
};

/// `s` without leading and trailing white space.
std::string trim(std::string s);
/// The comma-separated items of `v`, trimmed, empty ones dropped.
std::vector<std::string> split_list(const std::string& v);

/// An integer field between `min` and `max`.
template <class Field>
field_io integer(Field field, std::int64_t min, std::int64_t max) {
  return {
      field, [=](settings& s, const std::string& v) -> std::string {
        std::int64_t n = 0;
        auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec != std::errc{} || ptr != v.data() + v.size())
          return "expected an integer, got \"" + v + "\"";
        if (n < min || n > max)
          return "must be between " + std::to_string(min) + " and " +
                 std::to_string(max) + ", got " + v;
        auto& target = field(s);
        target =
            static_cast<value_of_t<std::remove_reference_t<decltype(target)>>>(
                n);
        return {};
      }};
}

/// A true/false field (also 1/0, yes/no, on/off).
template <class Field>
field_io boolean(Field field) {
  return {field, [=](settings& s, const std::string& v) -> std::string {
            if (v == "true" || v == "1" || v == "yes" || v == "on")
              field(s) = true;
            else if (v == "false" || v == "0" || v == "no" || v == "off")
              field(s) = false;
            else
              return "expected true or false, got \"" + v + "\"";
            return {};
          }};
}

/// A text field; `check` (if any) refuses a bad value with a reason.
template <class Field>
field_io text(Field field,
              std::function<std::string(const std::string&)> check = nullptr) {
  return {field, [=](settings& s, const std::string& v) -> std::string {
            if (check)
              if (auto err = check(v); !err.empty())
                return err;
            field(s) = v;
            return {};
          }};
}

/// A comma-separated list field; `check` (if any) refuses a bad list.
template <class Field>
field_io
list(Field field,
     std::function<std::string(const std::vector<std::string>&)> check =
         nullptr) {
  return {field, [=](settings& s, const std::string& v) -> std::string {
            auto items = split_list(v);
            if (check)
              if (auto err = check(items); !err.empty())
                return err;
            field(s) = std::move(items);
            return {};
          }};
}

/// A list of CIDRs (`allow_private_targets`).
template <class Field>
field_io cidr_list(Field field) {
  return list(field, [](const std::vector<std::string>& items) {
    auto nets = core::limits::trusted_networks::parse(items);
    return nets ? std::string{} : nets.error_value().message;
  });
}

/// A list of per-provider limits, each "name=sessions[/per_second[/rcpts]]".
template <class Field>
field_io provider_limit_list(Field field) {
  return list(field, [](const std::vector<std::string>& items) {
    auto parsed = core::smtp::parse_provider_limits(items);
    return parsed ? std::string{} : parsed.error_value().message;
  });
}

/// A comma-separated list of integers, each between `min` and `max`.
template <class Field>
field_io integer_list(Field field, std::int64_t min, std::int64_t max) {
  return {field, [=](settings& s, const std::string& v) -> std::string {
            std::vector<std::int64_t> items;
            for (auto& t : split_list(v)) {
              std::int64_t n = 0;
              auto [ptr, ec] =
                  std::from_chars(t.data(), t.data() + t.size(), n);
              if (ec != std::errc{} || ptr != t.data() + t.size() || n < min ||
                  n > max)
                return "expected comma-separated integers between " +
                       std::to_string(min) + " and " + std::to_string(max) +
                       ", got \"" + t + "\"";
              items.push_back(n);
            }
            field(s) = std::move(items);
            return {};
          }};
}

/// A STARTTLS policy field: never, opportunistic or required.
template <class Field>
field_io tls_policy(Field field) {
  return {field, [=](settings& s, const std::string& v) -> std::string {
            auto policy = core::smtp::parse_tls_policy(v);
            if (!policy)
              return "expected never, opportunistic or required";
            field(s) = *policy;
            return {};
          }};
}

/// A text value as `mailassay config` shows it.
std::string show(const std::string& v);
/// A flag: true or false.
std::string show(bool v);
/// A STARTTLS policy by name.
std::string show(core::smtp::tls_policy v);
/// A list, comma-separated.
std::string show(const std::vector<std::string>& v);
/// A list of integers, comma-separated.
std::string show(const std::vector<std::int64_t>& v);
/// A number.
template <class Int>
requires std::is_arithmetic_v<Int> std::string show(Int v) {
  return std::to_string(v);
}
/// A live setting as the value it holds now.
template <class T>
std::string show(const live<T>& v) {
  return show(v.get());
}

} // namespace mailassay::config::keys

/// The member `path` of the settings, for a row's builder.
#define MAILASSAY_FIELD(path)                                                  \
  [](auto& s) -> auto& {                                                       \
    return s.path;                                                             \
  }
/// How the member `path` of the settings shows, for a row.
#define MAILASSAY_SHOW(path)                                                   \
  [](const ::mailassay::config::settings& s) { return show(s.path); }
