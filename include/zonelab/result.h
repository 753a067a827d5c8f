// Result<T>: a value or a one-line error message. zonelab answers bad input
// with values, not exceptions, so every parser returns one of these.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace zonelab {

struct Error {
  std::string message;
};

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}              // NOLINT: implicit by design
  Result(Error error) : error_(std::move(error.message)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T& value() & {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const std::string& error() const { return error_; }

 private:
  std::optional<T> value_;
  std::string error_;
};

// Status-like result for operations that return nothing.
class Outcome {
 public:
  Outcome() = default;
  Outcome(Error error) : error_(std::move(error.message)), failed_(true) {}  // NOLINT
  static Outcome success() { return Outcome(); }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
  bool failed_ = false;
};

}  // namespace zonelab
