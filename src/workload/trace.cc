#include "workload/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "common/text_input.h"

namespace zonelab {

namespace {

constexpr std::string_view kIologV2 = "fio version 2 iolog";
constexpr std::string_view kIologV3 = "fio version 3 iolog";
constexpr uint64_t kSectorBytes = 512;

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool parse_u64(std::string_view text, uint64_t& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// "SECONDS.NANOSECONDS" as blkparse prints it (%T.%t), into nanoseconds.
bool parse_seconds(std::string_view text, uint64_t& ns) {
  size_t dot = text.find('.');
  uint64_t whole = 0;
  uint64_t frac = 0;
  std::string_view w = text.substr(0, dot);
  if (!parse_u64(w, whole) || whole > UINT64_MAX / 1'000'000'000ull) return false;
  uint64_t frac_ns = 0;
  if (dot != std::string_view::npos) {
    std::string_view f = text.substr(dot + 1);
    if (f.empty() || f.size() > 9 || !parse_u64(f, frac)) return false;
    frac_ns = frac;
    for (size_t k = f.size(); k < 9; ++k) frac_ns *= 10;
  }
  ns = whole * 1'000'000'000ull + frac_ns;
  return true;
}

class Parser {
 public:
  Result<Trace> run(std::istream& in) {
    std::string line;
    bool first = true;
    while (true) {
      auto got = next_line(in, line);
      if (!got) return Error{got.error()};
      if (!*got) break;
      if (first) {
        first = false;
        std::string_view head = trim(line);
        if (head == kIologV2 || head == kIologV3) {
          trace_.format = head == kIologV2 ? TraceFormat::kIologV2 : TraceFormat::kIologV3;
          trace_.timed = trace_.format == TraceFormat::kIologV3;
          continue;
        }
        if (head.starts_with("fio version")) {
          return Error{fmt::format("line 1: '{}': zonelab reads fio iolog versions 2 and 3",
                                   one_line(head))};
        }
        trace_.format = TraceFormat::kBlkparse;
        trace_.timed = true;
      }
      Outcome ok = trace_.format == TraceFormat::kBlkparse ? blkparse_line(line) : iolog_line(line);
      if (!ok) return Error{ok.error()};
    }
    if (first) return Error{"the trace is empty"};
    if (trace_.format == TraceFormat::kBlkparse && trace_.ops.empty()) {
      return Error{
          "no queued request (action Q) in the trace: is it blkparse's text output "
          "(blkparse -i TRACE)?"};
    }
    if (trace_.format != TraceFormat::kBlkparse &&
        std::all_of(trace_.ops.begin(), trace_.ops.end(),
                    [](const TraceOp& op) { return op.kind == TraceOpKind::kWait; })) {
      return Error{
          "no I/O in the iolog: it has no read, write, trim or sync action after its header"};
    }
    // Times from the first operation.
    if (trace_.timed && !trace_.ops.empty()) {
      uint64_t base = trace_.ops.front().time_ns;
      for (const auto& op : trace_.ops) base = std::min(base, op.time_ns);
      for (auto& op : trace_.ops) op.time_ns -= base;
    }
    return std::move(trace_);
  }

 private:
  static std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) {
      s.remove_suffix(1);
    }
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    return s;
  }
  static std::string one_line(std::string_view s) {
    std::string out(s.substr(0, 60));
    if (s.size() > 60) out += "...";
    return out;
  }

  // False at the end; a line over the bound is an error.
  Result<bool> next_line(std::istream& in, std::string& line) {
    line.clear();
    char c;
    bool any = false;
    while (in.get(c)) {
      any = true;
      if (c == '\n') break;
      if (line.size() >= kTraceLineMax) {
        return Error{fmt::format("line {}: longer than {} bytes", line_ + 1, kTraceLineMax)};
      }
      line.push_back(c);
    }
    if (!any) return false;
    ++line_;
    return true;
  }

  Outcome fail(const std::string& why) const {
    return Error{fmt::format("line {}: {}", line_, why)};
  }

  Outcome add(TraceOp op) {
    if (trace_.ops.size() >= kTraceOpsMax) {
      return fail(fmt::format("more than {} operations", kTraceOpsMax));
    }
    op.line = line_;
    trace_.ops.push_back(op);
    return {};
  }

  Outcome iolog_line(std::string_view raw) {
    auto f = fields_of(raw);
    if (f.empty()) return {};
    size_t at = 0;
    uint64_t time_us = 0;
    if (trace_.format == TraceFormat::kIologV3) {
      if (!parse_u64(f[0], time_us) || time_us > UINT64_MAX / 1000) {
        return fail(fmt::format("'{}' is not a time in microseconds", one_line(f[0])));
      }
      at = 1;
    }
    if (f.size() < at + 2) return fail("expected FILE ACTION [OFFSET LENGTH]");
    std::string_view action = f[at + 1];
    if (action == "add" || action == "open" || action == "close") {
      if (f.size() != at + 2) return fail(fmt::format("'{}' takes no offset", action));
      return {};
    }
    TraceOp op;
    op.time_ns = time_us * 1000;
    if (action == "read") {
      op.kind = TraceOpKind::kRead;
    } else if (action == "write") {
      op.kind = TraceOpKind::kWrite;
    } else if (action == "trim") {
      op.kind = TraceOpKind::kTrim;
    } else if (action == "sync" || action == "datasync") {
      op.kind = TraceOpKind::kFlush;
    } else if (action == "wait") {
      if (trace_.format == TraceFormat::kIologV3) {
        return fail("'wait' is not part of iolog version 3 (its times say when)");
      }
      op.kind = TraceOpKind::kWait;
    } else {
      return fail(
          fmt::format("'{}' is no iolog action (add, open, close, read, write, trim, "
                      "sync, datasync, wait)",
                      one_line(action)));
    }
    // sync may come without offset and length.
    if (op.kind == TraceOpKind::kFlush && f.size() == at + 2) return add(op);
    if (f.size() != at + 4) return fail("expected FILE ACTION OFFSET LENGTH");
    uint64_t offset = 0;
    uint64_t length = 0;
    if (!parse_u64(f[at + 2], offset)) {
      return fail(fmt::format("'{}' is not an offset in bytes", one_line(f[at + 2])));
    }
    if (!parse_u64(f[at + 3], length)) {
      return fail(fmt::format("'{}' is not a length in bytes", one_line(f[at + 3])));
    }
    if (op.kind == TraceOpKind::kWait) {
      // fio's wait: the offset field holds the pause in microseconds.
      if (offset > UINT64_MAX / 1000) return fail("the wait does not fit in 64-bit nanoseconds");
      op.wait_ns = offset * 1000;
      return add(op);
    }
    if (op.kind != TraceOpKind::kFlush) {
      if (length == 0) return fail("a read, write or trim of 0 bytes");
      if (offset > UINT64_MAX - length) return fail("offset + length does not fit in 64 bits");
    }
    op.offset_bytes = offset;
    op.length_bytes = length;
    return add(op);
  }

  Outcome blkparse_line(std::string_view raw) {
    auto f = fields_of(raw);
    // MAJ,MIN CPU SEQ TIME PID ACTION RWBS [SECTOR + COUNT [PROCESS]]
    if (f.size() < 7 || f[0].find(',') == std::string_view::npos || f[5] != "Q") {
      ++trace_.skipped_lines;
      return {};
    }
    uint64_t time_ns = 0;
    if (!parse_seconds(f[3], time_ns)) {
      return fail(fmt::format("'{}' is not a time in seconds", one_line(f[3])));
    }
    std::string_view rwbs = f[6];
    TraceOp op;
    op.time_ns = time_ns;
    bool flush = rwbs.find('F') != std::string_view::npos;
    if (rwbs.find('D') != std::string_view::npos) {
      op.kind = TraceOpKind::kTrim;
    } else if (rwbs.find('W') != std::string_view::npos) {
      op.kind = TraceOpKind::kWrite;
    } else if (rwbs.find('R') != std::string_view::npos) {
      op.kind = TraceOpKind::kRead;
    } else if (flush) {
      op.kind = TraceOpKind::kFlush;
      return add(op);
    } else {
      ++trace_.skipped_lines;  // N: no data
      return {};
    }
    if (f.size() < 10 || f[8] != "+") return fail("expected SECTOR + COUNT after the RWBS field");
    uint64_t sector = 0;
    uint64_t count = 0;
    if (!parse_u64(f[7], sector) || !parse_u64(f[9], count)) {
      return fail(fmt::format("'{} + {}' is not SECTOR + COUNT", one_line(f[7]), one_line(f[9])));
    }
    if (count == 0) {
      // A flush with no data (FWS 0 + 0) is the flush alone.
      if (flush) {
        op.kind = TraceOpKind::kFlush;
        return add(op);
      }
      ++trace_.skipped_lines;
      return {};
    }
    if (sector > UINT64_MAX / kSectorBytes || count > UINT64_MAX / kSectorBytes ||
        sector * kSectorBytes > UINT64_MAX - count * kSectorBytes) {
      return fail("the request's bytes do not fit in 64 bits");
    }
    op.offset_bytes = sector * kSectorBytes;
    op.length_bytes = count * kSectorBytes;
    // A write with a preflush (FWS): the flush first.
    if (flush && op.kind == TraceOpKind::kWrite) {
      TraceOp pre = op;
      pre.kind = TraceOpKind::kFlush;
      pre.offset_bytes = pre.length_bytes = 0;
      if (Outcome ok = add(pre); !ok) return ok;
    }
    return add(op);
  }

  Trace trace_;
  uint32_t line_ = 0;
};

}  // namespace

std::string_view trace_format_name(TraceFormat format) {
  switch (format) {
    case TraceFormat::kIologV2:
      return "fio iolog v2";
    case TraceFormat::kIologV3:
      return "fio iolog v3";
    case TraceFormat::kBlkparse:
      return "blkparse";
  }
  return "?";
}

std::string_view trace_op_name(TraceOpKind kind) {
  switch (kind) {
    case TraceOpKind::kRead:
      return "read";
    case TraceOpKind::kWrite:
      return "write";
    case TraceOpKind::kTrim:
      return "trim";
    case TraceOpKind::kFlush:
      return "flush";
    case TraceOpKind::kWait:
      return "wait";
  }
  return "?";
}

Result<Trace> parse_trace(std::istream& in) { return Parser().run(in); }

Result<Trace> parse_trace_text(std::string_view text) {
  std::istringstream in{std::string(text)};
  return parse_trace(in);
}

Result<Trace> read_trace_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot open the trace", path)};
  auto trace = parse_trace(in);
  if (!trace) return Error{fmt::format("{}: {}", path, trace.error())};
  return trace;
}

}  // namespace zonelab
