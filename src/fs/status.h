// What a file-system operation answers: success, or an error of a kind the
// RocksDB adapter maps onto an IOStatus (NotFound, NoSpace, Corruption, ...)
// and the CLI onto an exit code, with a one-line message.
#pragma once

#include <string>
#include <utility>

#include "zonelab/assert.h"
#include "zonelab/result.h"

namespace zonelab::fs {

enum class Code : uint8_t {
  kOk,
  kNotFound,      // no such file or directory
  kExists,        // the name is taken
  kNotDirectory,  // a path's parent is not a directory
  kIsDirectory,   // a file operation on a directory
  kNotEmpty,      // a directory that still holds names
  kInvalid,       // a bad argument (a name too long, an offset past the end)
  kNoSpace,       // no zone can take the data, even after garbage collection
  kBusy,          // a resource is held (a locked file, every active zone in use)
  kCorruption,    // the on-device metadata does not check
  kIoError,       // the device failed a command
};

const char* code_name(Code code);

class FsStatus {
 public:
  FsStatus() = default;
  // The message is one line whatever it quotes: a file name's control
  // characters (names are any bytes but '/' and NUL) become \xNN.
  FsStatus(Code code, std::string_view message)
      : code_(code), message_(one_line(message, std::string_view::npos)) {
    ZL_ASSERT(code != Code::kOk);
  }
  static FsStatus ok() { return {}; }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or an FsStatus.
template <typename T>
class FsResult {
 public:
  FsResult(T value) : value_(std::move(value)) {}           // NOLINT: implicit by design
  FsResult(FsStatus status) : status_(std::move(status)) {  // NOLINT
    ZL_ASSERT(!status_.is_ok());
  }
  bool ok() const { return status_.is_ok(); }
  explicit operator bool() const { return ok(); }
  const FsStatus& status() const { return status_; }
  T& value() & {
    ZL_ASSERT(ok());
    return value_;
  }
  const T& value() const& {
    ZL_ASSERT(ok());
    return value_;
  }
  T&& value() && {
    ZL_ASSERT(ok());
    return std::move(value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

 private:
  T value_{};
  FsStatus status_;
};

}  // namespace zonelab::fs
