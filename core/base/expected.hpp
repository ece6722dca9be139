#pragma once

#include <utility>
#include <variant>

#include "core/base/errc.hpp"

namespace mailassay::core {

/// A value of type T or an `error`; our stand-in for C++23 std::expected.
template <class T>
class expected {
public:
  expected(T value) : data_(std::in_place_index<0>, std::move(value)) {}
  expected(error err) : data_(std::in_place_index<1>, std::move(err)) {}

  /// Returns whether a value is held.
  bool has_value() const noexcept { return data_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const error& error_value() const& { return std::get<1>(data_); }
  error&& error_value() && { return std::get<1>(std::move(data_)); }

private:
  std::variant<T, error> data_;
};

/// The result of an operation that yields no value.
struct unit {};

} // namespace mailassay::core
