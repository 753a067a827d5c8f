// Fuzz targets: functions that take arbitrary bytes and must neither crash
// nor break a round-trip property. libFuzzer drives them
// (fuzz/libfuzzer_main.cc, scripts/fuzz.sh); zonelab_fuzz_replay runs the
// committed corpus through them as an ordinary test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace zonelab {

// What every target checks: a broken property is reported on stderr, named
// by its target, and aborts; an error message must be one non-empty line.
[[noreturn]] void fuzz_violated(const char* target, const std::string& what);
void fuzz_check_message(const char* target, const std::string& message);

// The bytes as a whole device image. A decoded image must encode and decode
// back to the same state; a refused one must give a one-line message.
// Returns 0; a broken property calls abort().
int fuzz_image_decode(const uint8_t* data, size_t size);

// The bytes as a TOML configuration over the default one. An accepted
// configuration must print (config_to_toml), parse back onto an empty Config
// and print identically. Returns 0; a broken property calls abort().
int fuzz_config_toml(const uint8_t* data, size_t size);

// The bytes as a TOML job file (bench --job). A refused file must give a
// one-line message; an accepted one must hold 1 to 256 jobs whose every
// option lies within its documented limit. Returns 0; a broken property
// calls abort().
int fuzz_job_file(const uint8_t* data, size_t size);

// The bytes as an I/O trace (workload/trace.h): refused in one line, or
// taken with every operation inside the bounds it promises; a taken trace
// is checked against a small block and a small zoned device and, where the
// check passes, replayed without a crash, every operation completing.
int fuzz_trace(const uint8_t* data, size_t size);

// The zoned file system's journal records (fs/metadata.h): what decodes
// encodes back to the same bytes; applied in turn, each is taken or refused
// with one line, and a snapshot rebuilds what was taken.
int fuzz_fs_records(const uint8_t* data, size_t size);

// A superblock, and a metadata zone's header (fs/journal.h): what decodes
// encodes back to the same bytes; what is refused is refused in one line.
int fuzz_fs_superblock(const uint8_t* data, size_t size);

// Recovery (ZonedFs::mount) from a journal of arbitrary records on a small
// memory-backed device: byte 0 says how many open the header's snapshot,
// byte 1 how many go in a group, the rest are encoded records. A refused
// journal is refused in one line; a taken one gives a file system that
// fsck, reads and a write work on without a crash.
int fuzz_fs_journal(const uint8_t* data, size_t size);

// fs_journal's journal with bytes of its groups changed (byte 0: how many
// flips follow, 3 bytes each: offset u16, XOR mask; then fs_journal's
// input): damage below the write pointer. Read-only mounts take it as far
// as it checks or refuse it in one line; a writable mount of a damaged
// journal is refused in one line; fsck --repair's mount (cut the damage,
// cut lost data) leaves a file system a second fsck finds clean.
int fuzz_fs_journal_damage(const uint8_t* data, size_t size);

// A placement policy's options or stored state (fs/placement.h), and the
// IZG map's text (fs/izg.h): byte 0 picks the policy, bytes 1-2 the zone
// count, the rest is the text. A refused text is refused in one line; an
// accepted policy's state_text() makes the same policy again (the same
// text), and a decoded map encodes to a text that decodes to it.
int fuzz_fs_policy(const uint8_t* data, size_t size);

// The bytes as a sweep spec (sweep/sweep.h), parsed and expanded, never run:
// refused in one line naming the spec, or taken with 1 to kSweepPointsMax
// points, each with one coordinate per axis and a key, the same keys under
// another name (fuzz/sweep_fuzz_targets.cc).
int fuzz_sweep_spec(const uint8_t* data, size_t size);

// A vhost-user front end saying what the bytes say to a VhostUserBlkServer
// (serve/vhost_user_blk.h) over a real socket, the guest's memory a memfd
// whose first bytes the input gives (fuzz/serve_fuzz_targets.cc): the
// server ends when the socket closes, never touching memory it was not
// given, and the reason it ended a connection is one line.
int fuzz_vhost_user(const uint8_t* data, size_t size);

// The bytes as a stream hints file (serve/stream_hints.h), read in two
// appends: every split of the device covers it in order with streams it
// has, and no more records and ignored lines are counted than lines ended.
int fuzz_stream_hints(const uint8_t* data, size_t size);

// Seed inputs for the fs targets above, into DIR/fs_records,
// DIR/fs_superblock, DIR/fs_journal, DIR/fs_journal_damage and DIR/fs_policy; adds to
// `written`.
void write_fs_seeds(const char* dir, size_t& written);

}  // namespace zonelab
