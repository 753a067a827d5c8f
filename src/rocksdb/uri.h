// The zonelab:// URI RocksDB programs name the file system by:
//
//   zonelab:///abs/path/dev.img[?key=value&key=value...]
//
// The path is the device image (absolute). Percent-escapes (%XX, as in any
// URI) are decoded in the path and in every key and value, after the URI is
// split at '?', '&' and '=': `stats=/tmp/a%26b.json` names "/tmp/a&b.json",
// `%20` is a space, '+' is '+'. An incomplete escape, or %00, is refused.
// Keys:
//   timing=modeled|off      real-time pacing of the device (off: every
//                           command completes at once; host overhead only)
//   time_scale=X            wall ns per device ns (2: the device runs half
//                           as fast), 0.001 to 1e6
//   scheduler=mq-deadline|none|zinc   the host I/O scheduler (mq-deadline
//                           by default: zone writes from several threads stay
//                           ordered)
//   pacing=auto|spin|sleep  the device thread spins near events (accurate
//                           when a core is free for it; takes one) or only
//                           sleeps (cheap; wake-ups late by the OS's timer
//                           slack); auto (the default) spins on machines of 4
//                           or more processors, sleeps on smaller ones, where
//                           a spinning device thread delays the very threads
//                           it serves
//   gc=on|off               garbage collection (off: a full device answers
//                           NoSpace)
//   write_behind=on|off     in each file, a full buffer goes to the device
//                           while the next fills (on, the default), or
//                           every write waits for the device (off)
//   stats=PATH|none         where statistics go at close and on SIGUSR1
//                           (default: IMAGE.stats.json)
//   create=PRESET           make the image with this preset, and the file
//                           system on it, when the image does not exist (a
//                           name that is no preset is refused either way)
//   finish_threshold=PCT    the file system's finish threshold when
//                           create= makes it
//   tenant=NAME             the tenant whose files these are (seed 001
//                           §IV-D): every path lies under /NAME, in the
//                           tenant's zone sets; several tenants share one
//                           session (one device) in a process
//   power_cut_after=N       test hook: the device loses power when it has
//                           taken N state-changing commands after the mount
//                           (Stack::power_cut_after); every I/O after fails
// RocksDB's own option parser takes '=' for itself in --env_uri; there the
// URI is written `id=zonelab:///...?key=value` (see docs/rocksdb.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/realtime.h"
#include "zonelab/result.h"

namespace zonelab::rocksdb_plugin {

inline constexpr std::string_view kUriScheme = "zonelab://";
inline constexpr size_t kUriBytesMax = 4096;

struct UriOptions {
  std::string image;  // absolute, normalized
  Timing timing = Timing::kModeled;
  double time_scale = 1.0;
  std::string scheduler = "mq-deadline";
  std::optional<bool> spin;  // pacing: spin, sleep, or nothing (auto)
  bool gc = true;
  bool write_behind = true;
  std::string stats_path;  // empty: none
  std::optional<std::string> create_preset;
  uint32_t finish_threshold_pct = 0;
  std::optional<uint64_t> power_cut_after;
  std::string tenant;  // empty: none (not the session's: see Session::open)

  bool operator==(const UriOptions&) const = default;
};

// Parses a URI; the error names the part that is wrong, as written.
Result<UriOptions> parse_uri(std::string_view uri);

// Whether the device thread spins: as the URI says, or (auto) when this
// machine has processors to spare.
bool spin_pacing(const UriOptions& options);

}  // namespace zonelab::rocksdb_plugin
