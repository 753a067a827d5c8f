// Result<T>: a value or a one-line error message. zonelab answers bad input
// with values, not exceptions, so every parser returns one of these.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "zonelab/assert.h"

namespace zonelab {

struct Error {
  std::string message;
};

// Text from outside (a bad value, a parser's message) made safe for a
// one-line error: control characters become \xNN and long text is cut.
inline std::string one_line(std::string_view text, size_t max_chars = 200) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : text.substr(0, max_chars)) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  if (text.size() > max_chars) out += "...";
  return out;
}

template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}              // NOLINT: implicit by design
  Result(Error error) : error_(std::move(error.message)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const T& value() const& {
    ZL_ASSERT(ok());
    return *value_;
  }
  T& value() & {
    ZL_ASSERT(ok());
    return *value_;
  }
  T&& value() && {
    ZL_ASSERT(ok());
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
