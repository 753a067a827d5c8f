// I/O traces to replay against a device (docs/replay.md): fio's iolog
// versions 2 and 3, and blkparse's text output of a blktrace.
//
//   fio iolog v2   "fio version 2 iolog", then "FILE add|open|close" and
//                  "FILE read|write|trim|sync|datasync OFFSET LENGTH"
//                  (bytes), and "FILE wait USEC 0" (a pause).
//   fio iolog v3   "fio version 3 iolog", then the same with a first field,
//                  the microseconds since the log began ("wait" is not
//                  part of it, as in fio).
//   blkparse       blkparse's default lines, "MAJ,MIN CPU SEQ SECONDS PID
//                  ACTION RWBS SECTOR + COUNT [PROCESS]": the requests as
//                  the block layer queued them (action Q), in 512-byte
//                  sectors; RWBS's R/W/D/F give read, write, discard,
//                  flush. Other actions and lines (the summary) are skipped.
//
// Parsing is bounded: a line over kTraceLineMax bytes, more than
// kTraceOpsMax operations, a number that does not fit, or an unknown action
// is refused with its line number; nothing is guessed.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "zonelab/result.h"

namespace zonelab {

enum class TraceFormat : uint8_t { kIologV2, kIologV3, kBlkparse };
std::string_view trace_format_name(TraceFormat format);

enum class TraceOpKind : uint8_t { kRead, kWrite, kTrim, kFlush, kWait };
std::string_view trace_op_name(TraceOpKind kind);

struct TraceOp {
  TraceOpKind kind = TraceOpKind::kRead;
  // Since the trace's first operation, when the trace has times (iolog v3,
  // blkparse); 0 otherwise.
  uint64_t time_ns = 0;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  uint64_t wait_ns = 0;  // kWait (iolog v2)
  uint32_t line = 0;     // in the trace file, for messages
};

struct Trace {
  TraceFormat format = TraceFormat::kIologV2;
  bool timed = false;  // the operations carry times
  std::vector<TraceOp> ops;
  uint64_t skipped_lines = 0;  // blkparse lines that are not queued requests
};

inline constexpr size_t kTraceLineMax = 4096;
inline constexpr size_t kTraceOpsMax = 50'000'000;

// Reads a trace; the format is told by its first line (an iolog header) or
// else taken as blkparse text.
Result<Trace> parse_trace(std::istream& in);
Result<Trace> parse_trace_text(std::string_view text);
Result<Trace> read_trace_file(const std::string& path);

}  // namespace zonelab
