// The C side of fio_image.h for engine.c (engine_abi.h).
#include "fio/engine_abi.h"

#include <fmt/format.h>

#include <cstring>

#include "fio/fio_image.h"

struct zl_fio_image {
  std::shared_ptr<zonelab::fio::SharedImage> image;
};

struct zl_fio_queue {
  std::unique_ptr<zonelab::fio::JobQueue> queue;
  // The image outlives its queues.
  std::shared_ptr<zonelab::fio::SharedImage> image;
};

namespace {

using zonelab::fio::IoKind;

void put_message(const std::string& text, char* out, size_t size) {
  if (out == nullptr || size == 0) return;
  size_t n = std::min(text.size(), size - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

int cond_of(zonelab::ZoneState state) {
  using zonelab::ZoneState;
  switch (state) {
    case ZoneState::kEmpty:
      return ZL_FIO_ZONE_EMPTY;
    case ZoneState::kImplicitlyOpened:
      return ZL_FIO_ZONE_IMP_OPEN;
    case ZoneState::kExplicitlyOpened:
      return ZL_FIO_ZONE_EXP_OPEN;
    case ZoneState::kClosed:
      return ZL_FIO_ZONE_CLOSED;
    case ZoneState::kFull:
      return ZL_FIO_ZONE_FULL;
    case ZoneState::kReadOnly:
      return ZL_FIO_ZONE_READONLY;
    case ZoneState::kOffline:
      return ZL_FIO_ZONE_OFFLINE;
  }
  return ZL_FIO_ZONE_OFFLINE;
}

}  // namespace

extern "C" {

zl_fio_image* zl_fio_open(const char* path, const zl_fio_options* options, char* error,
                          size_t error_size) {
  zonelab::fio::EngineOptions o;
  o.timing = options->timing_off != 0 ? zonelab::Timing::kOff : zonelab::Timing::kModeled;
  o.time_scale = options->time_scale;
  if (options->scheduler != nullptr) o.scheduler = options->scheduler;
  if (options->stats_path != nullptr) o.stats_path = options->stats_path;
  o.batched_journal = options->batched_journal != 0;
  try {
    auto image = zonelab::fio::SharedImage::acquire(path, o);
    if (!image) {
      put_message(image.error(), error, error_size);
      return nullptr;
    }
    return new zl_fio_image{std::move(image).value()};
  } catch (const std::exception& e) {
    put_message(fmt::format("{}: {}", path, e.what()), error, error_size);
    return nullptr;
  }
}

void zl_fio_close(zl_fio_image* image) { delete image; }

void zl_fio_get_geometry(zl_fio_image* handle, zl_fio_geometry* out) {
  const auto& image = *handle->image;
  const zonelab::DeviceInfo& info = image.info();
  *out = zl_fio_geometry{};
  out->size_bytes = image.size_bytes();
  out->lba_bytes = static_cast<uint32_t>(info.lba_size_bytes);
  out->zoned = image.zoned() ? 1 : 0;
  out->uniform_zones = info.uniform_zones() ? 1 : 0;
  out->zone_size_bytes = info.zone_size_lbas * info.lba_size_bytes;
  out->zone_count = info.zone_count;
  out->max_open_zones = image.max_open_zones();
  out->stores_data = image.stores_data() ? 1 : 0;
}

int zl_fio_report_zones(zl_fio_image* handle, uint64_t offset, zl_fio_zone* zones, unsigned count) {
  auto& image = *handle->image;
  if (!image.zoned()) return -EOPNOTSUPP;
  const zonelab::DeviceInfo& info = image.info();
  const uint64_t lba = info.lba_size_bytes;
  auto report = image.zones_from(offset, count);
  for (size_t i = 0; i < report.size(); ++i) {
    const zonelab::ZoneDescriptor& z = report[i];
    zones[i].start = z.start_lba * lba;
    zones[i].wp = z.wp_lba * lba;
    zones[i].len = info.zone_size_of(z.zone) * lba;
    zones[i].capacity = z.capacity_lbas * lba;
    zones[i].cond = cond_of(z.state);
  }
  return static_cast<int>(report.size());
}

int zl_fio_reset_zones(zl_fio_image* handle, uint64_t offset, uint64_t length, char* error,
                       size_t error_size) {
  auto done = handle->image->zone_action(zonelab::ZoneAction::kReset, offset, length);
  if (done) return 0;
  put_message(done.error(), error, error_size);
  return EIO;
}

zl_fio_queue* zl_fio_queue_new(zl_fio_image* handle) {
  return new zl_fio_queue{handle->image->new_queue(), handle->image};
}

void zl_fio_queue_free(zl_fio_queue* queue) {
  if (queue == nullptr) return;
  queue->queue.reset();
  delete queue;
}

int zl_fio_submit(zl_fio_queue* queue, int io, uint64_t offset, uint64_t length, void* data,
                  void* cookie) {
  IoKind kind;
  switch (io) {
    case ZL_FIO_READ:
      kind = IoKind::kRead;
      break;
    case ZL_FIO_WRITE:
      kind = IoKind::kWrite;
      break;
    case ZL_FIO_TRIM:
      kind = IoKind::kTrim;
      break;
    case ZL_FIO_FLUSH:
      kind = IoKind::kFlush;
      break;
    default:
      return EINVAL;
  }
  return queue->queue->queue(kind, offset, length, static_cast<uint8_t*>(data), cookie);
}

void zl_fio_commit(zl_fio_queue* queue) { queue->queue->commit(); }

unsigned zl_fio_reap(zl_fio_queue* queue, unsigned min, unsigned max, int64_t timeout_ns) {
  std::optional<std::chrono::nanoseconds> timeout;
  if (timeout_ns >= 0) timeout = std::chrono::nanoseconds(timeout_ns);
  return queue->queue->reap(min, max, timeout);
}

void* zl_fio_event(zl_fio_queue* queue, unsigned i, int* error, const char** status) {
  const auto& event = queue->queue->event(i);
  if (error != nullptr) *error = event.error;
  if (status != nullptr) *status = zonelab::status_name(event.status).data();
  return event.cookie;
}

}  // extern "C"
