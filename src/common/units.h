// Units in configuration and on the command line: sizes ("16KiB", "72MB"),
// times ("450us", "3.5ms") and rates ("1.2GB/s", "100MiB/s"). Binary
// prefixes (KiB, MiB, GiB, TiB) are powers of 1024, decimal ones (KB, MB, GB,
// TB) powers of 1000. A plain number is bytes, nanoseconds or bytes/s.
//
// Job options (bench flags and job files) read sizes, times and rates as fio
// does instead (docs/cli-compat.md): suffixes ignore case, k/KB/M/MB... are
// powers of kb_base (1024 unless the job says kb_base=1000), KiB/MiB... are
// always powers of 1024, a bare time is seconds and `m` is minutes.
// Configuration keys keep the rules above, so "3940MB/s" stays decimal.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "zonelab/result.h"

namespace zonelab {

Result<uint64_t> parse_size_bytes(std::string_view text);
Result<uint64_t> parse_time_ns(std::string_view text);
Result<uint64_t> parse_rate_bytes_per_s(std::string_view text);
Result<uint64_t> parse_count(std::string_view text);
// A percentage ("7%", "28", "6.25%") in hundredths of a percent (700, 2800, 625).
Result<uint64_t> parse_percent_basis_points(std::string_view text);
std::string format_percent_basis_points(uint64_t basis_points);

// fio's sizes, times and rates (see above); kb_base is 1024 or 1000.
inline constexpr uint32_t kKbBaseDefault = 1024;
Result<uint64_t> parse_job_size_bytes(std::string_view text, uint32_t kb_base);
Result<uint64_t> parse_job_time_ns(std::string_view text);
Result<uint64_t> parse_job_rate_bytes_per_s(std::string_view text, uint32_t kb_base);

// Shortest exact rendering with a binary prefix ("16KiB", "1056MiB", "4097").
std::string format_size(uint64_t bytes);
// Shortest exact rendering in ns/us/ms/s ("450us", "3500000ns" -> "3500us").
std::string format_time(uint64_t ns);
// Exact rate rendering: "1.2GB/s", "100MiB/s", "999B/s".
std::string format_rate(uint64_t bytes_per_s);
// For people, not round trips: "523.8us", "3.50ms" (3-4 significant digits).
std::string format_duration(uint64_t ns);

}  // namespace zonelab
