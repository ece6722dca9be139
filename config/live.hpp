#pragma once

// A setting that a running server changes on a reload is held in a `live<T>`
// and nothing else is: the registry (config/key_spec.hpp) derives from a
// field's type whether a reload copies it, so the type is the one place that
// says "reloads" and a reload cannot reach a plain field.

#include <atomic>
#include <concepts>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <utility>

namespace mailassay::config {

/// A setting a running server changes on a reload (SIGHUP) while other
/// threads may read it: a copy of the value is taken under a lock, so a
/// reader sees the old value or the new one, never a torn one. Reads like
/// the `T` it holds.
template <class T>
class live {
public:
  /// Holds a default `T`.
  live() = default;
  /// Holds `T(v)`; a `live<std::string>` initialises from a literal.
  template <class U>
  requires(!std::same_as<std::remove_cvref_t<U>, live> &&
           std::constructible_from<T, U&&>) live(U&& v)
      : v_(std::forward<U>(v)) {}
  /// Copies the value `o` holds now.
  live(const live& o) : v_(o.get()) {}
  /// Takes the value `o` holds now.
  live& operator=(const live& o) {
    if (this != &o)
      set(o.get());
    return *this;
  }
  /// Takes `v`.
  live& operator=(T v) {
    set(std::move(v));
    return *this;
  }
  /// Returns a copy of the value.
  operator T() const { return get(); }
  /// Returns a copy of the value.
  T get() const {
    std::lock_guard lock(m_);
    return v_;
  }
  /// Replaces the value.
  void set(T v) {
    std::lock_guard lock(m_);
    v_ = std::move(v);
  }
  /// Compares the value with `b`.
  friend bool operator==(const live& a, const T& b) { return a.get() == b; }

private:
  mutable std::mutex m_;
  T v_{};
};

/// A live number: loads and stores are atomic (relaxed: each value stands
/// alone), so readers on hot paths take no lock.
template <class T>
requires std::is_arithmetic_v<T>
class live<T> {
public:
  /// Holds `v`.
  live(T v = T{}) : v_(v) {}
  /// Copies the value `o` holds now.
  live(const live& o) : v_(o.get()) {}
  /// Takes the value `o` holds now.
  live& operator=(const live& o) {
    set(o.get());
    return *this;
  }
  /// Takes `v`.
  live& operator=(T v) {
    set(v);
    return *this;
  }
  /// Returns the value.
  operator T() const { return get(); }
  /// Returns the value.
  T get() const { return v_.load(std::memory_order_relaxed); }
  /// Replaces the value.
  void set(T v) { v_.store(v, std::memory_order_relaxed); }
  /// Compares the value with `b`.
  friend bool operator==(const live& a, const T& b) { return a.get() == b; }

private:
  std::atomic<T> v_;
};

/// The live integer most reloadable limits are.
using live_int = live<std::int64_t>;

/// Whether `T` is a `live<...>`: a setting a reload changes.
template <class T>
inline constexpr bool is_live_v = false;
/// A `live<T>` is.
template <class T>
inline constexpr bool is_live_v<live<T>> = true;

/// The value a setting of type `T` holds: `U` for a `live<U>`, else `T`.
template <class T>
struct value_of {
  /// `T` itself.
  using type = T;
};
/// `U` for a `live<U>`.
template <class U>
struct value_of<live<U>> {
  /// The held type.
  using type = U;
};
/// The value a setting of type `T` holds.
template <class T>
using value_of_t = typename value_of<T>::type;

} // namespace mailassay::config
