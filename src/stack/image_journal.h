// The journal of a device image seen from the device (CommandLog): each
// command the device takes that changes its state becomes a record in the
// image's journal region, made durable before the device destroys data or
// reports a completion. When the region is full the stack saves the whole
// state instead (a checkpoint), which also holds the command at hand.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "controller/modeled_device.h"
#include "stack/command_record.h"
#include "store/image.h"

namespace zonelab {

class ImageJournal final : public CommandLog {
 public:
  // `checkpoint` saves the device's current state into the image;
  // `failed` is called once, at the first failure.
  ImageJournal(Image& image, std::function<Outcome()> checkpoint, std::function<void()> failed)
      : image_(image), checkpoint_(std::move(checkpoint)), failed_(std::move(failed)) {}

  void taken(const Command& command) override { append(CommandRecord::of(command)); }
  void injected(uint32_t zone, ZoneState state) override {
    append(CommandRecord::injected(zone, state));
  }
  void die_changed(uint32_t die, bool failed) override {
    append(CommandRecord::die_changed(die, failed));
  }
  void lost(uint32_t zone, uint64_t durable_lbas) override {
    append(CommandRecord::lost(zone, durable_lbas));
  }
  bool destroying() override { return flush(); }
  bool completing() override {
    if (!lazy_ || image_.journal_pending_bytes() >= kLazyFlushBytes) return flush();
    return error_.empty();
  }
  // Makes what was recorded durable; false once that failed.
  bool flush();
  // Lazy: completions are reported later (a benchmark's, at its end), so a
  // completion does not need its record durable at once; records are
  // written in batches, and always before data is destroyed.
  void set_lazy(bool lazy) { lazy_ = lazy; }

  // The first failure to make a record durable, or empty. Once set, the
  // image no longer holds everything the device did since its last save.
  const std::string& error() const { return error_; }
  uint64_t checkpoints() const { return checkpoints_; }

  // Records taken since the image was opened.
  uint64_t recorded() const { return recorded_.load(std::memory_order_acquire); }
  // Test hook: the power goes when `records` records have been taken: the
  // next one (and everything after) never reaches the image, and `cut` is
  // called -- on the thread that runs the device, inside the command.
  void cut_after(uint64_t records, std::function<void()> cut) {
    cut_at_ = records;
    cut_ = std::move(cut);
  }

 private:
  void append(const CommandRecord& record);
  void fail(const std::string& what);

  Image& image_;
  std::function<Outcome()> checkpoint_;
  std::function<void()> failed_;
  static constexpr uint64_t kLazyFlushBytes = 64 << 10;

  std::string error_;
  uint64_t checkpoints_ = 0;
  bool lazy_ = false;
  std::atomic<uint64_t> recorded_{0};
  std::optional<uint64_t> cut_at_;
  std::function<void()> cut_;
};

}  // namespace zonelab
