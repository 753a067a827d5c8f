#include "tools/serve_command.h"

#include <fmt/format.h>
#include <signal.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/units.h"
#include "serve/served_image.h"
#include "stack/stack_report.h"

namespace zonelab::cli {

Result<serve::ServeOptions> serve_options(const ServeFlags& flags, const std::string& mount_point,
                                          const std::string& file_name,
                                          const std::string& vhost_socket) {
  serve::ServeOptions o;
  o.image = flags.image;
  if (auto problem = output_is_image("--stats", flags.stats_path, flags.image)) {
    return Error{*problem};
  }
  auto timing = timing_from_name(flags.timing);
  if (!timing) {
    return Error{fmt::format("--timing {}: modeled or off", one_line(flags.timing, 64))};
  }
  o.realtime.timing = *timing;
  if (flags.time_scale) {
    const std::string& text = *flags.time_scale;
    double scale = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), scale);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
        !(scale >= kMinTimeScale && scale <= kMaxTimeScale)) {
      return Error{fmt::format("--time-scale {}: a number from {:g} to {:g}", one_line(text, 64),
                               kMinTimeScale, kMaxTimeScale)};
    }
    o.realtime.time_scale = scale;
  }
  // The device thread spins near events (a command is answered without
  // waking it) or sleeps; auto: it spins where 4 or more processors leave
  // the guest room, as kv's does.
  if (flags.pacing != "auto" && flags.pacing != "spin" && flags.pacing != "sleep") {
    return Error{fmt::format("--pacing {}: auto, spin or sleep", one_line(flags.pacing, 64))};
  }
  bool spin = flags.pacing == "spin" ||
              (flags.pacing == "auto" && std::thread::hardware_concurrency() >= 4);
  if (!spin) o.realtime.spin_ns = 0;
  o.scheduler = flags.scheduler;
  o.vhost_user = !vhost_socket.empty();
  if (flags.threads) {
    const uint32_t most = o.vhost_user ? serve::kVhostThreadsMax : serve::kFuseThreadsMax;
    if (*flags.threads == 0 || *flags.threads > most) {
      return Error{fmt::format("--threads {}: from 1 to {}", *flags.threads, most)};
    }
    o.fuse.threads = static_cast<uint32_t>(*flags.threads);
    o.vhost.threads = static_cast<uint32_t>(*flags.threads);
  }
  std::error_code ec;
  if (o.vhost_user) {
    auto socket = std::filesystem::absolute(vhost_socket, ec);
    o.vhost.socket_path = ec ? vhost_socket : socket.lexically_normal().string();
    return o;
  }
  auto absolute = std::filesystem::absolute(mount_point, ec);
  o.fuse.mount_point = ec ? mount_point : absolute.lexically_normal().string();
  while (o.fuse.mount_point.size() > 1 && o.fuse.mount_point.back() == '/') {
    o.fuse.mount_point.pop_back();
  }
  o.fuse.file_name = file_name;
  return o;
}

void add_serve_flags(CLI::App* app, ServeFlags& f) {
  app->add_option("--timing", f.timing, "modeled (default) or off (no device time)")
      ->type_name("MODE");
  app->add_option("--time-scale", f.time_scale,
                  "wall time per device time (2: the device runs twice as slow)")
      ->type_name("X");
  app->add_option("--scheduler", f.scheduler,
                  "host I/O scheduler in front of the device (default: the configuration's)")
      ->type_name("NAME");
  app->add_option("--pacing", f.pacing,
                  "device thread: auto (default: spin with 4 or more processors), spin or sleep")
      ->type_name("MODE");
  add_count_option(app, "--threads", f.threads,
                   "requests served at once: FUSE worker threads (default 4) or virtio "
                   "requests (default 32)")
      ->type_name("N");
  app->add_option("--stats", f.stats_path,
                  "write the statistics (JSON) here at the end and on SIGUSR1")
      ->type_name("PATH");
  app->add_flag("--json", f.json, "print one JSON object at the end");
}

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR1);
  return set;
}

Outcome write_stats_file(const std::string& path, const Json& stats) {
  if (path.empty()) return {};
  return zonelab::write_stats_file(
      path, stats.dump(2, ' ', false, Json::error_handler_t::replace) + "\n");
}

void print_serve_summary(std::FILE* out, const Json& stats, double seconds) {
  const Json& s = stats["served"];
  auto u = [](const Json& j, const char* key) { return j.value(key, uint64_t{0}); };
  fmt::print(out,
             "served {} as {} for {:.1f} s: {} reads ({}), {} writes ({}), {} partial LBAs merged, "
             "{} holes ({}, {} LBAs deallocated), {} flushes, {} errors\n",
             stats.value("image", std::string()), stats.value("file", std::string()), seconds,
             u(s, "reads"), format_size(u(s, "read_bytes")), u(s, "writes"),
             format_size(u(s, "write_bytes")), u(s, "partial_lbas"), u(s, "holes"),
             format_size(u(s, "hole_bytes")), u(s, "deallocated_lbas"), u(s, "flushes"),
             u(s, "errors"));
  if (!stats.contains("device")) return;
  const Json& d = stats["device"];
  const Json& program = d["flash_program_bytes"];
  uint64_t flash = 0;
  for (const auto& [cause, bytes] : program.items()) flash += bytes.get<uint64_t>();
  fmt::print(out,
             "device: host wrote {}, flash programmed {} ({} by garbage collection), "
             "write amplification {}, {} erases\n",
             format_size(u(d, "host_write_bytes")), format_size(flash),
             format_size(program.value("gc", uint64_t{0})),
             d["write_amplification"].is_number()
                 ? fmt::format("{:.3f}", d["write_amplification"].get<double>())
                 : std::string("-"),
             u(d, "erases"));
}

void add_serve_command(CLI::App& app, ServeCommandOptions& o) {
  auto* serve = app.add_subcommand(
      "serve",
      "show a block-interface image to the kernel as one file through FUSE, the device modeled "
      "in real time, until SIGINT or SIGTERM");
  serve->add_option("IMAGE", o.flags.image, "block-interface device image (interface = block)")
      ->required();
  serve->add_option("MOUNTPOINT", o.mount_point,
                    "an existing directory to mount on (not with --vhost-user)");
  serve
      ->add_option("--vhost-user", o.vhost_socket,
                   "show the image as a virtio block device on a vhost-user socket made at "
                   "SOCKET (for User-Mode Linux: virtio_uml.device=SOCKET:2) instead of a "
                   "file through FUSE; serving ends when the guest goes")
      ->type_name("SOCKET");
  serve->add_option("--file", o.file_name, "the file's name in MOUNTPOINT (default disk)")
      ->type_name("NAME");
  serve->add_flag("--pass-through", o.pass_through,
                  "IMAGE is a plain host file, served as it is without the model (to measure "
                  "what FUSE itself costs)");
  serve
      ->add_option("--stream-hints", o.stream_hints,
                   "a file a guest appends write-lifetime hint records to (\"OFFSET LENGTH "
                   "HINT\" a line, bytes on the disk; libzonelab_hints.so writes them): each "
                   "write goes to the stream its bytes were hinted for; needs block.streams "
                   "of 2 or more (docs/serve.md)")
      ->type_name("FILE");
  add_serve_flags(serve, o.flags);
}

int run_serve_command(const ServeCommandOptions& o) {
  if (o.vhost_socket.empty() == o.mount_point.empty()) {
    return bad_input(o.vhost_socket.empty()
                         ? "a MOUNTPOINT or --vhost-user SOCKET is required"
                         : "MOUNTPOINT and --vhost-user are two ways to serve: give one");
  }
  auto parsed = serve_options(o.flags, o.mount_point, o.file_name, o.vhost_socket);
  if (!parsed) return bad_input(parsed.error());
  serve::ServeOptions options = *parsed;
  options.pass_through = o.pass_through;
  options.stream_hints_path = o.stream_hints;
  if (o.pass_through && !o.stream_hints.empty()) {
    return bad_input("--stream-hints: a passed-through file has no device streams");
  }
  // Before any thread starts: the signals wait for this thread.
  sigset_t signals = stop_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto served = serve::ServedImage::open(options);
  if (!served) return bad_input(served.error());
  for (const std::string& n : (*served)->notes()) note(n);
  note(fmt::format(
      "serving {} ({}, {}) as {}; SIGINT or SIGTERM stops, SIGUSR1 writes "
      "statistics",
      o.flags.image, format_size((*served)->size_bytes()),
      o.pass_through ? "passed through, no model" : "block interface", (*served)->file_path()));
  auto start = std::chrono::steady_clock::now();
  bool lost = false;
  while (true) {
    timespec wait{0, 200'000'000};
    int got = sigtimedwait(&signals, nullptr, &wait);
    if (got == SIGUSR1) {
      Json stats = (*served)->stats_json();
      if (o.flags.stats_path.empty()) {
        print_serve_summary(
            stdout, stats,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        std::fflush(stdout);
      } else if (Outcome w = write_stats_file(o.flags.stats_path, stats); !w) {
        note(w.error());
      }
      continue;
    }
    if (got > 0) break;
    if ((*served)->gone()) {
      lost = true;
      break;
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (lost && o.vhost_socket.empty()) {
    note(fmt::format("{} was unmounted from outside; stopping", o.mount_point));
  }
  Outcome closed = (*served)->close();
  Json stats = (*served)->stats_json();
  if (Outcome w = write_stats_file(o.flags.stats_path, stats); !w) note(w.error());
  if (!closed) {
    std::fprintf(stderr, "zonelab: error: %s\n", one_line(closed.error()).c_str());
    return kExitDeviceError;
  }
  // A guest that broke the protocol (its connection ended by the server):
  // what it had acknowledged is saved, and the reason is the error.
  if (std::string why = (*served)->transport_error(); !why.empty()) {
    std::fprintf(stderr, "zonelab: error: the guest's connection was ended: %s\n",
                 one_line(why).c_str());
    return kExitBadInput;
  }
  if (lost && !o.vhost_socket.empty()) note("the guest has gone; stopping");
  if (o.flags.json) {
    Json out = status_json(Status::kSuccess);
    out["seconds"] = seconds;
    for (auto& [key, value] : stats.items()) out[key] = value;
    print_json(out);
  } else {
    print_serve_summary(stdout, stats, seconds);
  }
  return kExitOk;
}

}  // namespace zonelab::cli
