// The zoned file system: ZenFS's design (seed 000 §4.2) on a zonelab device
// stack. Files are lists of extents in data zones; metadata lives in a
// journal on dedicated metadata zones (journal.h); a placement policy
// (placement.h) chooses where data goes, within the open and active zone
// tokens (zones.h); garbage collection moves live data out of zones that
// are mostly garbage and resets them.
//
// It talks to the device only through the stack's blocking interface and
// queries (device_io.h), so the same code runs in virtual time (one caller;
// each I/O advances the simulation to its completion -- tests, tools) and
// in real time (RocksDB's threads; the device paced to the wall clock).
// Every public method is safe to call from any thread in real time.
//
// Guarantees (docs/fs.md):
//   - data a file's sync() or close() returned from is durable with its
//     size; a name created, renamed, linked or removed, a directory made or
//     removed, is durable when the call returns;
//   - data is written before the journal records that refer to it; a zone
//     is reset only after the records that free it are durable; a writer
//     records that it took a zone, durably, before its first write there;
//   - recovery gives the state of the last durable journal group, plus --
//     from the device's write pointers -- the whole blocks a file still
//     being written had put on the device past its last record (the tail of
//     a zone the file held); space written but never recorded is garbage,
//     never reused unreset.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "fs/device_io.h"
#include "fs/fs_device.h"
#include "fs/izg.h"
#include "fs/journal.h"
#include "fs/metadata.h"
#include "fs/placement.h"
#include "fs/status.h"
#include "fs/zones.h"
#include "stack/stack.h"

namespace zonelab::fs {

// Data zones kept active when the device sets no limit (seed 000 §4.2: more
// than 12 add nothing measurable).
inline constexpr uint32_t kActiveZonesDefault = 16;

struct MkfsOptions {
  uint32_t meta_zones = 2;
  // Finish a data zone when a writer lets it go with less than this share of
  // its capacity left (ZenFS's finish threshold), in percent.
  uint32_t finish_threshold_pct = 0;
  // Garbage collection keeps at least this share of the data zones empty,
  // in percent.
  uint32_t gc_free_pct = 10;
  std::string policy = "zenfs";
  // The policy's options, "key=value" pairs separated by commas
  // (placement.h lists each policy's).
  std::string policy_options;
  // On a namespace of zone sets (FlexZNS): the set the hot levels' data
  // goes to ("" : the set of the smallest zones; "none": every level in
  // every set), and those levels ("wal,L0,L1"; placement.h's DataLevel).
  std::string hot_set;
  std::string hot_levels = "wal,L0,L1";
  // With a hot set: the other levels' data goes to the hot set too while
  // the hot set holds a smaller share of its capacity in live data than the
  // other sets, so that the sets fill alike (the superblock's spill_cold).
  bool spill_cold = false;
  // Tenants, "NAME=SETS" each (SETS: zone set numbers, "0" or "1,2"): the
  // files under /NAME use those sets only, and no other file does.
  std::vector<std::string> tenants;
  // Seeds the file system's UUID (a random one when not given).
  std::optional<uint64_t> uuid_seed;
  // Overwrite a device that holds a file system.
  bool force = false;
};

// What mkfs found on the way: the IZG probe's result when the policy wanted
// a map, and what a user must hear (a probe that could not tell groups
// apart, and the fallback taken).
struct MkfsReport {
  std::optional<IzgProbeResult> probe;
  std::vector<std::string> warnings;
  std::string policy_state;  // what the metadata keeps
};

// Checks options against a device; the message names the bad option.
FsStatus check_mkfs_options(const MkfsOptions& options, const DeviceInfo& info, bool stores_data);
// The hot set and levels mkfs records for these options on this device
// (kNoHotSet and 0 on a namespace of equal zones).
FsResult<std::pair<uint32_t, uint32_t>> hot_placement(const MkfsOptions& options,
                                                      const DeviceInfo& info);
// The tenants mkfs records for these options on this device: each named
// once, with sets that exist, hold data zones and no other tenant has.
FsResult<std::vector<SuperTenant>> mkfs_tenants(const MkfsOptions& options, const DeviceInfo& info);

struct MountOptions {
  // Nothing is written to the device: no recovery roll, no reset, no file
  // changes (fsck, ls, cat). The stack may be read-only.
  bool read_only = false;
  // Garbage collection: in the foreground when a writer finds no empty
  // zone, and in the background (a timer on the stack's clock every
  // `gc_period_ns` of device time). Without it a full device answers
  // NoSpace.
  bool gc = true;
  uint64_t gc_period_ns = 100'000'000;
  // Bytes a writer buffers before it writes whole blocks out.
  uint64_t write_buffer_bytes = 1 << 20;
  // In real time: a writer's full buffer goes to the device while its next
  // buffer fills (one write in flight per file, as a kernel's writeback
  // keeps a file's pages going out while the application writes on); the
  // writer waits only when the next buffer fills first, and at sync, flush
  // and close. Off, or in virtual time, every write is made before append
  // returns.
  bool write_behind = true;
  // Bytes a sequential reader reads ahead.
  uint64_t readahead_bytes = 256 << 10;
  // In real time, how long a writer waits for an open or active token that
  // every other writer is using, before it gives up with kBusy.
  uint64_t token_wait_ms = 60'000;
  // fsck's mount: a file whose extents reach past what its zone holds (data
  // the device lost) is cut to the data that is there -- in memory, or
  // journaled on a writable mount -- instead of the mount being refused;
  // fsck reports each cut as damage, or as a repair.
  bool cut_lost_data = false;
  // fsck --repair's mount: a damaged journal (a group below the write
  // pointer that does not check; journal.h) is cut there -- the records
  // after it are lost, each file and name they changed reported among the
  // cuts -- instead of the mount being refused. No tails are given back
  // then: which writer held a zone was in the records lost.
  bool cut_damaged_journal = false;
};
FsStatus check_mount_options(const MountOptions& options);

struct FileStat {
  bool is_dir = false;
  uint64_t size = 0;
  uint64_t mtime_ns = 0;
  uint32_t nlink = 0;
  FileId id = 0;
  Lifetime lifetime = Lifetime::kNotSet;
  IoClass io_class = IoClass::kOther;
  std::vector<Extent> extents;
};

// What the file system has done, for df, dump and the benchmarks: since it
// was made (the counters are journaled at unmount and whenever the journal
// starts a zone, so a crash loses at most what came after).
struct FsCounters {
  uint64_t appended_bytes[kIoClassCount] = {};      // what files were given, by class
  uint64_t data_written_bytes[kIoClassCount] = {};  // what went to the device for them
  uint64_t files_created = 0;
  uint64_t files_deleted = 0;
  uint64_t syncs = 0;
  uint64_t gc_runs = 0;          // zones garbage collection emptied
  uint64_t gc_copied_bytes = 0;  // live bytes it moved
  uint64_t zones_reset = 0;
  uint64_t zones_reset_without_copy = 0;  // reset with no live data moved out first
  uint64_t zones_finished_threshold = 0;  // left with less than the finish threshold
  uint64_t zones_finished_for_token = 0;  // to free an active token
  uint64_t token_waits = 0;               // writers that waited for a token
  uint64_t journal_commits = 0;           // groups written
  uint64_t journal_rolls = 0;             // metadata zones started
  uint64_t recovered_tail_bytes = 0;      // given back to files at mount
  uint64_t last_resort_placements = 0;    // no empty zone: data went where there was room
  uint64_t striped_rounds = 0;            // rounds of striped writes (each in flight together)
  uint64_t compaction_read_waits = 0;     // compaction reads that waited for a flush's group
  uint64_t set_fallbacks = 0;             // zones taken outside a writer's sets: its own were full
  uint64_t device_written_bytes[kWriteCauseCount] = {};  // all the file system wrote, by cause
  // On a namespace of several zone sets: what it wrote into each set's
  // zones, by cause (empty on a namespace of equal zones).
  std::vector<std::array<uint64_t, kWriteCauseCount>> set_written_bytes;
};

// FsCounters as the values of a counters record (kCounters), and back. The
// scalars come first, in a fixed order; then, with zone sets, their count
// and each set's bytes by cause.
std::vector<uint64_t> counter_values(const FsCounters& counters);
FsCounters counters_of(const std::vector<uint64_t>& values);

// One zone set's share of the data zones (a namespace of several zone
// sizes; FsSpace::sets).
struct FsSetSpace {
  uint64_t zone_bytes = 0;  // one zone's capacity
  uint32_t data_zones = 0;
  uint32_t empty_zones = 0;
  uint32_t active_zones = 0;
  uint64_t free_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t reclaimable_bytes = 0;
  uint64_t lost_bytes = 0;
  // Bytes written into the set's zones (data, padding, metadata, garbage
  // collection) / data bytes written into them, since the file system was
  // made: the set's garbage collection and padding overhead.
  double write_amplification = 0;
  uint64_t gc_written_bytes = 0;
  uint64_t data_written_bytes = 0;  // files' data written into the set
  uint64_t written_bytes = 0;       // everything written into the set
};

// A tenant's share (seed 001 §IV-D): its zone sets' space and writes added
// up, and its files (those under /NAME).
struct FsTenantSpace {
  std::string name;
  uint32_t sets = 0;  // bit i: zone set i
  FsSetSpace space;   // zone_bytes: the smallest of its zones
  uint64_t files = 0;
  uint64_t file_bytes = 0;
};

struct FsSpace {
  uint64_t zone_bytes = 0;  // the smallest data zone's capacity
  uint64_t size_bytes = 0;  // every data zone's capacity
  uint32_t data_zones = 0;
  uint32_t empty_zones = 0;
  uint32_t active_zones = 0;
  uint64_t free_bytes = 0;         // empty zones plus room in zones written part way
  uint64_t used_bytes = 0;         // held by files (whole blocks)
  uint64_t reclaimable_bytes = 0;  // written but held by no file
  uint64_t lost_bytes = 0;         // left unwritten in zones finished early
  uint64_t file_bytes = 0;         // the files' sizes
  uint64_t files = 0;
  // Bytes the file system wrote to the device (data, padding, metadata,
  // garbage collection) / bytes files were given, since it was made.
  double write_amplification = 0;
  // Each zone set, in LBA order, on a namespace of several zone sizes
  // (empty otherwise).
  std::vector<FsSetSpace> sets;
  // Each tenant, in the superblock's order (empty without tenants).
  std::vector<FsTenantSpace> tenants;
};

// FsSpace::sets as JSON (stats_json's space.sets, fs df --json).
nlohmann::ordered_json space_sets_json(const FsSpace& space, const Superblock& sb);
// FsSpace::tenants as JSON (stats_json's space.tenants, fs df --json).
nlohmann::ordered_json space_tenants_json(const FsSpace& space);
// A set mask's sets, in order, and as text: "0,2".
std::vector<uint32_t> set_mask_sets(uint32_t sets);
std::string set_mask_text(uint32_t sets);

class WritableFile;
class ReadableFile;

class ZonedFs {
 public:
  ~ZonedFs();
  ZonedFs(const ZonedFs&) = delete;
  ZonedFs& operator=(const ZonedFs&) = delete;

  // Makes an empty file system on the device (a stack's, or any FsDevice).
  static FsStatus mkfs(FsDevice& device, const MkfsOptions& options, MkfsReport* report = nullptr);
  static FsStatus mkfs(Stack& stack, const MkfsOptions& options, MkfsReport* report = nullptr);
  // Recovers the file system on the device and makes it usable. The device
  // must outlive the file system.
  static FsResult<std::unique_ptr<ZonedFs>> mount(FsDevice& device,
                                                  const MountOptions& options = {});
  static FsResult<std::unique_ptr<ZonedFs>> mount(Stack& stack, const MountOptions& options = {});

  // Commits what is pending and stops background work. Every file must be
  // closed first.
  FsStatus unmount();

  // --- namespace
  // Makes a directory (with `parents`, the missing ones above it too; an
  // existing directory is then no error).
  FsStatus create_dir(const std::string& path, bool parents);
  FsStatus remove_dir(const std::string& path);
  FsResult<std::vector<std::string>> list(const std::string& dir) const;
  FsResult<FileStat> stat(const std::string& path) const;
  bool exists(const std::string& path) const;
  FsStatus remove(const std::string& path);
  // Renames a file (replacing a file at `to`) or a directory with
  // everything below it (replacing an empty directory at `to`), atomically:
  // one journal record, durable when the call returns.
  FsStatus rename(const std::string& from, const std::string& to);
  FsStatus link(const std::string& from, const std::string& to);
  FsStatus truncate(const std::string& path, uint64_t size);
  // Makes every change so far durable (RocksDB's directory fsync).
  FsStatus sync_metadata();
  // Advisory locks (RocksDB's LOCK file): the file is made if missing; a
  // second lock of the same path fails with kBusy until unlocked.
  FsStatus lock_file(const std::string& path);
  FsStatus unlock_file(const std::string& path);

  // --- files
  struct WriteOptions {
    Lifetime lifetime = Lifetime::kNotSet;
    IoClass io_class = IoClass::kOther;
    bool append = false;  // keep an existing file's data and write after it
  };
  // Creates (or truncates, or with `append` reopens) a file for writing. A
  // file has at most one writer.
  FsResult<std::unique_ptr<WritableFile>> open_write(const std::string& path,
                                                     const WriteOptions& options);
  FsResult<std::unique_ptr<ReadableFile>> open_read(const std::string& path);

  // --- inspection
  const Superblock& superblock() const { return superblock_; }
  const PlacementPolicy& policy() const { return *policy_; }
  bool read_only() const { return options_.read_only; }
  FsSpace space() const;
  FsCounters counters() const;
  const DeviceCounters& device_counters() const { return io_.counters(); }
  uint64_t token_revocations() const;
  // Every zone and file as JSON (fs dump).
  std::string dump_json() const;
  // Counters, space and the device's own counters as JSON (one object).
  std::string stats_json() const;
  // The active metadata zone's header sequence (one more each time the
  // journal starts a zone).
  uint64_t journal_sequence() const { return journal_->sequence(); }
  uint32_t journal_zone() const { return journal_->active_zone(); }
  // Commits what is pending and resets the zones nothing holds any more.
  FsStatus reclaim();
  // What recovery noticed (a torn journal tail, a file's recovered tail),
  // one line each.
  const std::vector<std::string>& recovery_notes() const { return notes_; }
  DeviceIo& io() { return io_; }
  uint64_t block_bytes() const { return io_.block_bytes(); }
  // Open files (handles), for checks at unmount.
  uint64_t open_handles() const;

  // Runs garbage collection until `free_zones` data zones of each zone set
  // are empty or no zone of the set has garbage; returns the zones it
  // emptied.
  FsResult<uint32_t> collect_garbage(uint32_t free_zones, SetMask sets = kAllSets);

  // Checks every invariant (fsck.cc); with `repair`, mends what it can.
  struct FsckReport {
    std::vector<std::string> problems;  // damage found, one line each
    std::vector<std::string> repairs;   // what was mended, nothing lost
    // What a repair gave up to make the file system consistent: data or
    // names the journal held that are gone now (a file cut to the data its
    // zones hold, records after a damaged journal group). A repair with
    // losses is not a clean outcome: programs may not open their files.
    std::vector<std::string> losses;
    uint64_t files = 0;
    uint64_t extents = 0;
    uint64_t journal_groups = 0;
    bool clean() const { return problems.empty(); }
  };
  FsckReport fsck(bool repair);

 private:
  friend class WritableFile;
  friend class ReadableFile;

  ZonedFs(FsDevice& device, std::unique_ptr<FsDevice> owned, const MountOptions& options);
  static FsResult<std::unique_ptr<ZonedFs>> mount_on(FsDevice& device,
                                                     std::unique_ptr<FsDevice> owned,
                                                     const MountOptions& options);
  FsStatus recover();
  // The tails of files a crash left being written (see the top of this
  // file), as extent-added records; under mutex_.
  void recover_tails();
  FsStatus check_extents_against_zones();
  // With MountOptions::cut_lost_data: files cut to the data their zones
  // hold; under mutex_, before the zones count live blocks.
  void cut_lost_data();
  // After journal damage (read-only, or MountOptions::cut_damaged_journal):
  // what the records after it would have changed, into cuts_; files whose
  // extents lie in zones those records show rewritten are cut; no zone
  // keeps an owner whose tail recovery could give. Under mutex_, after the
  // replay, before the zones count live blocks.
  void cut_at_journal_damage(const Recovered& rec);
  // After journal damage: which writer last took each zone was in the
  // records lost, so no zone's tail is anybody's any more (zone-taken
  // records of nobody, journaled on a writable mount). Under mutex_.
  void forget_zone_owners();
  // Cuts each file before its first extent `gone` names (kSizeSet records,
  // journaled on a writable mount), each cut into cuts_ with `why`.
  void cut_files(const std::function<bool(const Extent&)>& gone, const std::string& why);
  std::string file_label_locked(FileId id) const;

  // Applies a record to the metadata and the zones, and queues it for the
  // journal unless `journal` is false (a file with no name left: gone after a
  // restart whatever happens to it). Under mutex_.
  FsStatus apply_locked(const Record& record, bool journal = true);
  // Applies a record for an open file: journaled unless the file lost its
  // last name.
  FsStatus apply_for_file(const Record& record, FileId id);
  // Writes the queued records (and anything queued before them). Not under
  // mutex_.
  FsStatus commit();
  Journal::Batch take_batch(uint64_t room_bytes);
  // Resets the zones that hold nothing any more. Not under mutex_.
  FsStatus reset_free_zones();
  // After a change that freed space: commits it, then resets the zones
  // that hold nothing if the policy resets them as soon as they do (else
  // its collections do). Not under mutex_.
  FsStatus reset_freed();
  // Whether writers' full buffers go out behind them
  // (MountOptions::write_behind; real time only).
  bool writes_behind() const { return options_.write_behind && device_.concurrent(); }
  FsStatus fail(FsStatus status);   // the file system stops taking writes
  FsStatus check_writable() const;  // under mutex_
  uint64_t now_ns() const;
  FsSpace space_locked() const;
  FsCounters counters_locked() const;  // with the device's bytes
  // A counters record with today's totals, applied (and journaled).
  void record_counters_locked();

  // For writers (files and garbage collection): a zone held by `writer`
  // with room, marked as being written, and durably recorded as the
  // writer's (may finish a zone, reset zones, collect garbage or wait to
  // find one). Not under mutex_.
  // `stripe`: the zones a striped writer holds for its other slots; such a
  // writer's zones are recorded as nobody's (`gives_tail` false), so that
  // recovery never gives a stripe's blocks past the last record back out
  // of order.
  FsResult<uint32_t> allocate_zone(WriterId writer, Lifetime lifetime, IoClass io_class,
                                   std::span<const uint32_t> stripe = {}, bool gives_tail = true);
  // One attempt that neither waits, finishes, resets nor collects: a zone
  // for a stripe slot, or none.
  FsResult<std::optional<uint32_t>> try_allocate_zone(WriterId writer, Lifetime lifetime,
                                                      IoClass io_class,
                                                      std::span<const uint32_t> stripe);
  // Writes `blocks` blocks (of which `valid_bytes` are the file's, the rest
  // padding) for `writer` into its zone(s), calling `placed` (under mutex_)
  // with each extent written. `zone` is the writer's current zone, if any,
  // and is updated. Not under mutex_.
  using PlacedFn = std::function<FsStatus(const Extent&)>;
  // A striped writer (placement.h, stripe_width): the zone each slot holds,
  // the slot the next unit goes to and what is left of that unit.
  struct Stripe {
    std::vector<std::optional<uint32_t>> slots;
    uint32_t next = 0;
    uint64_t unit_left = 0;  // blocks
  };
  // As write_blocks, over the stripe's slots: each round writes one piece
  // into each slot's zone, all in flight at once, and records the extents
  // in file order once every piece has completed -- so the journal never
  // holds a later unit without the earlier ones.
  FsStatus write_striped(WriterId writer, Lifetime lifetime, IoClass io_class, Stripe& stripe,
                         const uint8_t* data, uint64_t blocks, uint64_t valid_bytes,
                         WriteCause cause, const PlacedFn& placed);
  // The stripe width the policy gives a writer of this kind.
  uint32_t stripe_width_for(Lifetime lifetime, IoClass io_class);
  FsStatus write_blocks(WriterId writer, Lifetime lifetime, IoClass io_class,
                        std::optional<uint32_t>& zone, const uint8_t* data, uint64_t blocks,
                        uint64_t valid_bytes, WriteCause cause, const PlacedFn& placed);
  // The zone is `writer`'s, being written, and a zone-taken record for it
  // applied (under mutex_); then that record made durable, or the zone let
  // go (not under mutex_).
  void mark_taken_locked(uint32_t zone, WriterId writer, bool gives_tail = true);
  FsResult<uint32_t> commit_taken(uint32_t zone);
  // A writer lets go of its zone (finishing it if the policy says so). Not
  // under mutex_.
  void release_zone(uint32_t zone, WriterId writer);
  // For readers: extents pinned against reset while they are read. Under
  // mutex_.
  void pin(const std::vector<Extent>& extents);
  void unpin(const std::vector<Extent>& extents);
  void release_file(FileId id);  // a handle closed

  FsStatus gc_one_zone(uint32_t victim);
  // A policy's collection in units of a stripe (gc_unit() > 1): the
  // victims' live extents are read several at once and copied over a
  // stripe of zones in different groups, then the victims are reset.
  FsStatus gc_zones(const std::vector<uint32_t>& victims);
  // A collection's copy of `from` becomes the file's (`to`, journaled);
  // false when the file went or changed meanwhile (the copy is garbage).
  // Under mutex_.
  FsResult<bool> move_extent_locked(FileId id, const Extent& from, std::vector<Extent> to);
  // Resets a victim once its records are durable and its readers gone.
  FsStatus reset_victim(uint32_t victim, uint64_t copied);
  // Sets the next background collection (under mutex_).
  void schedule_background_gc();
  void background_gc();
  // The empty zones garbage collection keeps in a zone set.
  uint32_t gc_target_zones(uint32_t set) const;
  // collect_garbage in one zone set: victims from it, copies into it.
  FsResult<uint32_t> collect_garbage_in(uint32_t set, uint32_t free_zones);
  // The zone sets a writer may take zones in (every set but for garbage
  // collection's copies, which stay in the set being collected).
  SetMask writer_sets(WriterId writer, Lifetime lifetime, IoClass io_class) const;
  // Tenants (seed 001 §IV-D): the tenant a path lies in (an index into the
  // superblock's tenants, kNoTenant for none), the sets its files may use
  // (kNoTenant: the sets no tenant has; every set without tenants), and
  // the sets a writer's file may use.
  static constexpr uint32_t kNoTenant = UINT32_MAX;
  uint32_t tenant_of(std::string_view path) const;
  // The tenant whose directory `path` is (kNoTenant: none's).
  uint32_t tenant_root_of(std::string_view path) const;
  SetMask tenant_sets(uint32_t tenant) const;
  SetMask writer_room(WriterId writer) const;  // under mutex_
  // Refuses a name that would carry a file out of its tenant.
  FsStatus check_tenant_move(const std::string& from, const std::string& to) const;

  std::unique_ptr<FsDevice> owned_device_;  // the stack's, when mounted from one
  FsDevice& device_;
  DeviceIo io_;
  MountOptions options_;
  Superblock superblock_;
  std::unique_ptr<PlacementPolicy> policy_;
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<ZoneManager> zones_;

  mutable std::mutex mutex_;         // everything below
  std::condition_variable changed_;  // tokens or zones freed, readers gone
  Metadata meta_;
  std::vector<uint8_t> pending_;  // encoded records not yet in the journal
  uint64_t applied_seq_ = 0;      // journaled records applied since mount
  uint64_t durable_seq_ = 0;      // of those, in the journal
  // Each open writer's bytes not yet on the device, which readers read from
  // its buffer as they would from a file system's page cache: `data` holds
  // the file's bytes [offset, offset + bytes). A writer changes those bytes
  // only under mutex_, and publishes here what it buffered.
  // With a write behind, the buffer going out holds the bytes just before
  // (`flight`: [offset - flight_bytes, offset)).
  struct BufferedTail {
    const uint8_t* data = nullptr;
    uint64_t offset = 0;
    uint64_t bytes = 0;
    const uint8_t* flight = nullptr;
    uint64_t flight_bytes = 0;
    uint64_t start() const { return offset - flight_bytes; }
    uint64_t end() const { return offset + bytes; }
  };
  std::map<FileId, BufferedTail> buffered_;
  // The bytes a reader sees of a file: the device's, and an open writer's
  // buffered ones after them (under mutex_).
  uint64_t readable_size_locked(const FileNode& node) const;
  std::map<FileId, SetMask> writer_room_;  // with tenants: each open writer's sets
  std::set<std::string> locked_;
  FsCounters counters_;  // device_written_bytes: what earlier mounts wrote
  // Since the mount, under mutex_ (not journaled): writes behind started,
  // and the times a writer waited for one still in flight, and how long
  // (wall ns).
  struct BehindCounters {
    uint64_t writes = 0;
    uint64_t waits = 0;
    uint64_t wait_ns = 0;
  } behind_counters_;
  std::vector<std::string> notes_;
  std::vector<std::string> cuts_;  // cut_lost_data: what was cut at mount
  std::string failure_;            // set once a write to the device failed
  uint64_t handles_ = 0;
  uint64_t gc_timer_ = 0;
  bool unmounted_ = false;
  std::mutex gc_mutex_;         // one collection at a time
  SetMask gc_sets_ = kAllSets;  // the set being collected (under gc_mutex_)
};

// A file open for writing: appends go into a buffer and out to the device in
// whole blocks; sync() writes the rest, padding the last block, and makes
// the data and the file's size durable.
class WritableFile {
 public:
  ~WritableFile();
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  FsStatus append(const uint8_t* data, uint64_t bytes);
  // Writes whole buffered blocks out (no padding, nothing made durable).
  FsStatus flush();
  FsStatus sync();
  FsStatus close();
  // Cuts the file to `size` (at most its size); synced first.
  FsStatus truncate(uint64_t size);
  uint64_t size() const { return size_; }
  // Lifetime and class of the data to come (RocksDB sets them before the
  // first write).
  void set_hints(Lifetime lifetime, IoClass io_class);
  Lifetime lifetime() const { return lifetime_; }
  IoClass io_class() const { return io_class_; }
  FileId id() const { return id_; }

 private:
  friend class ZonedFs;
  WritableFile(ZonedFs& fs, FileId id, uint64_t size, Lifetime lifetime, IoClass io_class);
  // Writes the first `blocks` blocks of `data` (`valid_bytes` of them the
  // file's) with the hints given.
  FsStatus write_out(const uint8_t* data, uint64_t blocks, uint64_t valid_bytes, Lifetime lifetime,
                     IoClass io_class);
  // The full buffer goes out: at once, or behind (MountOptions::write_behind)
  // while the other buffer fills.
  FsStatus write_full_buffer();
  // Waits for the write behind, if one is in flight; its status (a failed
  // one stays the file's: every later write answers it).
  FsStatus wait_behind();
  // At the first write: the stripe width the policy gives this file (its
  // hints are set by then), and a buffer of a whole stripe.
  void decide_stripe();
  // Under the file system's mutex: shows readers what the buffer holds.
  void publish_locked();

  ZonedFs& fs_;
  FileId id_;
  uint64_t size_;  // the file's bytes, buffered ones included
  Lifetime lifetime_;
  IoClass io_class_;
  std::vector<uint8_t> buffer_;
  uint64_t buffered_ = 0;
  // The write behind: the buffer going out, its bytes (0: none in flight),
  // the thread writing it and how it ended.
  std::vector<uint8_t> flight_;
  uint64_t flight_bytes_ = 0;
  std::thread behind_;
  std::atomic<bool> behind_done_{true};
  FsStatus behind_status_;
  std::optional<uint32_t> zone_;
  // Striped files: the width, decided at the first write (0: not yet; 1:
  // not striped), and the slots.
  uint32_t stripe_width_ = 0;
  ZonedFs::Stripe stripe_;
  bool closed_ = false;
};

// A file open for reading, at any offset (thread-safe); a sequential reader
// (read_next, one thread) reads ahead.
class ReadableFile {
 public:
  ~ReadableFile();
  ReadableFile(const ReadableFile&) = delete;
  ReadableFile& operator=(const ReadableFile&) = delete;

  // Reads up to `bytes` at `offset` into `out`; fewer at the end of the file.
  // `reader`: who reads (RocksDB's compaction reads are kCompaction), for
  // the policy's isolation.
  FsResult<uint64_t> read(uint64_t offset, uint64_t bytes, uint8_t* out,
                          IoClass reader = IoClass::kOther) const;
  // The next bytes after the last read_next (a sequential reader).
  FsResult<uint64_t> read_next(uint64_t bytes, uint8_t* out);
  FsStatus skip(uint64_t bytes);
  uint64_t size() const;
  FileId id() const { return id_; }

 private:
  friend class ZonedFs;
  ReadableFile(ZonedFs& fs, FileId id) : fs_(fs), id_(id) {}

  ZonedFs& fs_;
  FileId id_;
  uint64_t position_ = 0;
  // Readahead: bytes of the file from `ahead_offset_`.
  std::vector<uint8_t> ahead_;
  uint64_t ahead_offset_ = 0;
};

}  // namespace zonelab::fs
