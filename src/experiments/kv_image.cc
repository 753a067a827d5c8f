// See kv_image.h.
#include "experiments/kv_image.h"

#include <fmt/format.h>
#include <unistd.h>

#include "stack/stack.h"

namespace zonelab {
namespace {

int next_image_number() {
  static int n = 0;
  return n++;
}

}  // namespace

Result<KvImage> KvImage::make(const Config& config, const fs::MkfsOptions& mkfs,
                              std::string_view label) {
  KvImage image;
  std::error_code ec;
  image.dir_ = std::filesystem::temp_directory_path(ec) /
               fmt::format("zonelab-rocksdb-experiment-{}-{}", ::getpid(), next_image_number());
  std::filesystem::create_directories(image.dir_, ec);
  if (ec) return Error{fmt::format("{}: {}", image.dir_.string(), ec.message())};
  image.path_ = (image.dir_ / "dev.img").string();
  auto created = Stack::create_image(image.path_, config, true);
  if (!created) return Error{created.error()};
  auto stack = Stack::open(image.path_);
  if (!stack) return Error{stack.error()};
  if (fs::FsStatus made = fs::ZonedFs::mkfs(**stack, mkfs, &image.report_); !made) {
    return Error{fmt::format("{}: mkfs: {}", label, made.message())};
  }
  Outcome closed = (*stack)->close();
  if (!closed) return Error{closed.error()};
  return image;
}

KvImage::KvImage(KvImage&& other) noexcept
    : dir_(std::move(other.dir_)),
      path_(std::move(other.path_)),
      report_(std::move(other.report_)) {
  other.dir_.clear();
}

KvImage::~KvImage() {
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

namespace {
// The image's URI with its device timing (modeled or off), behind
// mq-deadline, with no statistics file.
std::string image_uri(const std::string& path, std::string_view timing) {
  return fmt::format("zonelab://{}?timing={}&scheduler=mq-deadline&stats=none", path, timing);
}
}  // namespace

std::string KvImage::uri(double time_scale) const {
  std::string uri = image_uri(path_, "modeled");
  if (time_scale != 1.0) uri += fmt::format("&time_scale={}", time_scale);
  return uri;
}

std::string KvImage::uri_untimed() const { return image_uri(path_, "off"); }

}  // namespace zonelab
