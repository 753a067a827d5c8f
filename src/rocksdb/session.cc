// See session.h.
#include "rocksdb/session.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "stack/stack_report.h"

namespace zonelab::rocksdb_plugin {
namespace {

// Sessions by image path. Never destroyed: sessions may close while the
// process's other statics go away at exit.
struct Registry {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<Session>> open;
};

Registry& registry() {
  static auto* r = new Registry;
  return *r;
}

// SIGUSR1 -> a byte into a pipe -> a thread that writes the statistics.
int g_signal_pipe[2] = {-1, -1};

void on_sigusr1(int) {
  int saved = errno;
  char byte = 1;
  (void)!::write(g_signal_pipe[1], &byte, 1);
  errno = saved;
}

void start_stats_signal() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current;
    if (::sigaction(SIGUSR1, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) {
      return;  // the program has its own use for SIGUSR1
    }
    if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;
    std::thread([] {
      char byte = 0;
      for (;;) {
        ssize_t n = ::read(g_signal_pipe[0], &byte, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        Session::write_all_stats();
      }
    }).detach();
    struct sigaction action {};
    action.sa_handler = on_sigusr1;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(SIGUSR1, &action, nullptr);
  });
}

// Why the image's device cannot hold a file system, if it cannot: mount
// would only say there is none, and mkfs, which it suggests, refuses these.
std::optional<std::string> no_file_system_can_live_on(const Stack& stack) {
  const std::string& backing = stack.config().store.backing;
  if (backing == "memory") {
    return std::string(
        "a memory-backed image (store.backing = memory) keeps no data between processes, so no "
        "file system can live on it; create the image with file backing (zonelab create IMAGE "
        "--set store.backing=file, then zonelab mkfs IMAGE)");
  }
  if (!stack.stores_data()) {
    return fmt::format(
        "the image stores no data (store.backing = {}), so no file system can live on it; create "
        "the image with file backing (zonelab create IMAGE --set store.backing=file, then zonelab "
        "mkfs IMAGE)",
        backing.empty() ? "none" : backing);
  }
  return std::nullopt;
}

// SIGINT and SIGTERM, in a program that leaves them to their default
// action (db_bench): the first -> a byte into a pipe -> a thread that
// writes every session's statistics and closes it as at exit (journal
// committed, image saved), then ends the process by the signal's default
// action, as it would have ended without the plugin. A second signal, or
// one the pipe cannot take, takes the default action at once -- and so
// does a signal the process sent itself: RocksDB's kill points
// (port::Crash, db_stress's whitebox crash test) end the process with
// SIGTERM to itself, meaning a crash at that instant, not a stop request.
int g_stop_pipe[2] = {-1, -1};
std::atomic<int> g_stop_signal{0};  // lock-free: safe in a signal handler
static_assert(std::atomic<int>::is_always_lock_free);

void on_stop_signal(int signal, siginfo_t* info, void*) {
  const bool from_itself = info != nullptr && info->si_pid == ::getpid();
  if (g_stop_signal.load() == 0 && !from_itself) {
    g_stop_signal.store(signal);
    int saved = errno;
    auto byte = static_cast<char>(signal);
    bool sent = ::write(g_stop_pipe[1], &byte, 1) == 1;
    errno = saved;
    if (sent) return;
  }
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

[[noreturn]] void end_by_signal(int signal) {
  // What the program printed so far goes out, as at a normal end.
  std::fflush(nullptr);
  ::signal(signal, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(signal);
  std::_Exit(128 + signal);  // not reached: the default action ends the process
}

void start_stop_signals() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<int> ours;
    for (int signal : {SIGINT, SIGTERM}) {
      struct sigaction current;
      // A program's own handler, or a signal ignored, is left as it is.
      if (::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
        ours.push_back(signal);
      }
    }
    if (ours.empty() || ::pipe2(g_stop_pipe, O_CLOEXEC) != 0) return;
    std::thread([] {
      char byte = 0;
      for (;;) {
        ssize_t n = ::read(g_stop_pipe[0], &byte, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        break;
      }
      Session::close_all_at_exit();
      end_by_signal(static_cast<unsigned char>(byte));
    }).detach();
    for (int signal : ours) {
      struct sigaction action {};
      action.sa_sigaction = on_stop_signal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESTART | SA_SIGINFO;
      ::sigaction(signal, &action, nullptr);
    }
  });
}

}  // namespace

bool stopping_by_signal() { return g_stop_signal.load() != 0; }

void wait_for_the_signal_to_end_the_process() {
  for (;;) ::pause();
}

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

Outcome create_image_with_fs(const std::string& path, const std::string& preset,
                             uint32_t finish_threshold_pct) {
  auto config = preset_config(preset);
  if (!config) return Error{config.error()};
  auto created = Stack::create_image(path, *config, false);
  if (!created) return Error{created.error()};
  auto stack = Stack::open(path);
  if (!stack) return Error{stack.error()};
  fs::MkfsOptions mkfs;
  mkfs.finish_threshold_pct = finish_threshold_pct;
  fs::FsStatus made = fs::ZonedFs::mkfs(**stack, mkfs);
  if (!made) return Error{fmt::format("{}: mkfs: {}", path, made.message())};
  return (*stack)->close();
}

Result<std::unique_ptr<Session>> Session::make(const UriOptions& options) {
  if (options.create_preset && !exists(options.image)) {
    Outcome created =
        create_image_with_fs(options.image, *options.create_preset, options.finish_threshold_pct);
    if (!created) return Error{created.error()};
  }
  StackOptions so;
  so.scheduler = options.scheduler;
  so.realtime = true;
  so.realtime_options.timing = options.timing;
  so.realtime_options.time_scale = options.time_scale;
  so.realtime_options.spin_ns = spin_pacing(options) ? so.realtime_options.spin_ns : 0;
  auto stack = Stack::open(options.image, so);
  if (!stack) return Error{stack.error()};
  if (auto why = no_file_system_can_live_on(**stack)) {
    return Error{fmt::format("{}: {}", options.image, *why)};
  }
  for (const std::string& note : (*stack)->notes()) {
    std::fprintf(stderr, "zonelab: %s\n", one_line(note).c_str());
  }
  fs::MountOptions mo;
  mo.gc = options.gc;
  mo.write_behind = options.write_behind;
  auto mounted = fs::ZonedFs::mount(**stack, mo);
  if (!mounted) {
    return Error{fmt::format("{}: {}", options.image, mounted.status().message())};
  }
  for (const std::string& note : (*mounted)->recovery_notes()) {
    std::fprintf(stderr, "zonelab: %s: %s\n", options.image.c_str(), one_line(note).c_str());
  }
  if (options.power_cut_after) (*stack)->power_cut_after(*options.power_cut_after);
  auto session = std::unique_ptr<Session>(new Session());
  session->options_ = options;
  session->stack_ = std::move(stack).value();
  session->fs_ = std::move(mounted).value();
  return session;
}

Result<std::shared_ptr<Session>> Session::open(const UriOptions& uri_options) {
  // The tenant is the file system's view, not the session's: tenants of one
  // image share its session.
  UriOptions options = uri_options;
  options.tenant.clear();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.open.find(options.image);
  if (it != r.open.end()) {
    if (auto existing = it->second.lock()) {
      if (existing->options() == options) return existing;
      return Error{fmt::format("{}: open in this process already, with other zonelab:// options",
                               options.image)};
    }
  }
  auto made = make(options);
  if (!made) return Error{made.error()};
  std::shared_ptr<Session> session(std::move(made).value());
  r.open[options.image] = session;
  start_stats_signal();
  start_stop_signals();
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(&Session::close_all_at_exit); });
  return session;
}

Session::~Session() { shut(false); }

void Session::shut(bool at_exit) {
  {
    std::lock_guard lock(mutex_);
    if (shutting_) return;
    shutting_ = true;
  }
  fs::FsStatus unmounted = fs_->unmount();
  if (!unmounted) {
    std::fprintf(stderr, "zonelab: %s: %s\n", options_.image.c_str(),
                 one_line(unmounted.message()).c_str());
  }
  // Statistics before the stack stops, while the device still answers.
  Outcome stats = write_stats();
  if (!stats) std::fprintf(stderr, "zonelab: %s\n", one_line(stats.error()).c_str());
  {
    std::lock_guard lock(mutex_);
    shut_ = true;
  }
  if (at_exit && fs_->open_handles() != 0) {
    // RocksDB left files open: the file system object stays (leaked), the
    // device stops under it.
    (void)fs_.release();
  } else {
    fs_.reset();
  }
  Outcome closed = stack_->close();
  if (!closed) std::fprintf(stderr, "zonelab: %s\n", one_line(closed.error()).c_str());
}

std::string Session::stats_json() const {
  using Json = nlohmann::ordered_json;
  Json out;
  out["image"] = options_.image;
  out["scheduler"] = stack_->scheduler();
  out["fs"] = Json::parse(fs_->stats_json());
  uint64_t now = stack_->clock().now_ns();
  stack_->inspect(
      [&](const ModeledDevice& device) { out["device"] = device_counters_json(device, now); });
  RealtimeOptions ro;
  ro.timing = options_.timing;
  ro.time_scale = options_.time_scale;
  ro.spin_ns = spin_pacing(options_) ? ro.spin_ns : 0;
  out["realtime"] = realtime_stats_json(ro, stack_->realtime_stats());
  out["virtual_time_ns"] = now;
  out["zones"] = Json::parse(fs_->dump_json())["zones"];
  return out.dump(2, ' ', false, Json::error_handler_t::replace);
}

Outcome Session::write_stats() const {
  std::lock_guard lock(mutex_);
  if (shut_ || options_.stats_path.empty()) return {};
  return write_stats_file(options_.stats_path, stats_json() + "\n");
}

void Session::write_all_stats() {
  std::vector<std::shared_ptr<Session>> live;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    for (auto& [path, weak] : r.open) {
      if (auto s = weak.lock()) live.push_back(s);
    }
  }
  for (const auto& s : live) {
    Outcome written = s->write_stats();
    if (!written) std::fprintf(stderr, "zonelab: %s\n", one_line(written.error()).c_str());
  }
}

void Session::close_all_at_exit() {
  std::vector<std::shared_ptr<Session>> live;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    for (auto& [path, weak] : r.open) {
      if (auto s = weak.lock()) live.push_back(s);
    }
  }
  for (const auto& s : live) s->shut(true);
}

}  // namespace zonelab::rocksdb_plugin
