// The zoned file system: mkfs, the namespace, the journal commit path, zone
// allocation and inspection; see zoned_fs.h. Mounting is in recovery.cc,
// file I/O in file_io.cc, garbage collection in gc.cc, fsck in fsck.cc.
#include "fs/zoned_fs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <random>

#include "common/rng.h"

namespace zonelab::fs {
namespace {

// Finishes, resets, collections and waits an allocation may go through
// (each wait for space is 20 ms, within MountOptions::token_wait_ms).
constexpr int kAllocationTriesMax = 4096;
// How long a writer that finds no space waits for another thread to free
// some before it answers NoSpace.
constexpr uint64_t kNoSpaceWaitMs = 5'000;
// A writer waiting for a token asks again at least this often.
constexpr std::chrono::milliseconds kTokenWaitSlice{100};

std::array<uint8_t, 16> make_uuid(const std::optional<uint64_t>& seed) {
  uint64_t a = 0;
  uint64_t b = 0;
  if (seed) {
    Rng rng(derive_seed(*seed, 0x7a6f6e65, 0x6673));
    a = rng.next();
    b = rng.next();
  } else {
    std::random_device random;
    a = (uint64_t{random()} << 32) | random();
    b = (uint64_t{random()} << 32) | random();
  }
  std::array<uint8_t, 16> uuid{};
  for (int i = 0; i < 8; ++i) {
    uuid[i] = static_cast<uint8_t>(a >> (8 * i));
    uuid[8 + i] = static_cast<uint8_t>(b >> (8 * i));
  }
  uuid[6] = static_cast<uint8_t>((uuid[6] & 0x0f) | 0x40);  // version 4
  uuid[8] = static_cast<uint8_t>((uuid[8] & 0x3f) | 0x80);  // variant
  return uuid;
}

}  // namespace

// FsCounters as a counters record's values, in a fixed order; counters
// added later go at the end, and a record with fewer values leaves the
// rest at zero.
std::vector<uint64_t> counter_values(const FsCounters& c) {
  std::vector<uint64_t> v;
  for (uint64_t x : c.appended_bytes) v.push_back(x);
  for (uint64_t x : c.data_written_bytes) v.push_back(x);
  for (uint64_t x : c.device_written_bytes) v.push_back(x);
  for (uint64_t x :
       {c.files_created, c.files_deleted, c.syncs, c.gc_runs, c.gc_copied_bytes, c.zones_reset,
        c.zones_reset_without_copy, c.zones_finished_threshold, c.zones_finished_for_token,
        c.token_waits, c.journal_commits, c.journal_rolls, c.recovered_tail_bytes,
        c.last_resort_placements, c.striped_rounds, c.compaction_read_waits, c.set_fallbacks}) {
    v.push_back(x);
  }
  if (!c.set_written_bytes.empty()) {
    v.push_back(c.set_written_bytes.size());
    for (const auto& set : c.set_written_bytes) v.insert(v.end(), set.begin(), set.end());
  }
  ZL_ASSERT(v.size() <= kCountersMax);
  return v;
}

FsCounters counters_of(const std::vector<uint64_t>& values) {
  FsCounters c;
  std::vector<uint64_t*> slots;
  for (uint64_t& x : c.appended_bytes) slots.push_back(&x);
  for (uint64_t& x : c.data_written_bytes) slots.push_back(&x);
  for (uint64_t& x : c.device_written_bytes) slots.push_back(&x);
  for (uint64_t* x : {&c.files_created, &c.files_deleted, &c.syncs, &c.gc_runs, &c.gc_copied_bytes,
                      &c.zones_reset, &c.zones_reset_without_copy, &c.zones_finished_threshold,
                      &c.zones_finished_for_token, &c.token_waits, &c.journal_commits,
                      &c.journal_rolls, &c.recovered_tail_bytes, &c.last_resort_placements,
                      &c.striped_rounds, &c.compaction_read_waits, &c.set_fallbacks}) {
    slots.push_back(x);
  }
  for (size_t i = 0; i < slots.size() && i < values.size(); ++i) *slots[i] = values[i];
  // The zone sets' bytes: a count, then that many sets (a record cut short,
  // or a count past the values, leaves them out).
  size_t at = slots.size();
  if (at < values.size()) {
    const uint64_t sets = values[at++];
    if (sets <= kSuperZoneSetsMax && (values.size() - at) / kWriteCauseCount >= sets) {
      c.set_written_bytes.resize(sets);
      for (auto& set : c.set_written_bytes) {
        for (uint64_t& x : set) x = values[at++];
      }
    }
  }
  return c;
}

FsStatus check_mkfs_options(const MkfsOptions& o, const DeviceInfo& info, bool stores_data) {
  if (o.meta_zones < kMetaZonesMin || o.meta_zones > kMetaZonesMax) {
    return FsStatus(Code::kInvalid, fmt::format("--meta-zones {}: from {} to {}", o.meta_zones,
                                                kMetaZonesMin, kMetaZonesMax));
  }
  if (o.finish_threshold_pct > 100) {
    return FsStatus(Code::kInvalid, fmt::format("--finish-threshold {}: a percentage up to 100",
                                                o.finish_threshold_pct));
  }
  if (o.gc_free_pct > 50) {
    return FsStatus(Code::kInvalid,
                    fmt::format("--gc-free {}: a percentage up to 50", o.gc_free_pct));
  }
  if (!known_placement_policy(o.policy)) {
    return FsStatus(Code::kInvalid, fmt::format("--policy {}: the known policies are {}", o.policy,
                                                placement_policy_names()));
  }
  if (auto made = make_placement_policy(o.policy, o.policy_options,
                                        PolicyContext{info.zone_count, o.meta_zones});
      !made) {
    return made.status();
  }
  if (!stores_data) {
    return FsStatus(Code::kInvalid,
                    "the device stores no data (store.backing = none); a file system needs "
                    "memory or file backing");
  }
  // Three data zones at least: two to write, one garbage collection keeps
  // empty.
  if (info.zone_count < o.meta_zones + 3) {
    return FsStatus(Code::kInvalid,
                    fmt::format("a device of {} zones is too small: the file system needs {} "
                                "metadata zones and at least 3 data zones",
                                info.zone_count, o.meta_zones));
  }
  if (info.max_active != 0 && info.max_active < 3) {
    return FsStatus(Code::kInvalid,
                    fmt::format("the device allows {} active zones; the file system needs 3 (the "
                                "journal, the write-ahead log and one more)",
                                info.max_active));
  }
  if (info.max_open != 0 && info.max_open < 3) {
    return FsStatus(
        Code::kInvalid,
        fmt::format("the device allows {} open zones; the file system needs 3", info.max_open));
  }
  if (info.lba_size_bytes < 512 || info.lba_size_bytes > (1 << 16)) {
    return FsStatus(Code::kInvalid, fmt::format("a block size of {}", info.lba_size_bytes));
  }
  // Every zone set (the metadata zones are the namespace's first zones,
  // whatever their set; data goes in any).
  if (info.zone_sets.size() > kSuperZoneSetsMax) {
    return FsStatus(Code::kInvalid, fmt::format("{} zone sets; the file system records at most {}",
                                                info.zone_sets.size(), kSuperZoneSetsMax));
  }
  if (auto hot = hot_placement(o, info); !hot) return hot.status();
  if (auto tenants = mkfs_tenants(o, info); !tenants) return tenants.status();
  for (size_t i = 0; i < std::max<size_t>(1, info.zone_sets.size()); ++i) {
    const uint64_t capacity =
        info.zone_sets.empty() ? info.zone_capacity_lbas : info.zone_sets[i].zone_capacity_lbas;
    if (capacity < 16) {
      return FsStatus(Code::kInvalid,
                      info.uniform_zones()
                          ? fmt::format("zones of {} blocks are too small (16 at least)", capacity)
                          : fmt::format("zone set {}: zones of {} blocks are too small (16 at "
                                        "least)",
                                        i, capacity));
    }
  }
  return {};
}

namespace {

// The zone sets of `sets` added up: their zones, space and writes (zone
// bytes: the smallest of their zones; the write amplification of the sum).
FsSetSpace sum_of_sets(const std::vector<FsSetSpace>& all, SetMask sets) {
  FsSetSpace sum;
  for (size_t i = 0; i < all.size(); ++i) {
    if ((sets & set_bit(static_cast<uint32_t>(i))) == 0) continue;
    const FsSetSpace& set = all[i];
    if (sum.zone_bytes == 0 || set.zone_bytes < sum.zone_bytes) sum.zone_bytes = set.zone_bytes;
    sum.data_zones += set.data_zones;
    sum.empty_zones += set.empty_zones;
    sum.active_zones += set.active_zones;
    sum.free_bytes += set.free_bytes;
    sum.used_bytes += set.used_bytes;
    sum.reclaimable_bytes += set.reclaimable_bytes;
    sum.lost_bytes += set.lost_bytes;
    sum.gc_written_bytes += set.gc_written_bytes;
    sum.data_written_bytes += set.data_written_bytes;
    sum.written_bytes += set.written_bytes;
  }
  sum.write_amplification =
      sum.data_written_bytes == 0
          ? 0.0
          : static_cast<double>(sum.written_bytes) / static_cast<double>(sum.data_written_bytes);
  return sum;
}

// The data zones of each zone set: the metadata zones are the namespace's
// first zones, whatever their set.
std::vector<uint32_t> data_zones_by_set(uint32_t meta, const DeviceInfo& info) {
  std::vector<uint32_t> data(info.zone_sets.size());
  for (size_t s = 0; s < data.size(); ++s) {
    const uint32_t taken = std::min(meta, info.zone_sets[s].zone_count);
    meta -= taken;
    data[s] = info.zone_sets[s].zone_count - taken;
  }
  return data;
}

}  // namespace

FsResult<std::vector<SuperTenant>> mkfs_tenants(const MkfsOptions& o, const DeviceInfo& info) {
  std::vector<SuperTenant> out;
  if (o.tenants.empty()) return out;
  auto bad = [](const std::string& spec, const std::string& why) {
    return FsStatus(Code::kInvalid, fmt::format("--tenant {}: {}", one_line(spec, 64), why));
  };
  const auto sets = static_cast<uint32_t>(info.zone_sets.size());
  if (info.uniform_zones()) {
    return bad(o.tenants.front(),
               "tenants need zone sets (zonelab format --zones SIZE:COUNT@DIES,... makes them)");
  }
  if (o.tenants.size() > kTenantsMax) {
    return FsStatus(Code::kInvalid,
                    fmt::format("{} tenants; at most {}", o.tenants.size(), kTenantsMax));
  }
  const std::vector<uint32_t> data = data_zones_by_set(o.meta_zones, info);
  SetMask owned = 0;
  for (const std::string& spec : o.tenants) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) return bad(spec, "not NAME=SETS (e.g. a=0 or b=1,2)");
    SuperTenant t;
    t.name = spec.substr(0, eq);
    if (std::string why = tenant_name_problem(t.name); !why.empty()) return bad(spec, why);
    for (const SuperTenant& other : out) {
      if (other.name == t.name) return bad(spec, fmt::format("tenant {} named twice", t.name));
    }
    std::string_view list = std::string_view(spec).substr(eq + 1);
    if (list.empty()) return bad(spec, "no zone sets named");
    while (!list.empty()) {
      const size_t comma = list.find(',');
      const std::string item(list.substr(0, comma));
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      char* end = nullptr;
      const unsigned long n = std::strtoul(item.c_str(), &end, 10);
      if (item.empty() || end != item.c_str() + item.size() || !std::isdigit(item[0]) ||
          n >= sets) {
        return bad(spec, fmt::format("no zone set '{}' (the device has sets 0-{})",
                                     one_line(item, 20), sets - 1));
      }
      const auto set = static_cast<uint32_t>(n);
      if ((owned & set_bit(set)) != 0) {
        for (const SuperTenant& other : out) {
          if ((other.sets & set_bit(set)) != 0) {
            return bad(spec, fmt::format("zone set {} is tenant {}'s", set, other.name));
          }
        }
        return bad(spec, fmt::format("zone set {} named twice", set));
      }
      if (data[set] == 0) {
        return bad(spec, fmt::format("zone set {}'s zones all hold metadata", set));
      }
      owned |= set_bit(set);
      t.sets |= set_bit(set);
    }
    out.push_back(std::move(t));
  }
  return out;
}

FsResult<std::pair<uint32_t, uint32_t>> hot_placement(const MkfsOptions& o,
                                                      const DeviceInfo& info) {
  auto levels = parse_data_levels(o.hot_levels);
  if (!levels) {
    return FsStatus(Code::kInvalid,
                    fmt::format("--hot-levels {}: {}", o.hot_levels, levels.status().message()));
  }
  const auto sets = static_cast<uint32_t>(info.zone_sets.size());
  if (info.uniform_zones()) {
    auto one_size = [](const std::string& option) {
      return FsStatus(Code::kInvalid, option +
                                          ": the device has one zone size (zonelab format --zones "
                                          "SIZE:COUNT,... makes sets)");
    };
    if (!o.hot_set.empty() && o.hot_set != "none") return one_size("--hot-set " + o.hot_set);
    if (o.spill_cold) return one_size("--spill-cold");
    return std::pair{kNoHotSet, 0u};
  }
  if (o.hot_set == "none" || *levels == 0) {
    if (o.spill_cold) {
      return FsStatus(Code::kInvalid,
                      "--spill-cold: no hot set to spill into (--hot-set none or no hot levels)");
    }
    return std::pair{kNoHotSet, 0u};
  }
  uint32_t hot = kNoHotSet;
  if (o.hot_set.empty()) {
    // The set of the smallest zones.
    for (uint32_t s = 0; s < sets; ++s) {
      if (hot == kNoHotSet ||
          info.zone_sets[s].zone_capacity_lbas < info.zone_sets[hot].zone_capacity_lbas) {
        hot = s;
      }
    }
  } else {
    char* end = nullptr;
    const unsigned long n = std::strtoul(o.hot_set.c_str(), &end, 10);
    if (end == o.hot_set.c_str() || *end != '\0' || n >= sets) {
      return FsStatus(Code::kInvalid,
                      fmt::format("--hot-set {}: no such zone set (the device has sets 0-{}, or "
                                  "none)",
                                  o.hot_set.substr(0, 64), sets - 1));
    }
    hot = static_cast<uint32_t>(n);
  }
  // The hot set needs data zones of its own (the metadata zones come
  // first), and the rest of the levels need another set's.
  const std::vector<uint32_t> data = data_zones_by_set(o.meta_zones, info);
  if (data[hot] == 0) {
    return FsStatus(Code::kInvalid,
                    fmt::format("--hot-set {}: the set's zones all hold metadata", hot));
  }
  return std::pair{hot, *levels};
}

FsStatus check_mount_options(const MountOptions& o) {
  if (o.write_buffer_bytes == 0 || o.write_buffer_bytes > (64 << 20)) {
    return FsStatus(Code::kInvalid, "a write buffer of 1 byte to 64 MiB");
  }
  if (o.readahead_bytes > (64 << 20)) {
    return FsStatus(Code::kInvalid, "a readahead of at most 64 MiB");
  }
  if (o.gc_period_ns == 0) return FsStatus(Code::kInvalid, "a garbage collection period of 0");
  return {};
}

namespace {

// The policy mkfs stores: made from its options, with the IZG map the probe
// finds when the policy wants one and none was given.
FsResult<std::unique_ptr<PlacementPolicy>> make_policy_for_mkfs(FsDevice& device,
                                                                const MkfsOptions& options,
                                                                MkfsReport& out) {
  const PolicyContext context{device.info().zone_count, options.meta_zones};
  auto policy = make_placement_policy(options.policy, options.policy_options, context);
  if (!policy) return policy.status();
  std::optional<ProbeRequest> wanted = (*policy)->probe_request();
  if (!wanted) return policy;
  IzgProbeOptions probe;
  probe.threshold_pct = wanted->threshold_pct;
  probe.samples = wanted->samples;
  if (device.config() == nullptr) {
    out.warnings.push_back(fmt::format(
        "the device gives no configuration to probe: policy {} places as zenfs does, with its "
        "garbage collection",
        options.policy));
    return policy;
  }
  auto found = probe_izg_of(*device.config(), probe);
  if (!found) return found.status();
  out.probe = *found;
  if (found->all_interfere) {
    return FsStatus(Code::kInvalid,
                    fmt::format("every zone interferes with every other (the probe found one "
                                "independent zone group): policy {} has no groups to use; "
                                "--policy zenfs suits this device",
                                options.policy));
  }
  std::string text = options.policy_options;
  if (found->map.groups < 2) {
    // Nothing to tell apart: place as ZenFS does, and say so.
    out.warnings.push_back(fmt::format(
        "the IZG probe could not tell zone groups apart ({} group, {} zones without one): "
        "policy {} places as zenfs does, with its garbage collection",
        found->map.groups, found->unknown_zones, options.policy));
  } else {
    if (!text.empty()) text += ",";
    text += "izg=" + found->map.encode();
  }
  for (const std::string& w : found->warnings) out.warnings.push_back(w);
  return make_placement_policy(options.policy, text, context);
}

}  // namespace

FsStatus ZonedFs::mkfs(Stack& stack, const MkfsOptions& options, MkfsReport* report) {
  StackDevice device(stack);
  return mkfs(device, options, report);
}

FsStatus ZonedFs::mkfs(FsDevice& device, const MkfsOptions& options, MkfsReport* report) {
  MkfsReport scratch;
  MkfsReport& out = report != nullptr ? *report : scratch;
  DeviceIo io(device);
  if (FsStatus ok = check_mkfs_options(options, io.info(), device.stores_data()); !ok) return ok;
  if (!options.force) {
    auto found = Journal::recover(io);
    if (found.ok()) {
      return FsStatus(Code::kExists,
                      "the device holds a zoned file system already (use --force to make a new "
                      "one)");
    }
    if (found.status().code() != Code::kNotFound) {
      // Damaged, but its files' data is still there: a new file system would
      // reset it.
      return FsStatus(Code::kExists,
                      fmt::format("the device holds a zoned file system that does not mount ({}); "
                                  "zonelab fs fsck says more, --force replaces it",
                                  found.status().message()));
    }
  }
  // The policy (and the probe it may run, which leaves the zones as it
  // found them) before anything changes: a refusal leaves the device as it
  // was.
  auto policy = make_policy_for_mkfs(device, options, out);
  if (!policy) return policy.status();
  Superblock sb;
  sb.uuid = make_uuid(options.uuid_seed);
  sb.block_bytes = static_cast<uint32_t>(io.block_bytes());
  sb.zone_size_lbas = io.info().zone_size_lbas;
  sb.zone_capacity_lbas = io.info().zone_capacity_lbas;
  sb.zone_count = io.zone_count();
  sb.zone_sets = super_zone_sets(io);
  const auto hot = hot_placement(options, io.info());
  if (!hot) return hot.status();
  std::tie(sb.hot_set, sb.hot_levels) = *hot;
  sb.spill_cold = sb.hot_set != kNoHotSet && options.spill_cold ? 1 : 0;
  auto tenants = mkfs_tenants(options, io.info());
  if (!tenants) return tenants.status();
  sb.tenants = std::move(*tenants);
  sb.meta_zones = options.meta_zones;
  sb.finish_threshold_pct = options.finish_threshold_pct;
  sb.gc_free_pct = options.gc_free_pct;
  sb.policy = options.policy;
  // The data zones first: until the metadata zones are rewritten, an old
  // file system is still found whole.
  for (uint32_t z = options.meta_zones; z < io.zone_count(); ++z) {
    ZoneState state = io.zone(z).state;
    if (state == ZoneState::kEmpty || state == ZoneState::kOffline ||
        state == ZoneState::kReadOnly) {
      continue;
    }
    if (FsStatus ok = io.reset(z); !ok) return ok;
  }
  Record policy_record;
  policy_record.type = RecordType::kPolicySet;
  policy_record.path = options.policy;
  policy_record.blob = (*policy)->state_text();
  out.policy_state = policy_record.blob;
  std::vector<Record> snapshot{policy_record};
  for (const SuperTenant& t : sb.tenants) {
    // Each tenant's directory, made with the file system.
    Record dir;
    dir.type = RecordType::kDirMade;
    dir.path = "/" + t.name;
    snapshot.push_back(dir);
  }
  return Journal::format(io, sb, snapshot);
}

ZonedFs::ZonedFs(FsDevice& device, std::unique_ptr<FsDevice> owned, const MountOptions& options)
    : owned_device_(std::move(owned)), device_(device), io_(device), options_(options) {}

ZonedFs::~ZonedFs() {
  ZL_ASSERT(handles_ == 0 && "every file is closed before the file system goes");
  (void)unmount();
}

FsResult<std::unique_ptr<ZonedFs>> ZonedFs::mount(Stack& stack, const MountOptions& options) {
  if (FsStatus ok = check_mount_options(options); !ok) return ok;
  auto owned = std::make_unique<StackDevice>(stack);
  FsDevice& device = *owned;
  return mount_on(device, std::move(owned), options);
}

FsResult<std::unique_ptr<ZonedFs>> ZonedFs::mount(FsDevice& device, const MountOptions& options) {
  return mount_on(device, nullptr, options);
}

FsResult<std::unique_ptr<ZonedFs>> ZonedFs::mount_on(FsDevice& device,
                                                     std::unique_ptr<FsDevice> owned,
                                                     const MountOptions& options) {
  if (FsStatus ok = check_mount_options(options); !ok) return ok;
  auto fs = std::unique_ptr<ZonedFs>(new ZonedFs(device, std::move(owned), options));
  if (FsStatus ok = fs->recover(); !ok) {
    fs->unmounted_ = true;
    return ok;
  }
  if (options.gc && !options.read_only) {
    std::lock_guard lock(fs->mutex_);
    fs->schedule_background_gc();
  }
  return fs;
}

FsStatus ZonedFs::unmount() {
  {
    std::lock_guard lock(mutex_);
    if (unmounted_) return {};
    unmounted_ = true;
  }
  // The garbage collection timer: cancelled, waiting for a run under way --
  // which may have set the next one before it saw the unmount.
  for (;;) {
    uint64_t timer = 0;
    {
      std::lock_guard lock(mutex_);
      timer = gc_timer_;
      gc_timer_ = 0;
    }
    if (timer == 0) break;
    device_.clock().cancel(timer);
  }
  // A collection under way finishes first.
  std::lock_guard gc(gc_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (!options_.read_only && failure_.empty()) record_counters_locked();
  }
  return commit();
}

FsCounters ZonedFs::counters_locked() const {
  FsCounters c = counters_;
  for (size_t i = 0; i < kWriteCauseCount; ++i) {
    c.device_written_bytes[i] += io_.counters().write_bytes[i].load(std::memory_order_relaxed);
  }
  const size_t sets = io_.info().uniform_zones() ? 0 : io_.info().zone_sets.size();
  c.set_written_bytes.resize(sets);
  for (size_t s = 0; s < sets; ++s) {
    for (size_t i = 0; i < kWriteCauseCount; ++i) {
      c.set_written_bytes[s][i] +=
          io_.counters().set_write_bytes[s][i].load(std::memory_order_relaxed);
    }
  }
  return c;
}

void ZonedFs::record_counters_locked() {
  Record r;
  r.type = RecordType::kCounters;
  r.values = counter_values(counters_locked());
  FsStatus applied = apply_locked(r);
  ZL_ASSERT(applied.is_ok());
}

uint64_t ZonedFs::now_ns() const { return device_.clock().now_ns(); }

FsStatus ZonedFs::fail(FsStatus status) {
  std::lock_guard lock(mutex_);
  if (failure_.empty()) failure_ = status.message();
  changed_.notify_all();
  return status;
}

FsStatus ZonedFs::check_writable() const {
  if (options_.read_only) return FsStatus(Code::kInvalid, "the file system is mounted read-only");
  if (!failure_.empty()) {
    return FsStatus(Code::kIoError,
                    fmt::format("the file system stopped after a device error: {}", failure_));
  }
  if (unmounted_) return FsStatus(Code::kInvalid, "the file system is unmounted");
  return {};
}

FsStatus ZonedFs::apply_locked(const Record& record, bool journal) {
  SpaceChanges changes;
  if (FsStatus ok = meta_.apply(record, io_.block_bytes(), &changes); !ok) return ok;
  if (journal) {
    ++applied_seq_;
    encode_record(record, pending_);
  }
  // Freed first: a moved extent may leave and enter the same zone.
  for (const Extent& e : changes.freed) zones_->remove_live(e, io_.block_bytes(), applied_seq_);
  for (const Extent& e : changes.added) zones_->add_live(e, io_.block_bytes());
  return {};
}

FsStatus ZonedFs::apply_for_file(const Record& record, FileId id) {
  const FileNode* node = meta_.file(id);
  return apply_locked(record, node != nullptr && node->nlink != 0);
}

Journal::Batch ZonedFs::take_batch(uint64_t room_bytes) {
  std::lock_guard lock(mutex_);
  Journal::Batch batch;
  batch.token = applied_seq_;
  if (pending_.empty()) return batch;
  if (Journal::group_bytes(pending_.size(), io_.block_bytes()) <= room_bytes) {
    ++counters_.journal_commits;
    batch.records.swap(pending_);
  } else {
    ++counters_.journal_rolls;
    record_counters_locked();  // into the snapshot
    batch.snapshot_taken = true;
    batch.snapshot = meta_.snapshot();
    batch.next_file_id = meta_.next_id();
    pending_.clear();
  }
  return batch;
}

FsStatus ZonedFs::commit() {
  {
    std::lock_guard lock(mutex_);
    if (options_.read_only) return {};
    if (!failure_.empty()) return check_writable();
  }
  FsStatus ok = journal_->commit([this](uint64_t room) { return take_batch(room); },
                                 [this](uint64_t token) {
                                   std::lock_guard lock(mutex_);
                                   durable_seq_ = std::max(durable_seq_, token);
                                 });
  if (!ok) return fail(ok);
  return {};
}

FsStatus ZonedFs::sync_metadata() { return commit(); }

FsStatus ZonedFs::reclaim() {
  if (FsStatus ok = commit(); !ok) return ok;
  return reset_free_zones();
}

FsStatus ZonedFs::reset_freed() {
  if (FsStatus ok = commit(); !ok) return ok;
  return policy_->reset_when_freed() ? reset_free_zones() : FsStatus();
}

FsStatus ZonedFs::reset_free_zones() {
  std::vector<uint32_t> zones;
  {
    std::lock_guard lock(mutex_);
    if (options_.read_only) return {};
    if (FsStatus ok = check_writable(); !ok && !unmounted_) return ok;
    zones = zones_->resettable(durable_seq_);
    for (uint32_t z : zones) zones_->zone(z).collecting = true;  // nobody takes them meanwhile
  }
  for (size_t i = 0; i < zones.size(); ++i) {
    FsStatus ok = io_.reset(zones[i]);
    std::lock_guard lock(mutex_);
    if (!ok) {
      for (size_t j = i; j < zones.size(); ++j) zones_->zone(zones[j]).collecting = false;
      if (failure_.empty()) failure_ = ok.message();
      changed_.notify_all();
      return ok;
    }
    zones_->mark_reset(zones[i]);
    policy_->on_zone_reset(zones[i]);
    ++counters_.zones_reset;
    ++counters_.zones_reset_without_copy;
  }
  if (!zones.empty()) {
    std::lock_guard lock(mutex_);
    changed_.notify_all();
  }
  return {};
}

SetMask ZonedFs::writer_sets(WriterId writer, Lifetime lifetime, IoClass io_class) const {
  if (writer == kGcWriter) return gc_sets_;
  const SetMask room = writer_room(writer);
  const uint32_t hot = superblock_.hot_set;
  if (hot == kNoHotSet) return room;
  // Seed 001 §IV-C: the hot levels in the hot set, the rest elsewhere --
  // within the writer's tenant.
  const bool hot_level = (superblock_.hot_levels & level_bit(data_level(lifetime, io_class))) != 0;
  const SetMask hot_sets = room & set_bit(hot);
  const SetMask cold_sets = room & ~set_bit(hot);
  SetMask wanted = hot_level ? hot_sets : cold_sets;
  // With spill_cold the other levels take the hot set as well while it is
  // the emptier, so that both fill alike (each keeps the same share free
  // for its collection).
  if (!hot_level && superblock_.spill_cold != 0 && hot_sets != 0 && cold_sets != 0 &&
      zones_->live_share(hot_sets) < zones_->live_share(cold_sets)) {
    wanted = hot_sets;
  }
  return wanted != 0 ? wanted : room;
}

uint32_t ZonedFs::tenant_of(std::string_view path) const {
  if (superblock_.tenants.empty() || path.size() < 2 || path[0] != '/') return kNoTenant;
  const std::string_view top = path.substr(1, path.find('/', 1) - 1);
  for (uint32_t i = 0; i < superblock_.tenants.size(); ++i) {
    if (superblock_.tenants[i].name == top) return i;
  }
  return kNoTenant;
}

SetMask ZonedFs::tenant_sets(uint32_t tenant) const {
  if (tenant != kNoTenant) return superblock_.tenants[tenant].sets;
  SetMask owned = 0;
  for (const SuperTenant& t : superblock_.tenants) owned |= t.sets;
  return kAllSets & ~owned;
}

SetMask ZonedFs::writer_room(WriterId writer) const {
  auto it = writer_room_.find(writer);
  return it != writer_room_.end() ? it->second : tenant_sets(kNoTenant);
}

uint32_t ZonedFs::tenant_root_of(std::string_view path) const {
  const uint32_t t = tenant_of(path);
  return t != kNoTenant && path.substr(1) == superblock_.tenants[t].name ? t : kNoTenant;
}

FsStatus ZonedFs::check_tenant_move(const std::string& from, const std::string& to) const {
  const uint32_t a = tenant_of(from);
  const uint32_t b = tenant_of(to);
  auto name = [&](uint32_t t) {
    return t == kNoTenant ? std::string("no tenant") : "tenant " + superblock_.tenants[t].name;
  };
  if (a != b) {
    return FsStatus(Code::kInvalid,
                    fmt::format("{} -> {}: from {} to {} (a file stays in its tenant's zones)",
                                from, to, name(a), name(b)));
  }
  if (tenant_root_of(from) != kNoTenant) {
    return FsStatus(Code::kInvalid, fmt::format("{} is {}'s directory", from, name(a)));
  }
  return {};
}

FsResult<std::optional<uint32_t>> ZonedFs::try_allocate_zone(WriterId writer, Lifetime lifetime,
                                                             IoClass io_class,
                                                             std::span<const uint32_t> stripe) {
  using Kind = ZoneManager::Allocation::Kind;
  ZoneManager::Allocation a;
  {
    std::lock_guard lock(mutex_);
    if (FsStatus ok = check_writable(); !ok) return ok;
    a = zones_->allocate(*policy_, lifetime, io_class, writer, options_.gc, stripe,
                         writer_sets(writer, lifetime, io_class));
    if (a.kind == Kind::kFinish) {
      zones_->zone(a.zone).collecting = false;  // not ours to finish: nobody waits here
      changed_.notify_all();
    }
    if (a.kind != Kind::kZone) return std::optional<uint32_t>();
    mark_taken_locked(a.zone, writer, false);
  }
  auto taken = commit_taken(a.zone);
  if (!taken) return taken.status();
  return std::optional<uint32_t>(*taken);
}

FsResult<uint32_t> ZonedFs::allocate_zone(WriterId writer, Lifetime lifetime, IoClass io_class,
                                          std::span<const uint32_t> stripe, bool gives_tail) {
  using Kind = ZoneManager::Allocation::Kind;
  const bool for_gc = writer == kGcWriter;
  SetMask wanted = 0;
  SetMask room = 0;
  {
    std::lock_guard lock(mutex_);
    wanted = writer_sets(writer, lifetime, io_class);
    room = for_gc ? wanted : writer_room(writer);
  }
  SetMask sets = wanted;
  auto count_fallback = [&](uint32_t zone) {
    if ((wanted & set_bit(zones_->zone(zone).set)) == 0) ++counters_.set_fallbacks;
  };
  bool waited = false;
  const auto no_space_deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kNoSpaceWaitMs);
  std::chrono::steady_clock::time_point token_deadline;
  for (int attempt = 0; attempt < kAllocationTriesMax; ++attempt) {
    ZoneManager::Allocation a;
    {
      std::unique_lock lock(mutex_);
      if (FsStatus ok = check_writable(); !ok) return ok;
      a = zones_->allocate(*policy_, lifetime, io_class, writer, options_.gc, stripe, sets);
      if (a.kind == Kind::kZone) {
        count_fallback(a.zone);
        mark_taken_locked(a.zone, writer, gives_tail);
      } else if (a.kind == Kind::kWait) {
        // Every token is in use by a writer that is writing: in real time
        // wait for one to be let go; a single caller in virtual time would
        // wait forever.
        if (!device_.concurrent()) {
          return FsStatus(Code::kBusy,
                          fmt::format("all {} open and {} active zone tokens are held by files "
                                      "being written; close a file first",
                                      zones_->limits().open, zones_->limits().active));
        }
        const auto now = std::chrono::steady_clock::now();
        if (!waited) {
          ++counters_.token_waits;
          token_deadline = now + std::chrono::milliseconds(options_.token_wait_ms);
        }
        waited = true;
        if (now >= token_deadline) {
          return FsStatus(Code::kBusy,
                          fmt::format("no open or active zone token came free in {} ms (every "
                                      "one is held by a file being written)",
                                      options_.token_wait_ms));
        }
        // Woken when a zone is let go or a write ends (its zone can then be
        // taken back); asked again at least every slice all the same.
        changed_.wait_until(lock, std::min(token_deadline, now + kTokenWaitSlice));
        --attempt;  // waiting is bounded by the deadline, not by the tries
        continue;
      }
    }
    if (a.kind == Kind::kZone) return commit_taken(a.zone);
    if (a.kind == Kind::kFinish) {
      FsStatus ok = io_.finish(a.zone);
      std::lock_guard lock(mutex_);
      DataZone& z = zones_->zone(a.zone);
      z.collecting = false;
      if (!ok) {
        if (failure_.empty()) failure_ = ok.message();
        changed_.notify_all();
        return ok;
      }
      zones_->release(a.zone, true);
      policy_->on_zone_full(a.zone);
      ++counters_.zones_finished_for_token;
      changed_.notify_all();
      continue;
    }
    // No empty zone: reset those that hold nothing, else collect garbage.
    uint32_t before = 0;
    {
      std::lock_guard lock(mutex_);
      before = zones_->empty_count(sets);
    }
    if (FsStatus ok = commit(); !ok) return ok;
    if (FsStatus ok = reset_free_zones(); !ok) return ok;
    {
      std::lock_guard lock(mutex_);
      if (zones_->empty_count(sets) > before) continue;
    }
    if (!for_gc && options_.gc) {
      auto collected = collect_garbage(2, sets);
      if (!collected) return collected.status();
      if (*collected > 0) continue;
    }
    // The writer's sets are full: its tenant's others (every set without
    // tenants) take its data (each zone taken so is counted).
    if (!for_gc && sets != room) {
      sets = room;
      continue;
    }
    // Nothing freed now. In real time another thread may be about to free
    // space (a collection, a reset, a reader of a dead zone finishing): wait
    // for a change, within a bound.
    std::unique_lock lock(mutex_);
    if (zones_->empty_count(sets) > before) continue;  // freed meanwhile, by a collection
    if (device_.concurrent() && zones_->busy_elsewhere(writer) &&
        std::chrono::steady_clock::now() < no_space_deadline) {
      changed_.wait_for(lock, std::chrono::milliseconds(20));
      continue;
    }
    // The last resort: room left in a zone of other data, whatever its
    // lifetime -- space otherwise lost to the placement.
    std::optional<uint32_t> any = zones_->take_any_room(writer, lifetime, io_class, sets);
    if (!any) break;
    ++counters_.last_resort_placements;
    count_fallback(*any);
    mark_taken_locked(*any, writer, gives_tail);
    lock.unlock();
    return commit_taken(*any);
  }
  std::lock_guard lock(mutex_);
  const FsSpace space = space_locked();
  const std::string gc_off = options_.gc ? "" : "; garbage collection is off";
  if (!superblock_.tenants.empty() && !for_gc) {
    // A tenant's sets are full, whatever room the others have: say whose
    // and how full.
    std::string whose = "the files outside every tenant";
    for (const SuperTenant& t : superblock_.tenants) {
      if (t.sets == room) whose = "tenant " + t.name;
    }
    const FsSetSpace sum = sum_of_sets(space.sets, room);
    return FsStatus(Code::kNoSpace,
                    fmt::format("no space left in {}'s zone sets ({}): {} of {} data zones hold "
                                "data ({} bytes in files, {} reclaimable{})",
                                whose, set_mask_text(room & set_mask_of(space.sets.size())),
                                sum.data_zones - sum.empty_zones, sum.data_zones, sum.used_bytes,
                                sum.reclaimable_bytes, gc_off));
  }
  return FsStatus(Code::kNoSpace,
                  fmt::format("no space left on the zoned file system: {} of {} data zones hold "
                              "data ({} bytes in files, {} reclaimable{})",
                              space.data_zones - space.empty_zones, space.data_zones,
                              space.used_bytes, space.reclaimable_bytes, gc_off));
}

void ZonedFs::mark_taken_locked(uint32_t zone, WriterId writer, bool gives_tail) {
  zones_->set_writing(zone, true);
  DataZone& z = zones_->zone(zone);
  // Recorded before the first write: recovery gives the blocks the writer
  // puts here past its last record to it, and to nobody else (to nobody at
  // all for a striped writer, whose unrecorded blocks lie in several zones
  // in an order the device does not keep).
  Record taken;
  taken.type = RecordType::kZoneTaken;
  taken.zone = zone;
  const FileNode* node = writer == kGcWriter ? nullptr : meta_.file(writer);
  taken.id = gives_tail && node != nullptr && node->nlink != 0 ? writer : 0;
  taken.lba = z.start_lba + z.wp_lbas;
  FsStatus applied = apply_locked(taken);
  ZL_ASSERT(applied.is_ok());
}

FsResult<uint32_t> ZonedFs::commit_taken(uint32_t zone) {
  FsStatus committed = commit();
  if (!committed) {
    std::lock_guard lock(mutex_);
    zones_->release(zone, false);
    changed_.notify_all();
    return committed;
  }
  return zone;
}

void ZonedFs::release_zone(uint32_t zone, WriterId writer) {
  bool finish = false;
  {
    std::lock_guard lock(mutex_);
    if (!zones_->holds(zone, writer)) return;  // taken back meanwhile
    DataZone& z = zones_->zone(zone);
    finish = z.written_part_way() &&
             policy_->finish_on_release(zones_->view(z), superblock_.finish_threshold_pct);
    if (!finish) {
      zones_->release(zone, false);
      changed_.notify_all();
      return;
    }
    zones_->set_writing(zone, true);  // still ours while it is finished
  }
  FsStatus ok = io_.finish(zone);
  std::lock_guard lock(mutex_);
  zones_->release(zone, ok.is_ok());
  if (ok) {
    policy_->on_zone_full(zone);
    ++counters_.zones_finished_threshold;
  } else if (failure_.empty()) {
    failure_ = ok.message();
  }
  changed_.notify_all();
}

void ZonedFs::pin(const std::vector<Extent>& extents) {
  for (const Extent& e : extents) ++zones_->zone(e.zone).readers;
}

void ZonedFs::unpin(const std::vector<Extent>& extents) {
  bool zero = false;
  for (const Extent& e : extents) zero = --zones_->zone(e.zone).readers == 0 || zero;
  if (zero) changed_.notify_all();
}

void ZonedFs::release_file(FileId id) {
  std::lock_guard lock(mutex_);
  SpaceChanges changes;
  const FileNode* node = meta_.file(id);
  bool dies = node != nullptr && node->nlink == 0;
  meta_.release(id, io_.block_bytes(), &changes);
  if (dies && meta_.file(id) == nullptr) ++counters_.files_deleted;
  for (const Extent& e : changes.freed) zones_->remove_live(e, io_.block_bytes(), applied_seq_);
  ZL_ASSERT(handles_ > 0);
  --handles_;
}

uint64_t ZonedFs::open_handles() const {
  std::lock_guard lock(mutex_);
  return handles_;
}

// --- namespace -------------------------------------------------------------

FsStatus ZonedFs::create_dir(const std::string& path, bool parents) {
  if (FsStatus ok = check_path(path); !ok) return ok;
  {
    std::lock_guard lock(mutex_);
    if (meta_.is_dir(path)) {
      if (parents) return {};
      return FsStatus(Code::kExists, fmt::format("{} exists", path));
    }
    if (FsStatus ok = check_writable(); !ok) return ok;
    if (meta_.lookup(path) != nullptr) {
      return FsStatus(Code::kExists, fmt::format("{} exists and is a file", path));
    }
    std::vector<std::string> chain;  // the missing directories, deepest first
    for (std::string dir = path; !meta_.is_dir(dir); dir = parent_of(dir)) {
      if (meta_.lookup(dir) != nullptr) {
        return FsStatus(Code::kNotDirectory, fmt::format("{} is a file", dir));
      }
      chain.push_back(dir);
    }
    if (chain.size() > 1 && !parents) {
      return FsStatus(Code::kNotFound, fmt::format("no directory {}", parent_of(path)));
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      Record r;
      r.type = RecordType::kDirMade;
      r.path = *it;
      if (FsStatus ok = apply_locked(r); !ok) return ok;
    }
  }
  return commit();
}

FsStatus ZonedFs::remove_dir(const std::string& path) {
  if (FsStatus ok = check_path(path); !ok) return ok;
  {
    std::lock_guard lock(mutex_);
    if (FsStatus ok = check_writable(); !ok) return ok;
    if (!meta_.is_dir(path) && meta_.lookup(path) != nullptr) {
      return FsStatus(Code::kNotDirectory, fmt::format("{} is a file", path));
    }
    if (const uint32_t t = tenant_root_of(path); t != kNoTenant) {
      return FsStatus(Code::kInvalid, fmt::format("{} is tenant {}'s directory", path,
                                                  superblock_.tenants[t].name));
    }
    Record r;
    r.type = RecordType::kDirRemoved;
    r.path = path;
    if (FsStatus ok = apply_locked(r); !ok) return ok;
  }
  return commit();
}

FsResult<std::vector<std::string>> ZonedFs::list(const std::string& dir) const {
  if (FsStatus ok = check_path(dir); !ok) return ok;
  std::lock_guard lock(mutex_);
  if (!meta_.is_dir(dir)) {
    if (meta_.lookup(dir) != nullptr) {
      return FsStatus(Code::kNotDirectory, fmt::format("{} is a file", dir));
    }
    return FsStatus(Code::kNotFound, fmt::format("no directory {}", dir));
  }
  return meta_.children(dir);
}

uint64_t ZonedFs::readable_size_locked(const FileNode& node) const {
  auto it = buffered_.find(node.id);
  if (it == buffered_.end()) return node.size;
  return std::max(node.size, it->second.end());
}

FsResult<FileStat> ZonedFs::stat(const std::string& path) const {
  if (FsStatus ok = check_path(path); !ok) return ok;
  std::lock_guard lock(mutex_);
  FileStat st;
  if (meta_.is_dir(path)) {
    st.is_dir = true;
    return st;
  }
  const FileNode* node = meta_.lookup(path);
  if (node == nullptr) return FsStatus(Code::kNotFound, fmt::format("no file {}", path));
  st.id = node->id;
  st.size = readable_size_locked(*node);
  st.mtime_ns = node->mtime_ns;
  st.nlink = node->nlink;
  st.lifetime = node->lifetime;
  st.io_class = node->io_class;
  st.extents = node->extents;
  return st;
}

bool ZonedFs::exists(const std::string& path) const {
  if (!check_path(path)) return false;
  std::lock_guard lock(mutex_);
  return meta_.is_dir(path) || meta_.lookup(path) != nullptr;
}

FsStatus ZonedFs::remove(const std::string& path) {
  if (FsStatus ok = check_path(path); !ok) return ok;
  {
    std::lock_guard lock(mutex_);
    if (FsStatus ok = check_writable(); !ok) return ok;
    if (meta_.is_dir(path)) {
      return FsStatus(Code::kIsDirectory, fmt::format("{} is a directory", path));
    }
    const FileNode* node = meta_.lookup(path);
    if (node == nullptr) return FsStatus(Code::kNotFound, fmt::format("no file {}", path));
    FileId id = node->id;
    Record r;
    r.type = RecordType::kNameUnlinked;
    r.path = path;
    if (FsStatus ok = apply_locked(r); !ok) return ok;
    if (meta_.file(id) == nullptr) ++counters_.files_deleted;
    locked_.erase(path);
  }
  return reset_freed();
}

FsStatus ZonedFs::rename(const std::string& from, const std::string& to) {
  if (FsStatus ok = check_path(from); !ok) return ok;
  if (FsStatus ok = check_path(to); !ok) return ok;
  {
    std::lock_guard lock(mutex_);
    if (FsStatus ok = check_writable(); !ok) return ok;
    if (FsStatus ok = check_tenant_move(from, to); !ok) return ok;
    // A file, or a directory with everything below it: one record either
    // way (Metadata::apply_renamed says what is refused), durable below.
    Record r;
    r.type = RecordType::kRenamed;
    r.path = from;
    r.path2 = to;
    if (FsStatus ok = apply_locked(r); !ok) return ok;
  }
  return reset_freed();
}

FsStatus ZonedFs::link(const std::string& from, const std::string& to) {
  if (FsStatus ok = check_path(from); !ok) return ok;
  if (FsStatus ok = check_path(to); !ok) return ok;
  {
    std::lock_guard lock(mutex_);
    if (FsStatus ok = check_writable(); !ok) return ok;
    const FileNode* node = meta_.lookup(from);
    if (node == nullptr) return FsStatus(Code::kNotFound, fmt::format("no file {}", from));
    if (FsStatus ok = check_tenant_move(from, to); !ok) return ok;
    Record r;
    r.type = RecordType::kNameLinked;
    r.id = node->id;
    r.path = to;
    if (FsStatus ok = apply_locked(r); !ok) return ok;
  }
  return commit();
}

FsStatus ZonedFs::truncate(const std::string& path, uint64_t size) {
  if (FsStatus ok = check_path(path); !ok) return ok;
  {
    std::lock_guard lock(mutex_);
    if (FsStatus ok = check_writable(); !ok) return ok;
    const FileNode* node = meta_.lookup(path);
    if (node == nullptr) return FsStatus(Code::kNotFound, fmt::format("no file {}", path));
    if (buffered_.count(node->id) != 0) {
      return FsStatus(Code::kBusy, fmt::format("{} is open for writing", path));
    }
    if (size > node->size) {
      return FsStatus(Code::kInvalid,
                      fmt::format("{}: a zoned file grows only by appends (size {}, asked {})",
                                  path, node->size, size));
    }
    if (size == node->size) return {};
    Record r;
    r.type = RecordType::kSizeSet;
    r.id = node->id;
    r.size = size;
    r.mtime_ns = now_ns();
    if (FsStatus ok = apply_locked(r); !ok) return ok;
  }
  return reset_freed();
}

FsStatus ZonedFs::lock_file(const std::string& path) {
  if (FsStatus ok = check_path(path); !ok) return ok;
  bool create = false;
  {
    std::lock_guard lock(mutex_);
    if (locked_.count(path) != 0) {
      return FsStatus(Code::kBusy, fmt::format("{} is locked already", path));
    }
    if (meta_.is_dir(path)) {
      return FsStatus(Code::kIsDirectory, fmt::format("{} is a directory", path));
    }
    create = meta_.lookup(path) == nullptr;
  }
  if (create) {
    auto file = open_write(path, {});
    if (!file) return file.status();
    if (FsStatus ok = (*file)->close(); !ok) return ok;
  }
  std::lock_guard lock(mutex_);
  if (!locked_.insert(path).second) {
    return FsStatus(Code::kBusy, fmt::format("{} is locked already", path));
  }
  return {};
}

FsStatus ZonedFs::unlock_file(const std::string& path) {
  std::lock_guard lock(mutex_);
  if (locked_.erase(path) == 0) {
    return FsStatus(Code::kInvalid, fmt::format("{} is not locked", path));
  }
  return {};
}

// --- opening files -----------------------------------------------------------

FsResult<std::unique_ptr<WritableFile>> ZonedFs::open_write(const std::string& path,
                                                            const WriteOptions& options) {
  if (FsStatus ok = check_path(path); !ok) return ok;
  std::unique_ptr<WritableFile> file;
  {
    std::lock_guard lock(mutex_);
    if (FsStatus ok = check_writable(); !ok) return ok;
    if (meta_.is_dir(path)) {
      return FsStatus(Code::kIsDirectory, fmt::format("{} is a directory", path));
    }
    if (!meta_.is_dir(parent_of(path))) {
      if (meta_.lookup(parent_of(path)) != nullptr) {
        return FsStatus(Code::kNotDirectory, fmt::format("{} is a file", parent_of(path)));
      }
      return FsStatus(Code::kNotFound, fmt::format("no directory {}", parent_of(path)));
    }
    const FileNode* existing = meta_.lookup(path);
    if (existing != nullptr && buffered_.count(existing->id) != 0) {
      return FsStatus(Code::kBusy, fmt::format("{} is open for writing", path));
    }
    const uint32_t tenant = tenant_of(path);
    const SetMask room = tenant_sets(tenant);
    if (!superblock_.tenants.empty() && (room & set_mask_of(superblock_.zone_sets.size())) == 0) {
      std::string names;
      for (const SuperTenant& t : superblock_.tenants)
        names += (names.empty() ? "/" : ", /") + t.name;
      return FsStatus(Code::kInvalid,
                      fmt::format("{} is in no tenant's directory, and every zone set is a "
                                  "tenant's ({})",
                                  path, names));
    }
    if (existing != nullptr && options.append) {
      FileId id = existing->id;
      meta_.hold(id);
      buffered_[id] = BufferedTail{nullptr, existing->size, 0};
      if (!superblock_.tenants.empty()) writer_room_[id] = room;
      ++handles_;
      file.reset(
          new WritableFile(*this, id, existing->size, existing->lifetime, existing->io_class));
      return file;
    }
    if (existing != nullptr) {
      Record unlinked;
      unlinked.type = RecordType::kNameUnlinked;
      unlinked.path = path;
      FileId old = existing->id;
      if (FsStatus ok = apply_locked(unlinked); !ok) return ok;
      if (meta_.file(old) == nullptr) ++counters_.files_deleted;
    }
    Record created;
    created.type = RecordType::kFileCreated;
    created.id = meta_.next_id();
    created.lifetime = options.lifetime;
    created.io_class = options.io_class;
    created.mtime_ns = now_ns();
    if (FsStatus ok = apply_locked(created); !ok) return ok;
    Record linked;
    linked.type = RecordType::kNameLinked;
    linked.id = created.id;
    linked.path = path;
    if (FsStatus ok = apply_locked(linked); !ok) return ok;
    ++counters_.files_created;
    meta_.hold(created.id);
    buffered_[created.id] = BufferedTail{};
    if (!superblock_.tenants.empty()) writer_room_[created.id] = room;
    ++handles_;
    file.reset(new WritableFile(*this, created.id, 0, options.lifetime, options.io_class));
  }
  // As after open(2), the name is durable with the next commit: the file's
  // sync or close, or a directory sync.
  return file;
}

FsResult<std::unique_ptr<ReadableFile>> ZonedFs::open_read(const std::string& path) {
  if (FsStatus ok = check_path(path); !ok) return ok;
  std::lock_guard lock(mutex_);
  if (meta_.is_dir(path)) {
    return FsStatus(Code::kIsDirectory, fmt::format("{} is a directory", path));
  }
  const FileNode* node = meta_.lookup(path);
  if (node == nullptr) return FsStatus(Code::kNotFound, fmt::format("no file {}", path));
  meta_.hold(node->id);
  ++handles_;
  return std::unique_ptr<ReadableFile>(new ReadableFile(*this, node->id));
}

// --- inspection --------------------------------------------------------------

namespace {

// A data zone's share of the space (FsSpace, or a zone set's FsSetSpace).
template <typename Space>
void count_zone(Space& space, const DataZone& z, uint64_t bs) {
  ++space.data_zones;
  if (z.empty()) ++space.empty_zones;
  if (z.active()) ++space.active_zones;
  space.free_bytes += z.room_lbas() * bs;
  space.used_bytes += z.live_blocks * bs;
  space.reclaimable_bytes += z.garbage_blocks() * bs;
  if (z.finished) space.lost_bytes += (z.capacity_lbas - z.wp_lbas) * bs;
}

// The zones' space (FsSpace, or a zone set's FsSetSpace) as JSON, in the
// order stats_json and the sets give it.
template <typename Space>
nlohmann::ordered_json zone_space_json(const Space& s) {
  return {{"zone_bytes", s.zone_bytes},
          {"data_zones", s.data_zones},
          {"empty_zones", s.empty_zones},
          {"active_zones", s.active_zones},
          {"free_bytes", s.free_bytes},
          {"used_bytes", s.used_bytes},
          {"reclaimable_bytes", s.reclaimable_bytes},
          {"lost_bytes", s.lost_bytes}};
}

}  // namespace

nlohmann::ordered_json space_sets_json(const FsSpace& s, const Superblock& sb) {
  nlohmann::ordered_json sets = nlohmann::ordered_json::array();
  for (size_t i = 0; i < s.sets.size(); ++i) {
    const FsSetSpace& set = s.sets[i];
    nlohmann::ordered_json j = {{"set", i}};
    if (i < sb.zone_sets.size()) {
      j["zones"] = sb.zone_sets[i].count;
      j["zone_size_bytes"] = sb.zone_sets[i].size_lbas * sb.block_bytes;
    }
    j.update(zone_space_json(set));
    j["data_written_bytes"] = set.data_written_bytes;
    j["gc_written_bytes"] = set.gc_written_bytes;
    j["written_bytes"] = set.written_bytes;
    j["write_amplification"] = set.write_amplification;
    sets.push_back(j);
  }
  return sets;
}

std::vector<uint32_t> set_mask_sets(uint32_t sets) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < 32; ++i) {
    if ((sets & set_bit(i)) != 0) out.push_back(i);
  }
  return out;
}

std::string set_mask_text(uint32_t sets) {
  return fmt::format("{}", fmt::join(set_mask_sets(sets), ","));
}

nlohmann::ordered_json space_tenants_json(const FsSpace& s) {
  nlohmann::ordered_json tenants = nlohmann::ordered_json::array();
  for (const FsTenantSpace& t : s.tenants) {
    nlohmann::ordered_json j = {{"tenant", t.name}, {"directory", "/" + t.name}};
    j["sets"] = set_mask_sets(t.sets);
    j.update(zone_space_json(t.space));
    j["files"] = t.files;
    j["file_bytes"] = t.file_bytes;
    j["data_written_bytes"] = t.space.data_written_bytes;
    j["gc_written_bytes"] = t.space.gc_written_bytes;
    j["written_bytes"] = t.space.written_bytes;
    j["write_amplification"] = t.space.write_amplification;
    tenants.push_back(j);
  }
  return tenants;
}

FsSpace ZonedFs::space_locked() const {
  FsSpace s;
  const uint64_t bs = io_.block_bytes();
  const bool sets = !io_.info().uniform_zones();
  if (sets) s.sets.resize(io_.info().zone_sets.size());
  for (const DataZone& z : zones_->zones()) {
    const uint64_t zone_bytes = z.capacity_lbas * bs;
    if (s.zone_bytes == 0 || zone_bytes < s.zone_bytes) s.zone_bytes = zone_bytes;
    s.size_bytes += zone_bytes;
    count_zone(s, z, bs);
    if (sets) {
      s.sets[z.set].zone_bytes = zone_bytes;
      count_zone(s.sets[z.set], z, bs);
    }
  }
  for (const auto& [id, node] : meta_.files()) {
    if (node.nlink == 0) continue;
    ++s.files;
    s.file_bytes += node.size;
  }
  const FsCounters c = counters_locked();
  uint64_t appended = 0;
  for (uint64_t b : c.appended_bytes) appended += b;
  uint64_t written = 0;
  for (uint64_t b : c.device_written_bytes) written += b;
  s.write_amplification =
      appended == 0 ? 0.0 : static_cast<double>(written) / static_cast<double>(appended);
  for (size_t i = 0; i < s.sets.size() && i < c.set_written_bytes.size(); ++i) {
    const auto& bytes = c.set_written_bytes[i];
    uint64_t all = 0;
    for (uint64_t b : bytes) all += b;
    const uint64_t data = bytes[static_cast<size_t>(WriteCause::kData)];
    s.sets[i].gc_written_bytes = bytes[static_cast<size_t>(WriteCause::kGc)];
    s.sets[i].data_written_bytes = data;
    s.sets[i].written_bytes = all;
    s.sets[i].write_amplification =
        data == 0 ? 0.0 : static_cast<double>(all) / static_cast<double>(data);
  }
  for (const SuperTenant& t : superblock_.tenants) {
    FsTenantSpace tenant;
    tenant.name = t.name;
    tenant.sets = t.sets;
    tenant.space = sum_of_sets(s.sets, t.sets);
    s.tenants.push_back(std::move(tenant));
  }
  if (!s.tenants.empty()) {
    for (const auto& [path, id] : meta_.names()) {
      const uint32_t t = tenant_of(path);
      const FileNode* node = meta_.file(id);
      if (t == kNoTenant || node == nullptr) continue;
      ++s.tenants[t].files;
      s.tenants[t].file_bytes += node->size;
    }
  }
  return s;
}

FsSpace ZonedFs::space() const {
  std::lock_guard lock(mutex_);
  return space_locked();
}

FsCounters ZonedFs::counters() const {
  std::lock_guard lock(mutex_);
  return counters_locked();
}

uint64_t ZonedFs::token_revocations() const {
  std::lock_guard lock(mutex_);
  return zones_->revocations();
}

std::string ZonedFs::dump_json() const {
  using Json = nlohmann::ordered_json;
  std::lock_guard lock(mutex_);
  Json out;
  out["uuid"] = uuid_text(superblock_.uuid);
  out["block_bytes"] = io_.block_bytes();
  out["meta_zones"] = superblock_.meta_zones;
  out["journal"] = {{"active_zone", journal_->active_zone()}, {"sequence", journal_->sequence()}};
  Json dirs = Json::array();
  for (const std::string& d : meta_.dirs()) dirs.push_back(d);
  out["directories"] = dirs;
  std::map<FileId, std::vector<std::string>> names;
  for (const auto& [path, id] : meta_.names()) names[id].push_back(path);
  Json files = Json::array();
  for (const auto& [id, node] : meta_.files()) {
    Json extents = Json::array();
    for (const Extent& e : node.extents) {
      extents.push_back({{"zone", e.zone}, {"lba", e.lba}, {"length", e.length}});
    }
    files.push_back({{"id", id},
                     {"names", names[id]},
                     {"size", node.size},
                     {"lifetime", lifetime_name(node.lifetime)},
                     {"io_class", io_class_name(node.io_class)},
                     {"mtime_ns", node.mtime_ns},
                     {"extents", extents}});
  }
  out["files"] = files;
  Json zones = Json::array();
  for (const DataZone& z : zones_->zones()) {
    const char* state = z.empty() ? "empty" : z.finished ? "finished" : "part-written";
    Json zone = {{"zone", z.index},
                 {"state", state},
                 {"written_blocks", z.wp_lbas},
                 {"live_blocks", z.live_blocks},
                 {"lifetime", lifetime_name(z.lifetime)},
                 {"io_class", io_class_name(z.io_class)},
                 {"held", z.held()}};
    if (auto it = meta_.owners().find(z.index); it != meta_.owners().end()) {
      zone["last_taken_by"] = it->second.id;
      zone["last_taken_at_lba"] = it->second.lba;
    }
    if (uint32_t group = zones_->view(z).group; group != kNoGroup) zone["group"] = group;
    if (zones_->set_count() > 1) zone["set"] = z.set;
    zones.push_back(zone);
  }
  out["zones"] = zones;
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string ZonedFs::stats_json() const {
  using Json = nlohmann::ordered_json;
  std::lock_guard lock(mutex_);
  const FsSpace s = space_locked();
  const FsCounters c = counters_locked();
  Json by_class = Json::object();
  for (size_t i = 0; i < kIoClassCount; ++i) {
    by_class[io_class_name(static_cast<IoClass>(i))] = {{"appended_bytes", c.appended_bytes[i]},
                                                        {"written_bytes", c.data_written_bytes[i]}};
  }
  Json out;
  out["space"] = zone_space_json(s);
  out["space"]["files"] = s.files;
  out["space"]["file_bytes"] = s.file_bytes;
  out["space"]["write_amplification"] = s.write_amplification;
  if (!s.sets.empty()) out["space"]["sets"] = space_sets_json(s, superblock_);
  if (!s.tenants.empty()) out["space"]["tenants"] = space_tenants_json(s);
  out["files"] = {{"created", c.files_created},
                  {"deleted", c.files_deleted},
                  {"syncs", c.syncs},
                  {"by_class", by_class}};
  out["gc"] = {{"zones_collected", c.gc_runs}, {"copied_bytes", c.gc_copied_bytes}};
  uint64_t resets = c.zones_reset;
  out["zones"] = {
      {"reset", resets},
      {"reset_without_copy", c.zones_reset_without_copy},
      {"reset_without_copy_share",
       resets == 0 ? 0.0
                   : static_cast<double>(c.zones_reset_without_copy) / static_cast<double>(resets)},
      {"finished_threshold", c.zones_finished_threshold},
      {"finished_for_token", c.zones_finished_for_token},
      {"token_waits", c.token_waits},
      {"last_resort_placements", c.last_resort_placements},
      {"set_fallbacks", c.set_fallbacks},
      {"token_revocations", zones_->revocations()},
      {"open_limit", zones_->limits().open},
      {"active_limit", zones_->limits().active}};
  out["placement"] = {{"policy", std::string(policy_->name())},
                      {"striped_rounds", c.striped_rounds},
                      {"compaction_read_waits", c.compaction_read_waits}};
  out["write_behind"] = {{"on", writes_behind()},
                         {"writes", behind_counters_.writes},
                         {"waits", behind_counters_.waits},
                         {"wait_s", static_cast<double>(behind_counters_.wait_ns) / 1e9}};
  out["journal"] = {{"commits", c.journal_commits},
                    {"rolls", c.journal_rolls},
                    {"active_zone", journal_->active_zone()},
                    {"sequence", journal_->sequence()}};
  out["recovered_tail_bytes"] = c.recovered_tail_bytes;
  Json written = Json::object();
  for (size_t i = 0; i < kWriteCauseCount; ++i) {
    written[write_cause_name(static_cast<WriteCause>(i))] = c.device_written_bytes[i];
  }
  out["written_bytes"] = written;
  out["device_io"] = Json::parse(io_.counters_json());
  return out.dump();
}

}  // namespace zonelab::fs
