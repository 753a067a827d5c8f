// zonelab_fuzz_replay: the fuzz corpus as an ordinary test, without libFuzzer.
//
//   zonelab_fuzz_replay CORPUS_DIR
//       runs every file under CORPUS_DIR/image through fuzz_image_decode,
//       every file under CORPUS_DIR/config through fuzz_config_toml and
//       every file under CORPUS_DIR/job through fuzz_job_file.
//   zonelab_fuzz_replay --target
//   image|config|job|fs_records|fs_superblock|fs_journal|fs_journal_damage|fs_policy FILE...
//       runs the given files (a crash reproducer, say) through one target.
//   zonelab_fuzz_replay --write-seeds CORPUS_DIR
//       writes the generated seed inputs (valid images, damaged variants,
//       presets, malformed and deeply nested TOML, job files) into
//       CORPUS_DIR/image, /config and /job.
//
// A broken property aborts inside the target, so a run that gets to its
// summary line passed every file it read.
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "controller/device_state.h"
#include "conv/conv_device.h"
#include "flash/flash_state.h"
#include "fuzz_targets.h"
#include "sim/simulator.h"
#include "stack/command_record.h"
#include "store/image.h"
#include "zonelab/config.h"

namespace zonelab {
namespace {

namespace fs = std::filesystem;

using Target = int (*)(const uint8_t*, size_t);

constexpr size_t kCorpusFilesMax = 100000;

bool read_file(const fs::path& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), {});
  return !in.bad();
}

bool write_file(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

std::vector<uint8_t> bytes_of(std::string_view text) {
  return std::vector<uint8_t>(text.begin(), text.end());
}

struct Tally {
  size_t passed = 0;
  size_t failed = 0;
};

void run_file(Target target, const fs::path& path, bool verbose, Tally& tally) {
  std::vector<uint8_t> bytes;
  if (!read_file(path, bytes)) {
    std::fprintf(stderr, "%s: cannot read\n", path.c_str());
    tally.failed += 1;
    return;
  }
  if (verbose) std::fprintf(stderr, "%s\n", path.c_str());
  target(bytes.data(), bytes.size());
  tally.passed += 1;
}

// Runs every regular file under `dir`, in name order so runs repeat exactly.
bool run_dir(Target target, const fs::path& dir, bool verbose, Tally& tally) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    std::fprintf(stderr, "%s: no such corpus directory\n", dir.c_str());
    return false;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && files.size() < kCorpusFilesMax) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) run_file(target, file, verbose, tally);
  return true;
}

Target target_named(std::string_view name) {
  if (name == "image") return fuzz_image_decode;
  if (name == "config") return fuzz_config_toml;
  if (name == "job") return fuzz_job_file;
  if (name == "trace") return fuzz_trace;
  if (name == "fs_records") return fuzz_fs_records;
  if (name == "fs_superblock") return fuzz_fs_superblock;
  if (name == "fs_journal") return fuzz_fs_journal;
  if (name == "fs_journal_damage") return fuzz_fs_journal_damage;
  if (name == "fs_policy") return fuzz_fs_policy;
  if (name == "sweep_spec") return fuzz_sweep_spec;
  if (name == "vhost_user") return fuzz_vhost_user;
  if (name == "stream_hints") return fuzz_stream_hints;
  return nullptr;
}

// --- Seeds -------------------------------------------------------------------

ImageState seed_state(const Config& config, uint32_t zone_count, uint32_t block_count,
                      uint64_t commands = 77) {
  ImageState state;
  state.config = config;
  std::vector<ZoneRecord> zones;
  for (uint32_t i = 0; i < zone_count; ++i) {
    auto kind = static_cast<uint8_t>(i % 7);
    uint64_t wp = kind == 0 ? 0 : 64 * (i + 1);
    zones.push_back(ZoneRecord{kind, wp, wp / 2, static_cast<uint32_t>(i * 3), i});
  }
  put_zone_records(state, zones);
  put_next_open_seq(state, zone_count + 1);
  std::vector<uint32_t> erase_counts;
  for (uint32_t i = 0; i < block_count; ++i) erase_counts.push_back(i * 11);
  put_erase_counts(state, erase_counts);
  put_lifetime(state, LifetimeCounters{1 << 20, 1 << 19, commands});
  return state;
}

// An image with a journal of the given records after slot A.
std::vector<uint8_t> with_journal(std::vector<uint8_t> image,
                                  const std::vector<CommandRecord>& records) {
  // The journal region is the last 4 KiB of an image made by encode().
  uint64_t offset = image.size() - 4096;
  uint64_t index = 0;
  for (const CommandRecord& record : records) {
    std::vector<uint8_t> bytes =
        Image::encode_journal_record(1, index++, encode_command_record(record));
    std::copy(bytes.begin(), bytes.end(), image.begin() + static_cast<ptrdiff_t>(offset));
    offset += bytes.size();
  }
  return image;
}

// An image with both slots written (slot B newer), made through the real
// create and save path in a scratch directory.
std::vector<uint8_t> two_slot_image(const ImageState& first, const ImageState& second) {
  std::string scratch = (fs::temp_directory_path() / "zonelab-seeds-XXXXXX").string();
  if (::mkdtemp(scratch.data()) == nullptr) return {};
  fs::path path = fs::path(scratch) / "seed.zl";
  std::vector<uint8_t> bytes;
  {
    auto image = Image::create(path.string(), first, 0, false);
    if (image.ok() && image.value()->save(second).ok()) read_file(path, bytes);
  }
  fs::remove_all(scratch);
  return bytes;
}

class NullSink final : public CompletionSink {
 public:
  void on_complete(Command&) override {}
};

// A block-interface device on a tiny flash (2 planes of 16 blocks of 4 pages
// of 4 LBAs) after `writes` random writes, some of them with GC: its state
// holds every part of the ftl section and stays well under the fuzzer's
// input size.
ImageState block_seed_state(int writes) {
  Config config = default_config();
  for (const char* kv :
       {"interface=block", "store.backing=none", "flash.channels=1", "flash.dies_per_channel=1",
        "flash.planes_per_die=2", "flash.blocks_per_plane=16", "flash.pages_per_block=4",
        "flash.page_size=16KiB", "host.lba_size=4KiB", "zns.zone_capacity=64KiB",
        "block.overprovisioning=50%", "block.gc_watermark=2", "block.streams=2"}) {
    if (!apply_override(config, kv).ok()) std::abort();
  }
  Simulator sim;
  auto device = make_conv_device(config, sim).value();
  NullSink sink;
  uint64_t lba = 7;
  for (int i = 0; i < writes; ++i) {
    Command c;
    c.opcode = Opcode::kWrite;
    lba = (lba * 2654435761u + 11) % (device->info().capacity_lbas - 8);
    c.slba = lba;
    c.nlb = static_cast<uint32_t>(1 + i % 7);
    c.stream = static_cast<uint16_t>(i % 2);
    c.sink = &sink;
    device->submit(c);
    sim.run();
  }
  ImageState state;
  device->export_state(state);
  return state;
}

void write_image_seeds(const fs::path& dir, size_t& written) {
  auto put = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    if (write_file(dir / name, bytes)) written += 1;
  };
  ImageState small = seed_state(default_config(), 4, 16);
  std::vector<uint8_t> valid = Image::encode(small, 0).value();
  put("valid-one-slot.zl", valid);
  put("valid-empty-tables.zl", Image::encode(seed_state(default_config(), 0, 0), 0).value());
  put("valid-with-data.zl", Image::encode(small, 8192).value());
  for (const std::string& name : preset_names()) {
    put("valid-preset-" + name + ".zl",
        Image::encode(seed_state(preset_config(name).value(), 7, 8), 0).value());
  }
  ImageState block = block_seed_state(200);
  put("valid-block-one-slot.zl", Image::encode(block, 0).value());
  std::vector<uint8_t> block_two = two_slot_image(block_seed_state(20), block);
  if (!block_two.empty()) put("valid-block-two-slots.zl", block_two);
  CommandRecord write;
  write.slba = 100;
  write.nlb = 8;
  CommandRecord reset;
  reset.opcode = Opcode::kZoneManagementSend;
  reset.action = ZoneAction::kReset;
  reset.select_all = true;
  put("valid-journal.zl",
      with_journal(valid, {write, reset, CommandRecord::injected(3, ZoneState::kOffline)}));
  ImageState newer = seed_state(default_config(), 4, 16, 78);
  std::vector<uint8_t> two = two_slot_image(small, newer);
  if (two.empty()) return;
  put("valid-two-slots.zl", two);

  uint64_t slot_bytes = 0;
  for (int i = 7; i >= 0; --i) slot_bytes = (slot_bytes << 8) | two[16 + i];
  uint64_t data_offset = Image::kHeaderBytes + 2 * slot_bytes;
  for (uint64_t length : {uint64_t{0}, uint64_t{8}, uint64_t{44}, Image::kHeaderBytes,
                          Image::kHeaderBytes + 100, data_offset - 1}) {
    put("truncated-" + std::to_string(length) + ".zl",
        std::vector<uint8_t>(two.begin(), two.begin() + static_cast<ptrdiff_t>(length)));
  }
  // Header fields, slot A's header and payload, slot B's header.
  for (uint64_t offset : {uint64_t{0}, uint64_t{8}, uint64_t{17}, uint64_t{40},
                          Image::kHeaderBytes + 9, Image::kHeaderBytes + 28,
                          Image::kHeaderBytes + 100, Image::kHeaderBytes + slot_bytes + 20}) {
    std::vector<uint8_t> flipped = two;
    flipped[offset] ^= 0x04;
    put("flipped-" + std::to_string(offset) + ".zl", flipped);
  }
}

void write_config_seeds(const fs::path& dir, size_t& written) {
  auto put = [&](const std::string& name, std::string_view text) {
    if (write_file(dir / name, bytes_of(text))) written += 1;
  };
  for (const std::string& name : preset_names()) {
    put("preset-" + name + ".toml", config_to_toml(preset_config(name).value()));
  }
  put("handwritten.toml",
      "# a small device, written by hand\ninterface = \"zns\"\nseed = 7\n[flash]\nchannels = 2\n"
      "page_size = \"16KiB\"\nread_latency = \"3.5ms\"\nprogram_latency = 450000\n"
      "[host]\nlink_bandwidth = \"1.2GB/s\"\n[zns]\nzone_capacity = \"1077MiB\"\n"
      "zone_size = \"2GiB\"\nmax_open = 14\nmax_active = 14\n[store]\nbacking = \"file\"\n");
  put("empty.toml", "");
  put("comment-only.toml", "# nothing here\n\n");
  put("unknown-key.toml", "[flash]\nchanels = 4\n");
  put("unknown-table.toml", "[block]\noverprovisioning = 7\n");
  put("wrong-type.toml", "[host]\nlba_size = true\n");
  put("string-seed.toml", "seed = \"abc\"\n");
  put("negative.toml", "seed = -1\n");
  put("out-of-range.toml", "[flash]\nchannels = 0\n");
  put("bad-unit.toml", "[flash]\npage_size = \"16XiB\"\n");
  put("float-count.toml", "[flash]\nchannels = 4.5\n");
  put("float-time.toml", "[flash]\nread_latency = 3.5e3\n");
  put("fraction-time.toml", "[flash]\nerase_latency = \"1.0000000001us\"\n");
  put("too-long-time.toml", "[flash]\nerase_latency = \"11s\"\n");
  put("rate-mib.toml", "[host]\nlink_bandwidth = \"100MiB/s\"\n");
  put("rate-zero.toml", "[host]\nlink_bandwidth = \"0B/s\"\n");
  put("size-half.toml", "[zns]\nzone_capacity = \"0.5KiB\"\n");
  put("size-big.toml", "[zns]\nzone_capacity = \"2TiB\"\n");
  put("int-overflow.toml", "seed = 18446744073709551615\n");
  put("unterminated-string.toml", "[zns]\nzone_capacity = \"48MiB\n");
  put("unterminated-table.toml", "[flash\nchannels = 1\n");
  put("duplicate-key.toml", "seed = 1\nseed = 2\n");
  put("inline-table.toml", "flash = { channels = 8, page_size = \"8KiB\" }\n");
  put("dotted-keys.toml", "flash.channels = 2\nzns.max_open = 3\n");
  put("array.toml", "seed = [1, 2]\n");
  put("array-of-tables.toml", "[[flash]]\nchannels = 1\n");
  put("bad-choice.toml", "interface = \"block\"\n[store]\nbacking = \"disk\"\n");
  put("escapes.toml", "interface = \"\\u007a\\u006e\\u0073\"\n");
  put("datetime.toml", "seed = 1979-05-27T07:32:00Z\n");
  put("crlf.toml", "seed = 3\r\n[host]\r\nqueue_depth = 64\r\n");
  put("bom.toml", "\xEF\xBB\xBFseed = 4\n");
  put("nul.toml", std::string_view("seed = 5\n\0[flash]\n", 19));
  std::string deep = "x = " + std::string(300, '[') + std::string(300, ']') + "\n";
  put("deep-array.toml", deep);
  // Nesting at and past the limit of 32 levels (common/text_input.h).
  std::string dotted = "zns";
  for (int i = 1; i < 40; ++i) dotted += ".x";
  put("deep-dotted-key.toml", dotted + " = 1\n");
  put("deep-header.toml", "[" + dotted + "]\nk = 1\n");
  put("deep-array-of-tables.toml", "[[" + dotted + "]]\n");
  std::string inline_tables = "flash = ";
  for (int i = 0; i < 33; ++i) inline_tables += "{a = ";
  put("deep-inline-tables.toml", inline_tables + "1" + std::string(33, '}') + "\n");
  put("nesting-in-strings.toml",
      "# [[[[ a.b.c.d\ninterface = \"[[[[{{{{\"\n[store]\nbacking = '''\n]]]]\n'''\n");
  std::string limit = "a";
  for (int i = 1; i < 32; ++i) limit += ".a";
  put("nesting-at-the-limit.toml", limit + " = 1\n");
}

void write_job_seeds(const fs::path& dir, size_t& written) {
  auto put = [&](const std::string& name, std::string_view text) {
    if (write_file(dir / name, bytes_of(text))) written += 1;
  };
  put("demo.toml",
      "[global]\nstonewall = true\n[write-qd8]\nrw = \"write\"\nbs = \"16KiB\"\niodepth = 8\n"
      "zones = \"0-7\"\nsize = \"256MiB\"\n[randread-qd32]\nrw = \"randread\"\nbs = \"4KiB\"\n"
      "iodepth = 32\nzones = \"0-15\"\nsize = \"256MiB\"\n");
  put("fio-spellings.toml",
      "[global]\nkb_base = 1000\nblocksize = \"4k\"\n[mix]\nreadwrite = \"randrw\"\n"
      "rwmixread = 70\nzone-order = \"random\"\nruntime = 30\ntime_based = 1\n"
      "log_avg_msec = 500\nrate = \"100m\"\nrate_iops = 2.5\noffset = \"25%\"\n"
      "randseed = 9\nname = \"renamed\"\n");
  put("every-kind.toml",
      "[a]\nrw = \"read\"\n[b]\nrw = \"randread\"\n[c]\nrw = \"write\"\n[d]\nrw = \"append\"\n"
      "[e]\nrw = \"randwrite\"\n[f]\nrw = \"randrw\"\n[g]\nrw = \"trim\"\n");
  put("negative.toml", "[a]\niodepth = -1\n");
  put("past-2-64.toml", "[a]\nsize = \"18446744073709551616\"\n");
  put("empty-value.toml", "[a]\nbs = \"\"\n");
  put("runtime-too-long.toml", "[a]\nruntime = \"2h\"\n");
  put("name-newline.toml", "[\"a\\nb\"]\nrw = \"write\"\n");
  put("nested-value.toml", "[a]\nbs = { x = 1 }\n");
  put("global-not-table.toml", "global = 1\n[a]\n");
  put("no-jobs.toml", "[global]\nbs = \"4k\"\n");
  put("unknown-option.toml", "[a]\nioengine = \"libaio\"\n");
  std::string many;
  for (int i = 0; i <= 256; ++i) many += "[j" + std::to_string(i) + "]\n";
  put("too-many-jobs.toml", many);
  std::string dotted = "a";
  for (int i = 1; i < 40; ++i) dotted += ".a";
  put("deep-dotted-key.toml", "[j]\n" + dotted + " = 1\n");
  put("deep-array.toml", "[j]\nbs = " + std::string(40, '[') + std::string(40, ']') + "\n");
}

int write_seeds(const fs::path& corpus) {
  std::error_code error;
  fs::create_directories(corpus / "image", error);
  fs::create_directories(corpus / "config", error);
  fs::create_directories(corpus / "job", error);
  size_t written = 0;
  write_image_seeds(corpus / "image", written);
  write_config_seeds(corpus / "config", written);
  write_job_seeds(corpus / "job", written);
  write_fs_seeds(corpus.c_str(), written);
  std::printf("wrote %zu seed files under %s\n", written, corpus.c_str());
  return written > 0 ? 0 : 1;
}

int usage() {
  std::fprintf(
      stderr,
      "usage: zonelab_fuzz_replay [--verbose] CORPUS_DIR\n"
      "       zonelab_fuzz_replay --target "
      "image|config|job|trace|fs_records|fs_superblock|fs_journal|fs_journal_damage|fs_policy|"
      "sweep_spec|vhost_user|stream_hints "
      "FILE...\n"
      "       zonelab_fuzz_replay --write-seeds CORPUS_DIR\n");
  return 2;
}

int run(std::vector<std::string_view> args) {
  bool verbose = !args.empty() && args[0] == "--verbose";
  if (verbose) args.erase(args.begin());
  if (args.size() == 2 && args[0] == "--write-seeds") return write_seeds(fs::path(args[1]));
  Tally tally;
  if (args.size() >= 3 && args[0] == "--target") {
    Target target = target_named(args[1]);
    if (target == nullptr) return usage();
    for (size_t i = 2; i < args.size(); ++i) run_file(target, fs::path(args[i]), verbose, tally);
  } else if (args.size() == 1 && args[0].substr(0, 1) != "-") {
    fs::path corpus(args[0]);
    bool found = run_dir(fuzz_image_decode, corpus / "image", verbose, tally);
    found = run_dir(fuzz_config_toml, corpus / "config", verbose, tally) && found;
    found = run_dir(fuzz_job_file, corpus / "job", verbose, tally) && found;
    found = run_dir(fuzz_trace, corpus / "trace", verbose, tally) && found;
    found = run_dir(fuzz_fs_records, corpus / "fs_records", verbose, tally) && found;
    found = run_dir(fuzz_fs_superblock, corpus / "fs_superblock", verbose, tally) && found;
    found = run_dir(fuzz_fs_journal, corpus / "fs_journal", verbose, tally) && found;
    found = run_dir(fuzz_fs_journal_damage, corpus / "fs_journal_damage", verbose, tally) && found;
    found = run_dir(fuzz_fs_policy, corpus / "fs_policy", verbose, tally) && found;
    found = run_dir(fuzz_sweep_spec, corpus / "sweep_spec", verbose, tally) && found;
    found = run_dir(fuzz_vhost_user, corpus / "vhost_user", verbose, tally) && found;
    found = run_dir(fuzz_stream_hints, corpus / "stream_hints", verbose, tally) && found;
    if (!found) tally.failed += 1;
  } else {
    return usage();
  }
  std::printf("%zu passed, %zu failed\n", tally.passed, tally.failed);
  return tally.failed == 0 && tally.passed > 0 ? 0 : 1;
}

}  // namespace
}  // namespace zonelab

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  return zonelab::run(args);
}
