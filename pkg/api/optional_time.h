// Time and OptionalTime. OptionalTime is a metav1.Time that may be absent (creationTimestamp,
// deletionTimestamp, a condition's lastTransitionTime) in 8 bytes instead of std::optional<Time>'s
// 16: "absent" is the sentinel Time::min(), an instant no decoded time takes, because the
// decoders saturate times below Time's range to kMinTime, one nanosecond later (pkg/api/time.h).
// Every cached pod holds three of these (docs/design/compact-pod-record.md). The API is
// std::optional<Time>'s (has_value / bool / * / value / value_or / reset / = nullopt, ordering
// with nullopt first), and it converts from and to std::optional<Time>. Thread-compatible.
#pragma once

#include <chrono>
#include <compare>
#include <optional>
#include <stdexcept>
#include <type_traits>

namespace kcm::api {

using Time = std::chrono::system_clock::time_point;

// The earliest time a value can hold; Time::min() itself means "absent".
inline constexpr Time kMinTime = Time::min() + Time::duration(1);

class OptionalTime {
 public:
  constexpr OptionalTime() = default;
  constexpr OptionalTime(std::nullopt_t) {}  // NOLINT(google-explicit-constructor)
  // Time::min() (the sentinel) is stored as kMinTime, so a set value never reads as absent.
  constexpr OptionalTime(Time t) : t_(t == kAbsent ? kMinTime : t) {}  // NOLINT
  // A coarser time point (e.g. floored to seconds), as std::optional<Time> accepts one.
  template <typename Duration,
            typename = std::enable_if_t<!std::is_same_v<Duration, Time::duration> &&
                                        std::is_convertible_v<Duration, Time::duration>>>
  constexpr OptionalTime(std::chrono::time_point<Time::clock, Duration> t)  // NOLINT
      : OptionalTime(Time(t)) {}
  constexpr OptionalTime(const std::optional<Time>& t)  // NOLINT
      : OptionalTime(t ? OptionalTime(*t) : OptionalTime()) {}

  constexpr bool has_value() const { return t_ != kAbsent; }
  constexpr explicit operator bool() const { return has_value(); }
  // Like std::optional's: the value; undefined (here Time::min()) when absent.
  constexpr const Time& operator*() const { return t_; }
  constexpr const Time* operator->() const { return &t_; }
  const Time& value() const {
    if (!has_value()) throw std::bad_optional_access();
    return t_;
  }
  constexpr Time value_or(Time other) const { return has_value() ? t_ : other; }
  constexpr void reset() { t_ = kAbsent; }
  constexpr operator std::optional<Time>() const {  // NOLINT(google-explicit-constructor)
    return has_value() ? std::optional<Time>(t_) : std::nullopt;
  }

  // As std::optional: equal when both absent or both hold the same time; absent orders first
  // (which the sentinel, the smallest time, gives for free).
  friend constexpr bool operator==(const OptionalTime& a, const OptionalTime& b) = default;
  friend constexpr auto operator<=>(const OptionalTime& a, const OptionalTime& b) = default;
  friend constexpr bool operator==(const OptionalTime& a, std::nullopt_t) { return !a; }
  friend constexpr bool operator==(const OptionalTime& a, const Time& b) {
    return a.has_value() && a.t_ == b;
  }

 private:
  static constexpr Time kAbsent = Time::min();
  Time t_ = kAbsent;
};

static_assert(sizeof(OptionalTime) == sizeof(Time));

}  // namespace kcm::api
