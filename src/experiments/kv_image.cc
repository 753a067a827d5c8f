// See kv_image.h.
#include "experiments/kv_image.h"

#include <fmt/format.h>
#include <unistd.h>

#include <map>
#include <set>

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

Result<ZoneLayout> KvImage::layout() const {
  auto stack = Stack::open(path_);
  if (!stack) return Error{stack.error()};
  fs::MountOptions mount;
  mount.read_only = true;
  auto fs = fs::ZonedFs::mount(**stack, mount);
  if (!fs) return Error{fmt::format("{}: {}", path_, fs.status().message())};
  // Each file's bytes by zone, the directories walked from the root.
  std::map<uint32_t, std::map<fs::FileId, uint64_t>> zones;
  uint64_t table_zones = 0;
  ZoneLayout out;
  std::vector<std::string> dirs = {"/"};
  while (!dirs.empty()) {
    const std::string dir = dirs.back();
    dirs.pop_back();
    auto names = (*fs)->list(dir);
    if (!names) return Error{fmt::format("{}: {}", dir, names.status().message())};
    for (const std::string& name : *names) {
      const std::string path = dir == "/" ? "/" + name : dir + "/" + name;
      auto st = (*fs)->stat(path);
      if (!st) return Error{fmt::format("{}: {}", path, st.status().message())};
      if (st->is_dir) {
        dirs.push_back(path);
        continue;
      }
      std::set<uint32_t> mine;
      for (const fs::Extent& e : st->extents) {
        zones[e.zone][st->id] += e.length;
        mine.insert(e.zone);
      }
      if (path.ends_with(".sst")) {
        ++out.tables;
        table_zones += mine.size();
      }
    }
  }
  const uint64_t capacity = (*fs)->space().zone_bytes;
  uint64_t files = 0;
  for (const auto& [zone, by_file] : zones) {
    uint64_t live = 0;
    for (const auto& [id, bytes] : by_file) live += bytes;
    files += by_file.size();
    if (live * 2 < capacity) ++out.zones_under_half;
  }
  out.zones_with_data = static_cast<uint32_t>(zones.size());
  out.zones_per_table =
      out.tables == 0 ? 0.0 : static_cast<double>(table_zones) / static_cast<double>(out.tables);
  out.files_per_zone =
      zones.empty() ? 0.0 : static_cast<double>(files) / static_cast<double>(zones.size());
  (void)(*fs)->unmount();
  return out;
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
