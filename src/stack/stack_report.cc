// See stack_report.h.
#include "stack/stack_report.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace zonelab {

using Json = nlohmann::ordered_json;

Json latency_json(const Histogram& h) {
  return Json{{"mean", static_cast<uint64_t>(std::llround(h.mean()))},
              {"p50", h.percentile(50)},
              {"p95", h.percentile(95)},
              {"p99", h.percentile(99)},
              {"p999", h.percentile(99.9)},
              {"max", h.max()}};
}

namespace {

double fraction(uint64_t busy_ns, uint64_t span_ns) {
  if (span_ns == 0) return 0.0;
  return std::round(static_cast<double>(busy_ns) / static_cast<double>(span_ns) * 1e6) / 1e6;
}

}  // namespace

Json device_info_json(const DeviceInfo& info) {
  Json j;
  j["interface"] = std::string(info.interface);
  j["lba_size"] = info.lba_size_bytes;
  j["zone_size_lbas"] = info.zone_size_lbas;
  j["zone_capacity_lbas"] = info.zone_capacity_lbas;
  j["zone_count"] = info.zone_count;
  j["capacity_lbas"] = info.capacity_lbas;
  j["max_open"] = info.max_open;
  j["max_active"] = info.max_active;
  j["zasl_lbas"] = info.zasl_lbas;
  j["volatile_write_cache"] = info.volatile_write_cache;
  Json sets = Json::array();
  for (const ZoneSetInfo& set : info.zone_sets) {
    sets.push_back({{"size_lbas", set.zone_size_lbas},
                    {"capacity_lbas", set.zone_capacity_lbas},
                    {"count", set.zone_count},
                    {"first_zone", set.first_zone},
                    {"first_lba", set.first_lba}});
  }
  j["zone_sets"] = sets;
  return j;
}

Json device_counters_json(const ModeledDevice& device, uint64_t span_ns) {
  const Flash& flash = device.flash();
  const FlashCounters& fc = flash.counters();
  const HostCounters& zc = device.counters();
  uint64_t page = flash.page_size_bytes();
  auto programmed = [&](FlashCause cause) {
    return fc.program_pages[static_cast<size_t>(cause)] * page;
  };
  Json j;
  j["host_write_bytes"] = zc.host_write_bytes;
  j["host_read_bytes"] = zc.host_read_bytes;
  j["flash_program_bytes"] = {{"host", programmed(FlashCause::kHost)},
                              {"gc", programmed(FlashCause::kGc)},
                              {"finish", programmed(FlashCause::kFinish)},
                              {"parity", programmed(FlashCause::kParity)}};
  j["flash_read_bytes"] = fc.read_bytes;
  uint64_t erases = 0;
  for (uint64_t e : fc.erases) erases += e;
  j["erases"] = erases;
  j["erases_by_cause"] = {{"reset", fc.erases[static_cast<size_t>(FlashCause::kReset)]},
                          {"gc", fc.erases[static_cast<size_t>(FlashCause::kGc)]}};
  uint64_t total_programmed = 0;
  for (uint64_t p : fc.program_pages) total_programmed += p * page;
  j["write_amplification"] = zc.host_write_bytes == 0
                                 ? Json(nullptr)
                                 : Json(std::round(static_cast<double>(total_programmed) /
                                                   static_cast<double>(zc.host_write_bytes) * 1e4) /
                                        1e4);
  Json channels = Json::array();
  for (uint32_t c = 0; c < flash.channels(); ++c)
    channels.push_back(fraction(flash.channel_busy_ns(c), span_ns));
  Json dies = Json::array();
  for (uint32_t d = 0; d < flash.dies(); ++d)
    dies.push_back(fraction(flash.die_busy_ns(d), span_ns));
  j["channel_busy"] = channels;
  j["die_busy"] = dies;
  j["implicit_closes"] = device.implicit_closes();
  device.describe_run(j);
  return j;
}

double mean_busy(const Json& shares) {
  if (!shares.is_array() || shares.empty()) return 0;
  double sum = 0;
  for (const Json& s : shares) sum += s.get<double>();
  return sum / static_cast<double>(shares.size());
}

Json realtime_stats_json(const RealtimeOptions& options, const RealtimeStats& stats) {
  Json j;
  j["timing"] = std::string(timing_name(options.timing));
  j["time_scale"] = options.time_scale;
  j["spin_ns"] = options.spin_ns;
  j["completions"] = stats.completions;
  j["completion_error_ns"] = latency_json(stats.completion_error_ns);
  j["turnaround_ns"] = latency_json(stats.turnaround_ns);
  j["wakeup_ns"] = latency_json(stats.wakeup_ns);
  j["loop_cpu_ns"] = stats.loop_cpu_ns;
  j["loop_wall_ns"] = stats.loop_wall_ns;
  j["loop_cpu_share"] = stats.loop_wall_ns == 0
                            ? 0.0
                            : std::round(static_cast<double>(stats.loop_cpu_ns) /
                                         static_cast<double>(stats.loop_wall_ns) * 1e4) /
                                  1e4;
  return j;
}

Outcome write_stats_file(const std::string& path, std::string_view text) {
  std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    return Error{fmt::format("{}: statistics not written: {}", path, std::strerror(errno))};
  }
  bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  written = std::fclose(f) == 0 && written;
  if (!written || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int error = errno;
    std::remove(tmp.c_str());
    return Error{fmt::format("{}: statistics not written: {}", path, std::strerror(error))};
  }
  return {};
}

}  // namespace zonelab
