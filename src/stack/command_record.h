// A journal record of a device image (store/image.h): one command the
// device took that changed its state, or one use of the inject test hook.
// Replaying the records in order on the state saved before them gives the
// state the device had (docs/image-format.md, "Journal records").
#pragma once

#include <cstdint>
#include <vector>

#include "zonelab/device.h"
#include "zonelab/result.h"

namespace zonelab {

struct CommandRecord {
  enum class Kind : uint8_t { kCommand = 1, kInject = 2, kFailDie = 3, kLost = 4 };
  Kind kind = Kind::kCommand;
  // kCommand: what the host asked (data is in the image's data region).
  Opcode opcode = Opcode::kWrite;
  ZoneAction action = ZoneAction::kNone;
  bool select_all = false;
  uint16_t stream = 0;
  uint64_t slba = 0;
  uint32_t nlb = 0;
  // kInject (and kFailDie: the die, channel x dies_per_channel + way, and
  // `failed`: failed, or back).
  uint32_t zone = 0;
  bool failed = true;
  ZoneState state = ZoneState::kEmpty;

  static CommandRecord of(const Command& command);
  static CommandRecord injected(uint32_t zone, ZoneState state);
  static CommandRecord die_changed(uint32_t die, bool failed);
  // kLost: a power cut left zone `zone` with `slba` LBAs (zone-relative) of
  // data (a volatile write cache).
  static CommandRecord lost(uint32_t zone, uint64_t durable_lbas);
  // A command to submit again (no data, no sink).
  Command command() const;

  bool operator==(const CommandRecord&) const = default;
};

std::vector<uint8_t> encode_command_record(const CommandRecord& record);
// Refuses a record of the wrong length or with a field no command has.
Result<CommandRecord> decode_command_record(const std::vector<uint8_t>& bytes);

}  // namespace zonelab
