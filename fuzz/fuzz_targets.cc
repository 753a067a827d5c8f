// The fuzz targets (see fuzz_targets.h). Each checks, beyond "does not
// crash", one property that a reader of the code would otherwise have to
// take on trust: what is accepted survives a round trip unchanged, and what
// is refused is refused with one line of text.
#include "fuzz_targets.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "controller/device_state.h"
#include "conv/ftl_state.h"
#include "flash/flash_state.h"
#include "stack/command_record.h"
#include "stack/stack.h"
#include "store/image.h"
#include "workload/job.h"
#include "workload/replay.h"
#include "workload/trace.h"
#include "zns/block_map_state.h"
#include "zonelab/config.h"

namespace zonelab {

void fuzz_violated(const char* target, const std::string& what) {
  std::fprintf(stderr, "fuzz %s: property violated: %s\n", target, what.c_str());
  std::abort();
}

void fuzz_check_message(const char* target, const std::string& message) {
  if (message.empty()) fuzz_violated(target, "an error without a message");
  if (message.find('\n') != std::string::npos) {
    fuzz_violated(target, "an error message of more than one line: " + message);
  }
}

namespace {

bool same_state(const ImageState& a, const ImageState& b) {
  return config_to_toml(a.config) == config_to_toml(b.config) && a.sections == b.sections;
}

// A section a layer decodes must encode to the same bytes; a section it
// refuses is refused with one line.
template <typename Decoded, typename Put>
void check_section(const ImageState& state, uint32_t type, const Result<Decoded>& decoded,
                   Put put) {
  if (!decoded) {
    fuzz_check_message("image", decoded.error());
    return;
  }
  ImageState again;
  put(again, *decoded);
  auto before = state.sections.find(type);
  auto after = again.sections.find(type);
  bool had = before != state.sections.end();
  bool has = after != again.sections.end();
  if (had != has || (had && before->second != after->second)) {
    fuzz_violated("image", "section " + std::to_string(type) + " changed in a round trip");
  }
}

// Every layer's decoder over the sections it owns (as the devices would
// read them), and every journal record as replay would read it.
void check_layers(const ImageState& state, const std::vector<std::vector<uint8_t>>& journal) {
  check_section(state, kSectionZones, get_zone_records(state), put_zone_records);
  check_section(state, kSectionNextOpenSeq, get_next_open_seq(state), put_next_open_seq);
  check_section(state, kSectionLifetime, get_lifetime(state), put_lifetime);
  check_section(state, kSectionEraseCounts, get_erase_counts(state), put_erase_counts);
  check_section(state, kSectionFtl, get_ftl(state), put_ftl);
  check_section(state, kSectionBlockMap, get_block_map(state),
                [](ImageState& out, const std::optional<BlockMapState>& map) {
                  if (map) put_block_map(out, *map);
                });
  for (const auto& record : journal) {
    auto decoded = decode_command_record(record);
    if (!decoded) {
      fuzz_check_message("image", decoded.error());
    } else if (encode_command_record(*decoded) != record) {
      fuzz_violated("image", "a journal record changed in a round trip");
    }
  }
}

uint64_t load_le(const std::vector<uint8_t>& bytes, uint64_t offset, int width) {
  uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i) value = (value << 8) | bytes[offset + i];
  return value;
}

void store_u32_le(std::vector<uint8_t>& bytes, uint64_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

// The input with every checksum recomputed (docs/image-format.md), so that
// mutations reach the slot payload instead of stopping at a CRC mismatch.
std::vector<uint8_t> with_checksums_fixed(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (bytes.size() < 44) return bytes;
  store_u32_le(bytes, 40, crc32c(bytes.data(), 40));
  uint64_t slot_bytes = load_le(bytes, 16, 8);
  for (uint64_t slot = 0; slot < 2; ++slot) {
    if (slot_bytes > bytes.size()) break;
    uint64_t offset = Image::kHeaderBytes + slot * slot_bytes;
    if (offset > bytes.size() || bytes.size() - offset < 32) break;
    uint64_t payload_bytes = load_le(bytes, offset + 16, 8);
    if (payload_bytes > bytes.size() - offset - 32) continue;
    uint32_t crc = crc32c(bytes.data() + offset, 28);
    crc = crc32c(bytes.data() + offset + 32, payload_bytes, crc);
    store_u32_le(bytes, offset + 28, crc);
  }
  return bytes;
}

void check_image(const uint8_t* data, size_t size) {
  std::vector<std::vector<uint8_t>> journal;
  auto decoded = Image::decode(data, size, &journal);
  if (!decoded) {
    fuzz_check_message("image", decoded.error());
    return;
  }
  check_layers(*decoded, journal);
  auto encoded = Image::encode(*decoded, 0);
  if (!encoded) fuzz_violated("image", "a decoded state does not encode: " + encoded.error());
  auto again = Image::decode(*encoded);
  if (!again) fuzz_violated("image", "an encoded state does not decode: " + again.error());
  if (!same_state(*decoded, *again)) fuzz_violated("image", "the state changed in a round trip");
}

}  // namespace

int fuzz_image_decode(const uint8_t* data, size_t size) {
  check_image(data, size);
  std::vector<uint8_t> fixed = with_checksums_fixed(data, size);
  check_image(fixed.data(), fixed.size());
  return 0;
}

int fuzz_config_toml(const uint8_t* data, size_t size) {
  static const Config kDefault = default_config();
  static const std::string kDefaultToml = config_to_toml(kDefault);
  Config config = kDefault;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Outcome applied = apply_toml(config, text, "fuzz");
  if (!applied) {
    fuzz_check_message("config", applied.error());
    if (applied.error().empty()) fuzz_violated("config", "an error without a message");
    if (config_to_toml(config) != kDefaultToml) {
      fuzz_violated("config", "a refused document changed the configuration");
    }
    return 0;
  }
  std::string printed = config_to_toml(config);
  Config reparsed{};
  Outcome again = apply_toml(reparsed, printed, "round trip");
  if (!again) {
    fuzz_violated("config",
                  "the printed configuration does not parse: " + again.error() + "\n" + printed);
  }
  std::string reprinted = config_to_toml(reparsed);
  if (reprinted != printed) {
    fuzz_violated("config",
                  "the configuration changed in a round trip:\n" + printed + "---\n" + reprinted);
  }
  return 0;
}

namespace {

// What set_job_option promises of any job it accepts.
void check_job(const JobSpec& job) {
  auto fail = [&job](const char* what) { fuzz_violated("job", "job '" + job.name + "': " + what); };
  bool printable = !job.name.empty() && job.name.size() <= kJobNameMaxChars;
  for (char c : job.name)
    printable = printable && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  if (!printable) fail("a name that is empty, too long or not printable");
  if (job.block_size_bytes == 0 || job.block_size_bytes > kJobBlockSizeMaxBytes) fail("bs");
  if (job.iodepth == 0 || job.iodepth > kJobIodepthMax) fail("iodepth");
  if (job.numjobs == 0 || job.numjobs > kJobNumjobsMax) fail("numjobs");
  if (job.runtime_ns > kJobRuntimeMaxNs) fail("runtime");
  if (job.log_interval_ns != 0 && job.log_interval_ns < 1000) fail("log_interval");
  if (job.size_percent < 0 || job.size_percent > static_cast<double>(kJobSizePercentMax)) {
    fail("size percent");
  }
  if (job.offset_percent < 0 || job.offset_percent >= 100) fail("offset percent");
  if (job.rwmixread_percent > 100) fail("rwmixread");
  if (job.kb_base != 1024 && job.kb_base != 1000) fail("kb_base");
  if (!(job.rate_iops >= 0) || !std::isfinite(job.rate_iops)) fail("rate_iops");
  if (job.zones && job.zones->first > job.zones->second) fail("zones");
  if (is_management(job.kind)) fail("a management kind from a job file");
}

}  // namespace

int fuzz_trace(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto trace = parse_trace_text(text);
  if (!trace) {
    fuzz_check_message("trace", trace.error());
    return 0;
  }
  uint64_t last_time = 0;
  for (const TraceOp& op : trace->ops) {
    if (op.line == 0) fuzz_violated("trace", "an operation without its line");
    if ((op.kind == TraceOpKind::kRead || op.kind == TraceOpKind::kWrite ||
         op.kind == TraceOpKind::kTrim) &&
        (op.length_bytes == 0 || op.offset_bytes > UINT64_MAX - op.length_bytes)) {
      fuzz_violated("trace", "an operation of no bytes or past 2^64");
    }
    last_time = std::max(last_time, op.time_ns);
  }
  if (trace->ops.size() > 2000 || last_time > 10'000'000'000ull) return 0;  // keep runs short
  for (const char* interface : {"block", "zns"}) {
    Config c = *preset_config("small");
    for (const char* kv :
         {"store.backing=none", "flash.channels=1", "flash.dies_per_channel=1",
          "zns.channels_per_zone=1", "zns.dies_per_zone=1", "zns.max_open=4", "zns.max_active=4"}) {
      if (!apply_override(c, kv).ok()) fuzz_violated("trace", std::string("bad config ") + kv);
    }
    if (!apply_override(c, std::string("interface=") + interface).ok()) {
      fuzz_violated("trace", "bad interface");
    }
    auto stack = Stack::make(c);
    if (!stack) fuzz_violated("trace", "no stack: " + stack.error());
    auto checked = check_trace(*trace, (*stack)->info(), (*stack)->device());
    if (!checked) {
      fuzz_check_message("trace", checked.error());
      continue;
    }
    for (bool timestamps : {true, false}) {
      ReplayOptions o;
      o.timestamps = timestamps;
      o.iodepth = 4;
      ReplayResult r = replay_trace((*stack)->device(), (*stack)->sim(), *trace, o);
      uint64_t done = r.read.ops + r.write.ops + r.trim.ops + r.flush.ops;
      uint64_t asked = 0;
      for (const TraceOp& op : trace->ops) asked += op.kind != TraceOpKind::kWait;
      if (done != asked) fuzz_violated("trace", "an operation did not complete");
    }
  }
  return 0;
}

int fuzz_job_file(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto jobs = parse_job_file_text(text, "fuzz.toml");
  if (!jobs) {
    fuzz_check_message("job", jobs.error());
    return 0;
  }
  if (jobs->empty() || jobs->size() > kJobCountMax)
    fuzz_violated("job", "a job count outside 1-256");
  for (const JobSpec& job : *jobs) check_job(job);
  return 0;
}

}  // namespace zonelab
