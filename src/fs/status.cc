// See status.h.
#include "fs/status.h"

namespace zonelab::fs {

const char* code_name(Code code) {
  switch (code) {
    case Code::kOk:
      return "ok";
    case Code::kNotFound:
      return "not found";
    case Code::kExists:
      return "exists";
    case Code::kNotDirectory:
      return "not a directory";
    case Code::kIsDirectory:
      return "is a directory";
    case Code::kNotEmpty:
      return "directory not empty";
    case Code::kInvalid:
      return "invalid argument";
    case Code::kNoSpace:
      return "no space";
    case Code::kBusy:
      return "busy";
    case Code::kCorruption:
      return "corruption";
    case Code::kIoError:
      return "I/O error";
  }
  return "unknown";
}

}  // namespace zonelab::fs
