// See stream_hints.h.
#include "serve/stream_hints.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace zonelab::serve {
namespace {

// A decimal number at the start of `s`, the rest after it.
std::optional<uint64_t> number(std::string_view& s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return v;
}

bool space(std::string_view& s) {
  if (s.empty() || s.front() != ' ') return false;
  s.remove_prefix(1);
  return true;
}

}  // namespace

std::optional<HintRecord> parse_hint_record(std::string_view line) {
  HintRecord r;
  auto offset = number(line);
  if (!offset || !space(line)) return std::nullopt;
  auto length = number(line);
  if (!length || !space(line)) return std::nullopt;
  auto hint = number(line);
  if (!hint || !line.empty() || *hint > kWriteHintMax || *length == 0) return std::nullopt;
  r.offset = *offset;
  r.length = *length;
  r.hint = static_cast<uint32_t>(*hint);
  return r;
}

uint32_t stream_of_hint(uint32_t hint, uint32_t streams) {
  if (streams <= 1) return 0;
  return std::min(hint, streams - 1);
}

StreamHints::StreamHints(std::string path, uint32_t streams, uint64_t lba_bytes, uint64_t lbas)
    : path_(std::move(path)),
      streams_(std::clamp<uint32_t>(streams, 1, kMaxStreams)),
      lba_bytes_(lba_bytes),
      lbas_(lbas) {}

StreamHints::~StreamHints() {
  if (fd_ >= 0) ::close(fd_);
}

void StreamHints::assign(uint64_t first, uint64_t end, uint32_t stream) {
  // Trim or drop the spans that overlap [first, end), then insert.
  auto it = spans_.lower_bound(first);
  if (it != spans_.begin()) {
    auto before = std::prev(it);
    if (before->second.first > first) {
      const auto [old_end, old_stream] = before->second;
      before->second.first = first;
      if (old_end > end) spans_[end] = {old_end, old_stream};
    }
  }
  it = spans_.lower_bound(first);
  while (it != spans_.end() && it->first < end) {
    const auto [old_end, old_stream] = it->second;
    it = spans_.erase(it);
    if (old_end > end) {
      spans_[end] = {old_end, old_stream};
      break;
    }
  }
  if (stream != 0) spans_[first] = {end, stream};
}

void StreamHints::take(const HintRecord& r) {
  std::lock_guard lock(mutex_);
  take_locked(r);
}

void StreamHints::take_locked(const HintRecord& r) {
  const uint64_t bytes = lbas_ * lba_bytes_;
  if (r.length == 0 || r.offset >= bytes || r.length > bytes - r.offset) {
    ++counters_.ignored;
    return;
  }
  const uint64_t first = r.offset / lba_bytes_;
  const uint64_t end = (r.offset + r.length + lba_bytes_ - 1) / lba_bytes_;
  assign(first, end, stream_of_hint(r.hint, streams_));
  ++counters_.records;
  counters_.hinted_bytes += r.length;
}

void StreamHints::take_line(std::string_view line) {
  if (auto r = parse_hint_record(line)) {
    take_locked(*r);
  } else {
    ++counters_.ignored;
  }
}

void StreamHints::refresh() {
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
  }
  struct stat st;
  if (::fstat(fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) <= read_bytes_) return;
  std::vector<char> buffer(64 << 10);
  while (read_bytes_ < static_cast<uint64_t>(st.st_size)) {
    ssize_t n = ::pread(fd_, buffer.data(), buffer.size(), static_cast<off_t>(read_bytes_));
    if (n <= 0) return;
    read_bytes_ += static_cast<uint64_t>(n);
    std::string_view chunk(buffer.data(), static_cast<size_t>(n));
    while (!chunk.empty()) {
      size_t newline = chunk.find('\n');
      std::string_view piece = chunk.substr(0, newline);
      if (!skipping_) {
        if (partial_.size() + piece.size() > kMaxHintLineBytes) {
          skipping_ = true;
          partial_.clear();
        } else {
          partial_.append(piece);
        }
      }
      if (newline == std::string_view::npos) break;
      if (skipping_) {
        ++counters_.ignored;
        skipping_ = false;
      } else {
        std::string line = std::move(partial_);
        partial_.clear();
        take_line(line);
      }
      chunk.remove_prefix(newline + 1);
    }
  }
}

int StreamHints::split(uint64_t lba, uint64_t nlb,
                       const std::function<int(uint64_t, uint64_t, uint32_t)>& write) {
  // The pieces, found under the lock; written after it.
  std::vector<std::tuple<uint64_t, uint64_t, uint32_t>> pieces;
  {
    std::lock_guard lock(mutex_);
    refresh();
    const uint64_t end = lba + nlb;
    uint64_t at = lba;
    auto it = spans_.upper_bound(lba);
    if (it != spans_.begin()) --it;
    while (at < end) {
      while (it != spans_.end() && it->second.first <= at) ++it;
      uint64_t next = end;
      uint32_t stream = 0;
      if (it != spans_.end() && it->first <= at) {
        next = std::min(end, it->second.first);
        stream = it->second.second;
      } else if (it != spans_.end()) {
        next = std::min(end, it->first);
      }
      pieces.emplace_back(at, next - at, stream);
      counters_.write_bytes[stream] += (next - at) * lba_bytes_;
      at = next;
    }
  }
  for (const auto& [first, count, stream] : pieces) {
    if (int error = write(first, count, stream); error != 0) return error;
  }
  return 0;
}

uint32_t StreamHints::stream_of(uint64_t lba) {
  std::lock_guard lock(mutex_);
  refresh();
  auto it = spans_.upper_bound(lba);  // the span starting at or before lba, if any
  if (it == spans_.begin()) return 0;
  --it;
  return it->second.first > lba ? it->second.second : 0;
}

StreamHintCounters StreamHints::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

nlohmann::ordered_json StreamHints::json() const {
  const StreamHintCounters c = counters();
  nlohmann::ordered_json by_stream = nlohmann::ordered_json::array();
  for (uint32_t s = 0; s < streams_; ++s) by_stream.push_back(c.write_bytes[s]);
  return {{"path", path_},
          {"streams", streams_},
          {"records", c.records},
          {"ignored", c.ignored},
          {"hinted_bytes", c.hinted_bytes},
          {"write_bytes_by_stream", by_stream}};
}

}  // namespace zonelab::serve
