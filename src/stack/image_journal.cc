// See image_journal.h.
#include "stack/image_journal.h"

namespace zonelab {

void ImageJournal::append(const CommandRecord& record) {
  if (cut_at_ && recorded() >= *cut_at_ && !image_.frozen()) {
    image_.freeze();
    cut_();
  }
  recorded_.fetch_add(1, std::memory_order_acq_rel);
  if (image_.journal_append(encode_command_record(record))) return;
  // No room: the state saved now holds this command too (the device took it
  // before telling us), and the journal starts empty after it.
  ++checkpoints_;
  Outcome saved = checkpoint_();
  if (!saved) fail(saved.error());
}

bool ImageJournal::flush() {
  if (!error_.empty()) return false;
  if (!image_.journal_pending()) return true;
  Outcome flushed = image_.journal_flush();
  if (!flushed) fail(flushed.error());
  return flushed.ok();
}

void ImageJournal::fail(const std::string& what) {
  if (!error_.empty()) return;
  error_ = what;
  failed_();
}

}  // namespace zonelab
