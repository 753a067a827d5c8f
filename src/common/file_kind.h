// What a path that is not a regular file is, in a message that refuses or
// skips it.
#pragma once

#include <sys/stat.h>

namespace zonelab {

inline const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symlink";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device file";
  return "not a regular file";
}

}  // namespace zonelab
