// softfinish; see softfinish.h.
#include "host/softfinish.h"

#include <fmt/format.h>

#include <algorithm>

#include "zonelab/assert.h"

namespace zonelab {

SoftFinish::SoftFinish(Device& device, Simulator& sim, const HostConfig& host)
    : device_(device),
      sim_(sim),
      chunk_lbas_(std::max<uint64_t>(1, host.softfinish_chunk_bytes / host.lba_size_bytes)),
      pause_ns_(host.softfinish_pause_ns) {}

Outcome SoftFinish::check(const HostConfig& host, const DeviceInfo& info) {
  if (host.softfinish_chunk_bytes == 0 || host.softfinish_chunk_bytes % info.lba_size_bytes != 0) {
    return Error{fmt::format("host.softfinish.chunk ({} bytes) is not a multiple of the LBA size",
                             host.softfinish_chunk_bytes)};
  }
  return {};
}

void SoftFinish::start(uint32_t zone, Done done) {
  ZL_ASSERT(!busy_);
  ZoneDescriptor d = device_.zone(zone);
  busy_ = true;
  done_ = std::move(done);
  start_ns_ = sim_.now_ns();
  cursor_ = d.wp_lba;
  end_ = d.start_lba + d.capacity_lbas;
  if (d.state == ZoneState::kFull || cursor_ >= end_) {
    finish(Status::kSuccess);
    return;
  }
  next();
}

void SoftFinish::next() {
  write_ = Command{};
  write_.opcode = Opcode::kWrite;
  write_.slba = cursor_;
  write_.nlb = static_cast<uint32_t>(std::min(chunk_lbas_, end_ - cursor_));
  write_.sink = this;
  cursor_ += write_.nlb;
  ++writes_;
  device_.submit(write_);
}

void SoftFinish::on_complete(Command& command) {
  if (command.status != Status::kSuccess) {
    finish(command.status);
    return;
  }
  if (cursor_ >= end_) {
    finish(Status::kSuccess);
  } else if (pause_ns_ == 0) {
    next();
  } else {
    sim_.schedule_after(pause_ns_, this, 0);
  }
}

void SoftFinish::on_event(uint64_t) { next(); }

void SoftFinish::finish(Status status) {
  busy_ = false;
  Done done = std::move(done_);
  done_ = nullptr;
  done(status, sim_.now_ns() - start_ns_);
}

}  // namespace zonelab
