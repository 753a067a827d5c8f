// Zone management latency at a zone occupancy; see occupancy.h.
#include "experiments/occupancy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <memory>

#include "sim/simulator.h"
#include "zns/zns_device.h"

namespace zonelab {
namespace {

class Sink final : public CompletionSink {
 public:
  void on_complete(Command&) override { ++completed; }
  uint64_t completed = 0;
};

// Submits one command and runs the simulator until it is done; nothing
// else is in flight, so the queue empties with it.
Status run_alone(Simulator& sim, ZnsDevice& device, Command& command, Sink& sink) {
  uint64_t before = sink.completed;
  command.sink = &sink;
  device.submit(command);
  sim.run();
  assert(sink.completed == before + 1);
  (void)before;
  return command.status;
}

}  // namespace

uint64_t zone_capacity_pages(const Config& config) {
  auto layout = ZoneLayout::make(config);
  if (!layout) return 0;
  return layout->zone_capacity_lbas() / layout->lbas_per_page();
}

Result<OccupancyPoint> measure_at_occupancy(const Config& config, ZoneAction action,
                                            uint64_t pages_written) {
  if (action != ZoneAction::kFinish && action != ZoneAction::kReset) {
    return Error{"occupancy: only finish and reset are measured"};
  }
  Simulator sim;
  auto made = make_zns_device(config, sim);
  if (!made) return Error{made.error()};
  std::unique_ptr<ZnsDevice> device = std::move(made).value();
  const ZoneLayout& layout = device->layout();
  const uint64_t lbas_per_page = layout.lbas_per_page();
  if (layout.zone_capacity_lbas() % lbas_per_page != 0) {
    return Error{"occupancy: the zone capacity is not a whole number of flash pages"};
  }
  OccupancyPoint point;
  point.zone_capacity_pages = layout.zone_capacity_lbas() / lbas_per_page;
  if (pages_written > point.zone_capacity_pages) {
    return Error{fmt::format("occupancy: {} pages do not fit a zone of {} pages", pages_written,
                             point.zone_capacity_pages)};
  }
  point.pages_written = pages_written;

  // ZASL-sized writes (whole pages): the same commands a host would fill a
  // zone with, and few enough to keep a full zone cheap to simulate.
  const uint64_t chunk_lbas =
      std::max<uint64_t>(lbas_per_page, layout.zasl_lbas() / lbas_per_page * lbas_per_page);
  const uint64_t target_lbas = pages_written * lbas_per_page;
  Sink sink;
  for (uint64_t lba = 0; lba < target_lbas; lba += chunk_lbas) {
    Command write;
    write.opcode = Opcode::kWrite;
    write.slba = lba;
    write.nlb = static_cast<uint32_t>(std::min(chunk_lbas, target_lbas - lba));
    Status status = run_alone(sim, *device, write, sink);
    if (status != Status::kSuccess) {
      return Error{fmt::format("occupancy: write at LBA {}: {}", lba, status_name(status))};
    }
  }

  device->reset_stats();
  Command command;
  command.opcode = Opcode::kZoneManagementSend;
  command.action = action;
  command.slba = 0;
  Status status = run_alone(sim, *device, command, sink);
  if (status != Status::kSuccess) {
    return Error{
        fmt::format("occupancy: {} of zone 0: {}", zone_action_name(action), status_name(status))};
  }
  const FlashCounters& counters = device->flash().counters();
  point.latency_ns = command.latency_ns();
  point.finish_program_pages = counters.program_pages[static_cast<size_t>(FlashCause::kFinish)];
  point.reset_erases = counters.erases[static_cast<size_t>(FlashCause::kReset)];
  return point;
}

}  // namespace zonelab
