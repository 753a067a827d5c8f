// See command_record.h. Layout (little-endian):
//   kind u8 = 1 | opcode u8 | action u8 | select_all u8 | stream u16 | slba u64 | nlb u32
//   kind u8 = 2 | zone u32 | state u8
//   kind u8 = 3 | die u32 | failed u8 (1 failed, 0 back)
//   kind u8 = 4 | zone u32 | durable u64 (zone-relative LBAs kept at a power cut)
#include "stack/command_record.h"

#include <fmt/format.h>

#include "store/bytes.h"

namespace zonelab {
namespace {

constexpr uint64_t kCommandRecordBytes = 18;
constexpr uint64_t kInjectRecordBytes = 6;
constexpr uint64_t kFailDieRecordBytes = 6;
constexpr uint64_t kLostRecordBytes = 13;

}  // namespace

CommandRecord CommandRecord::of(const Command& c) {
  CommandRecord r;
  r.kind = Kind::kCommand;
  r.opcode = c.opcode;
  r.action = c.action;
  r.select_all = c.select_all;
  r.stream = c.stream;
  r.slba = c.slba;
  r.nlb = c.nlb;
  return r;
}

CommandRecord CommandRecord::injected(uint32_t zone, ZoneState state) {
  CommandRecord r;
  r.kind = Kind::kInject;
  r.zone = zone;
  r.state = state;
  return r;
}

CommandRecord CommandRecord::die_changed(uint32_t die, bool failed) {
  CommandRecord r;
  r.kind = Kind::kFailDie;
  r.zone = die;
  r.failed = failed;
  return r;
}

CommandRecord CommandRecord::lost(uint32_t zone, uint64_t durable_lbas) {
  CommandRecord r;
  r.kind = Kind::kLost;
  r.zone = zone;
  r.slba = durable_lbas;
  return r;
}

Command CommandRecord::command() const {
  Command c;
  c.opcode = opcode;
  c.action = action;
  c.select_all = select_all;
  c.stream = stream;
  c.slba = slba;
  c.nlb = nlb;
  return c;
}

std::vector<uint8_t> encode_command_record(const CommandRecord& r) {
  std::vector<uint8_t> bytes;
  ByteWriter writer(bytes);
  writer.u8(static_cast<uint8_t>(r.kind));
  if (r.kind == CommandRecord::Kind::kInject) {
    writer.u32(r.zone);
    writer.u8(static_cast<uint8_t>(r.state));
    return bytes;
  }
  if (r.kind == CommandRecord::Kind::kFailDie) {
    writer.u32(r.zone);
    writer.u8(r.failed ? 1 : 0);
    return bytes;
  }
  if (r.kind == CommandRecord::Kind::kLost) {
    writer.u32(r.zone);
    writer.u64(r.slba);
    return bytes;
  }
  writer.u8(static_cast<uint8_t>(r.opcode));
  writer.u8(static_cast<uint8_t>(r.action));
  writer.u8(r.select_all ? 1 : 0);
  writer.u16(r.stream);
  writer.u64(r.slba);
  writer.u32(r.nlb);
  return bytes;
}

Result<CommandRecord> decode_command_record(const std::vector<uint8_t>& bytes) {
  ByteReader reader(bytes.data(), bytes.size());
  if (!reader.has(1)) return Error{"an empty journal record"};
  CommandRecord r;
  uint8_t kind = reader.u8();
  if (kind == static_cast<uint8_t>(CommandRecord::Kind::kInject)) {
    if (bytes.size() != kInjectRecordBytes) {
      return Error{fmt::format("an inject record of {} bytes", bytes.size())};
    }
    r.kind = CommandRecord::Kind::kInject;
    r.zone = reader.u32();
    uint8_t state = reader.u8();
    if (state != static_cast<uint8_t>(ZoneState::kReadOnly) &&
        state != static_cast<uint8_t>(ZoneState::kOffline)) {
      return Error{fmt::format("an inject record of zone state {}", state)};
    }
    r.state = static_cast<ZoneState>(state);
    return r;
  }
  if (kind == static_cast<uint8_t>(CommandRecord::Kind::kFailDie)) {
    if (bytes.size() != kFailDieRecordBytes) {
      return Error{fmt::format("a die-failure record of {} bytes", bytes.size())};
    }
    r.kind = CommandRecord::Kind::kFailDie;
    r.zone = reader.u32();
    uint8_t failed = reader.u8();
    if (failed > 1) return Error{fmt::format("a die-failure record of state {}", failed)};
    r.failed = failed == 1;
    return r;
  }
  if (kind == static_cast<uint8_t>(CommandRecord::Kind::kLost)) {
    if (bytes.size() != kLostRecordBytes) {
      return Error{fmt::format("a power-loss record of {} bytes", bytes.size())};
    }
    r.kind = CommandRecord::Kind::kLost;
    r.zone = reader.u32();
    r.slba = reader.u64();
    return r;
  }
  if (kind != static_cast<uint8_t>(CommandRecord::Kind::kCommand)) {
    return Error{fmt::format("a journal record of kind {}", kind)};
  }
  if (bytes.size() != kCommandRecordBytes) {
    return Error{fmt::format("a command record of {} bytes", bytes.size())};
  }
  uint8_t opcode = reader.u8();
  uint8_t action = reader.u8();
  uint8_t select_all = reader.u8();
  if (opcode >= kOpcodeCount || opcode == static_cast<uint8_t>(Opcode::kRead) ||
      action > static_cast<uint8_t>(ZoneAction::kOffline) || select_all > 1) {
    return Error{fmt::format("a command record of opcode {}, action {}, select all {}", opcode,
                             action, select_all)};
  }
  r.opcode = static_cast<Opcode>(opcode);
  r.action = static_cast<ZoneAction>(action);
  r.select_all = select_all == 1;
  r.stream = reader.u16();
  r.slba = reader.u64();
  r.nlb = reader.u32();
  return r;
}

}  // namespace zonelab
