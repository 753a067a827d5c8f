#include "serve/served_image.h"

#include <fmt/format.h>

#include "serve/block_file.h"
#include "serve/pass_through_file.h"
#include "stack/stack_report.h"

namespace zonelab::serve {

std::optional<std::string> serve_interface_problem(const std::string& image,
                                                   const DeviceInfo& info) {
  if (info.interface == "block") return std::nullopt;
  return fmt::format(
      "{} is a {} device: serve shows block-interface images only (a kernel file system writes "
      "anywhere, which a zoned namespace refuses); make one with `zonelab create IMAGE --set "
      "interface=block`",
      image, info.interface);
}

Result<std::unique_ptr<ServedImage>> ServedImage::open(const ServeOptions& options) {
  // Before the image is locked: a mount point or FUSE that cannot work is
  // said without touching the image.
  if (options.vhost_user) {
    if (auto why = socket_path_problem(options.vhost.socket_path)) return Error{*why};
  } else {
    if (auto why = fuse_problem()) return Error{*why};
    if (auto why = mount_point_problem(options.fuse.mount_point)) return Error{*why};
  }
  auto served = std::unique_ptr<ServedImage>(new ServedImage());
  served->options_ = options;
  if (options.pass_through) {
    auto file = PassThroughFile::open(options.image);
    if (!file) return Error{file.error()};
    served->file_ = std::move(file).value();
  } else {
    StackOptions so;
    so.scheduler = options.scheduler;
    so.realtime = true;
    so.realtime_options = options.realtime;
    auto stack = Stack::open(options.image, so);
    if (!stack) return Error{stack.error()};
    if (auto why = serve_interface_problem(options.image, (*stack)->info())) {
      (void)(*stack)->close(Stack::Save::kNo);
      return Error{*why};
    }
    served->stack_ = std::move(stack).value();
    served->notes_ = served->stack_->notes();
    if (!options.stream_hints_path.empty()) {
      const uint64_t streams = served->stack_->config().block.streams;
      if (streams < 2) {
        (void)served->stack_->close(Stack::Save::kNo);
        return Error{fmt::format(
            "{} has one write stream (block.streams = 1), so write hints have nowhere to go; "
            "make the image with --set block.streams=6 (one stream for each hint)",
            options.image)};
      }
      const DeviceInfo& info = served->stack_->info();
      served->hints_ =
          std::make_unique<StreamHints>(options.stream_hints_path, static_cast<uint32_t>(streams),
                                        info.lba_size_bytes, info.capacity_lbas);
    }
    served->file_ = std::make_unique<BlockFile>(served->stack_->io(), served->hints_.get());
  }
  if (options.vhost_user) {
    auto server = VhostUserBlkServer::start(*served->file_, options.vhost);
    if (!server) {
      (void)served->close();
      return Error{server.error()};
    }
    served->vhost_ = std::move(server).value();
    served->file_path_ = options.vhost.socket_path;
    return served;
  }
  auto server = FuseServer::start(*served->file_, options.fuse);
  if (!server) {
    (void)served->close();
    return Error{server.error()};
  }
  served->server_ = std::move(server).value();
  served->file_path_ = served->server_->file_path();
  return served;
}

nlohmann::ordered_json ServedImage::stats_json() const {
  nlohmann::ordered_json out;
  out["image"] = options_.image;
  out["file"] = file_path_;
  out["size_bytes"] = file_->size_bytes();
  out["pass_through"] = options_.pass_through;
  out["served"] = file_counters_json(file_->counters());
  out["transport"] = options_.vhost_user ? "vhost-user" : "fuse";
  if (options_.vhost_user) {
    if (vhost_ != nullptr) out["served"]["virtio"] = vhost_counters_json(vhost_->counters());
  } else {
    out["served"]["fuse_requests"] = server_ != nullptr ? server_->requests() : fuse_requests_;
  }
  if (hints_ != nullptr) out["stream_hints"] = hints_->json();
  if (stack_ == nullptr) return out;
  out["scheduler"] = stack_->scheduler();
  uint64_t now = stack_->clock().now_ns();
  stack_->inspect(
      [&](const ModeledDevice& device) { out["device"] = device_counters_json(device, now); });
  out["realtime"] = realtime_stats_json(options_.realtime, stack_->realtime_stats());
  out["virtual_time_ns"] = now;
  return out;
}

Outcome ServedImage::close() {
  if (closed_) return {};
  closed_ = true;
  // The mount first: requests in flight are answered, then no more come.
  if (server_ != nullptr) {
    server_->stop();
    server_->wait();
    fuse_requests_ = server_->requests();
  }
  server_.reset();
  if (vhost_ != nullptr) {
    vhost_->stop();
    vhost_->wait();
  }
  return stack_ != nullptr ? stack_->close() : Outcome{};
}

bool ServedImage::gone() const {
  if (server_ != nullptr) return server_->lost_mount();
  return vhost_ != nullptr && vhost_->guest_gone();
}

std::string ServedImage::transport_error() const {
  return vhost_ != nullptr && vhost_->guest_gone() ? vhost_->error() : std::string();
}

ServedImage::~ServedImage() { (void)close(); }

}  // namespace zonelab::serve
