// Zone management latency at a zone occupancy; see occupancy.h.
#include "experiments/occupancy.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "stack/stack.h"
#include "zonelab/assert.h"

namespace zonelab {
namespace {

// Runs one command and the device to idle; nothing else is in flight, so
// the queue empties with it.
Status run_alone(Stack& stack, Command& command) {
  stack.io().submit_wait(command);
  stack.drive();
  return command.status;
}

}  // namespace

uint64_t zone_capacity_pages(const Config& config) {
  auto stack = Stack::make(config);
  if (!stack) return 0;
  uint64_t lbas_per_page = config.flash.page_size_bytes / (*stack)->info().lba_size_bytes;
  return (*stack)->info().zone_capacity_lbas / lbas_per_page;
}

Result<OccupancyPoint> measure_at_occupancy(const Config& config, ZoneAction action,
                                            uint64_t pages_written) {
  if (action != ZoneAction::kFinish && action != ZoneAction::kReset) {
    return Error{"occupancy: only finish and reset are measured"};
  }
  if (config.interface != "zns") return Error{"occupancy: a ZNS device is measured"};
  auto made = Stack::make(config);
  if (!made) return Error{made.error()};
  Stack& stack = **made;
  const DeviceInfo& info = stack.info();
  const uint64_t lbas_per_page = config.flash.page_size_bytes / info.lba_size_bytes;
  if (info.zone_capacity_lbas % lbas_per_page != 0) {
    return Error{"occupancy: the zone capacity is not a whole number of flash pages"};
  }
  OccupancyPoint point;
  point.zone_capacity_pages = info.zone_capacity_lbas / lbas_per_page;
  if (pages_written > point.zone_capacity_pages) {
    return Error{fmt::format("occupancy: {} pages do not fit a zone of {} pages", pages_written,
                             point.zone_capacity_pages)};
  }
  point.pages_written = pages_written;

  // ZASL-sized writes (whole pages): the same commands a host would fill a
  // zone with, and few enough to keep a full zone cheap to simulate.
  const uint64_t chunk_lbas =
      std::max<uint64_t>(lbas_per_page, info.zasl_lbas / lbas_per_page * lbas_per_page);
  const uint64_t target_lbas = pages_written * lbas_per_page;
  for (uint64_t lba = 0; lba < target_lbas; lba += chunk_lbas) {
    Command write;
    write.opcode = Opcode::kWrite;
    write.slba = lba;
    write.nlb = static_cast<uint32_t>(std::min(chunk_lbas, target_lbas - lba));
    Status status = run_alone(stack, write);
    if (status != Status::kSuccess) {
      return Error{fmt::format("occupancy: write at LBA {}: {}", lba, status_name(status))};
    }
  }

  stack.reset_stats();
  Command command;
  command.opcode = Opcode::kZoneManagementSend;
  command.action = action;
  command.slba = 0;
  Status status = run_alone(stack, command);
  if (status != Status::kSuccess) {
    return Error{
        fmt::format("occupancy: {} of zone 0: {}", zone_action_name(action), status_name(status))};
  }
  point.latency_ns = command.latency_ns();
  stack.inspect([&point](const ModeledDevice& device) {
    const FlashCounters& counters = device.flash().counters();
    point.finish_program_pages = counters.program_pages[static_cast<size_t>(FlashCause::kFinish)];
    point.reset_erases = counters.erases[static_cast<size_t>(FlashCause::kReset)];
  });
  return point;
}

}  // namespace zonelab
