// `zonelab vm`: a Linux kernel on the modeled drive. The image is served
// through FUSE (serve/served_image.h) into a private directory; Debian's
// User-Mode Linux (an ordinary process) boots with that file as its disk
// (ubd0) and the host's root as its own, read-only (hostfs); its first
// process is a script of ours that makes the file system, mounts it at
// /mnt, runs the command in the output directory (the host's, writable)
// and reports each step's exit status into the private directory, then
// powers the guest off. The image is closed and saved after the guest has
// gone, whichever way it went.
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "common/self_path.h"
#include "common/units.h"
#include "common/write_all.h"
#include "tools/serve_command.h"

namespace zonelab::cli {

namespace {

namespace fsys = std::filesystem;

// What each file system needs: its mkfs, the flags that make mkfs quiet and
// unconditional, the flag that stops it trimming the device, the option
// that sets its smallest write unit (sector or block) and the mkfs option
// letter it goes by, its read-only check, and the module a UML kernel has
// to load first.
struct FsKind {
  const char* name;
  const char* mkfs;
  const char* mkfs_flags;
  const char* mkfs_nodiscard;
  const char* unit_option;  // "{}" is the device's LBA size in bytes
  const char* unit_letter;
  const char* check;
  const char* module;
  const char* package;
};

constexpr std::array<FsKind, 4> kFsKinds = {{
    {"ext4", "mkfs.ext4", "-F -q", "-E nodiscard", "-b {}", "-b", "e2fsck -fn", "", "e2fsprogs"},
    {"xfs", "mkfs.xfs", "-f -q", "-K", "-s size={}", "-s", "xfs_repair -n", "", "xfsprogs"},
    {"f2fs", "mkfs.f2fs", "-f -q", "-t 0", "", "", "fsck.f2fs --dry-run", "f2fs", "f2fs-tools"},
    {"btrfs", "mkfs.btrfs", "-f -q", "-K", "", "", "btrfs check --readonly", "", "btrfs-progs"},
}};

// The guest's hint shim (serve/hint_shim.c), beside the executable.
constexpr const char* kHintShimName = "libzonelab_hints.so";
// The shim preloaded into UML's kernel process (serve/uml_fp_shim.c): its
// guest's vector registers on a host whose XSAVE area is larger than UML's.
constexpr const char* kFpShimName = "libzonelab_umlfp.so";

constexpr uint64_t kMemoryMinBytes = 64ull << 20;
constexpr uint64_t kMemoryMaxBytes = 64ull << 30;
// Where UML keeps its modules (Debian's user-mode-linux).
constexpr const char* kUmlModules = "/usr/lib/uml/modules";

const FsKind* find_fs(const std::string& name) {
  for (const FsKind& k : kFsKinds) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

// The shell's single quotes around anything.
std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

struct Plan {
  const FsKind* fs = nullptr;
  bool virtio = true;
  std::string device;  // the disk in the guest
  uint64_t memory_bytes = 0;
  std::string uml;
  std::string out;
  std::string hint_shim;  // --write-hints: the shim preloaded into COMMAND
  std::string fp_shim;    // preloaded into UML
};

Result<Plan> plan_of(const VmCommandOptions& o) {
  Plan p;
  p.fs = find_fs(o.fs);
  if (p.fs == nullptr) {
    return Error{fmt::format("--fs {}: one of ext4, xfs, f2fs, btrfs", one_line(o.fs, 64))};
  }
  if (o.disk != "virtio" && o.disk != "ubd") {
    return Error{fmt::format("--disk {}: virtio or ubd", one_line(o.disk, 64))};
  }
  p.virtio = o.disk == "virtio";
  p.device = p.virtio ? "/dev/vda" : "/dev/ubda";
  if (o.discard != "on" && o.discard != "off") {
    return Error{fmt::format("--discard {}: on or off", one_line(o.discard, 64))};
  }
  auto memory = parse_size_bytes(o.memory);
  if (!memory || *memory < kMemoryMinBytes || *memory > kMemoryMaxBytes) {
    return Error{fmt::format("--memory {}: a size from {} to {}", one_line(o.memory, 64),
                             format_size(kMemoryMinBytes), format_size(kMemoryMaxBytes))};
  }
  p.memory_bytes = *memory;
  if (o.command.empty()) return Error{"no command given: zonelab vm IMAGE [OPTIONS] -- COMMAND"};
  const char* uml_override = std::getenv("ZONELAB_UML");
  auto uml = serve::find_program(uml_override != nullptr ? uml_override : "linux.uml");
  if (!uml) {
    return Error{fmt::format(
        "User-Mode Linux is not installed: no {} (Debian: apt-get install user-mode-linux)",
        uml_override != nullptr ? uml_override : "linux.uml on PATH")};
  }
  p.uml = *uml;
  p.fp_shim = beside_executable(kFpShimName);
  if (access(p.fp_shim.c_str(), R_OK) != 0) {
    return Error{
        fmt::format("User-Mode Linux's FP shim {} is missing (build it with `make`)", p.fp_shim)};
  }
  if (o.write_hints) {
    p.hint_shim = beside_executable(kHintShimName);
    if (access(p.hint_shim.c_str(), R_OK) != 0) {
      return Error{fmt::format("--write-hints: the hint shim {} is missing (build it with `make`)",
                               p.hint_shim)};
    }
  }
  if (!o.no_mkfs && !serve::find_program(p.fs->mkfs)) {
    return Error{
        fmt::format("{} is not installed (Debian: apt-get install {})", p.fs->mkfs, p.fs->package)};
  }
  if ((*p.fs->module != 0 || p.virtio) && !fsys::is_directory(kUmlModules)) {
    return Error{fmt::format("{} is a module in User-Mode Linux and {} is missing",
                             p.virtio ? "virtio_blk" : p.fs->name, kUmlModules)};
  }
  std::error_code ec;
  fsys::path out = o.out.empty() ? fsys::current_path(ec) : fsys::path(o.out);
  fsys::create_directories(out, ec);
  if (!fsys::is_directory(out)) {
    return Error{
        fmt::format("--out {}: not a directory{}", out.string(), ec ? ": " + ec.message() : "")};
  }
  p.out = fsys::absolute(out, ec).lexically_normal().string();
  while (p.out.size() > 1 && p.out.back() == '/') p.out.pop_back();
  return p;
}

// The guest's first process.
// The guest's disk says its sectors are 512 bytes (UML's driver has no
// other size); the device's LBAs are larger, so mkfs is told the device's
// unit, as a kernel would tell it of an NVMe namespace formatted so -- else
// every 512-byte write of a journal becomes a read, merge and write of an
// LBA. Unless the options given set it themselves.
std::string unit_flag(const FsKind& fs, const std::string& options, uint64_t lba_bytes) {
  if (*fs.unit_option == 0 || lba_bytes <= 512) return "";
  std::string words = " " + options + " ";
  if (words.find(std::string(" ") + fs.unit_letter + " ") != std::string::npos) return "";
  return " " + fmt::format(fmt::runtime(fs.unit_option), lba_bytes);
}

std::string init_script(const VmCommandOptions& o, const Plan& p, const std::string& state,
                        uint64_t lba_bytes) {
  const FsKind& fs = *p.fs;
  // A virtio disk tells the guest its block size itself.
  std::string mkfs = fmt::format("{} {}{}{}{} {}", fs.mkfs, fs.mkfs_flags,
                                 o.discard == "off" ? std::string(" ") + fs.mkfs_nodiscard : "",
                                 p.virtio ? "" : unit_flag(fs, o.mkfs_options, lba_bytes),
                                 o.mkfs_options.empty() ? "" : " " + o.mkfs_options, p.device);
  std::string mount_options = o.discard == "on" ? "discard" : "nodiscard";
  if (!o.mount_options.empty()) mount_options += "," + o.mount_options;
  std::string command;
  for (const std::string& word : o.command) command += (command.empty() ? "" : " ") + quote(word);
  std::string s;
  s += "#!/bin/sh\n# zonelab vm: the guest's first process\n";
  s += "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n";
  s += fmt::format("STATE={}\nOUT={}\n", quote(state), quote(p.out));
  // Belt and braces beside the PID namespace: nothing below runs anywhere
  // but inside the guest's kernel (a process that outlived it would be on
  // the host, where powering off is the last thing to do).
  s += "in_guest() { grep -q 'User Mode Linux' /proc/cpuinfo 2>/dev/null; }\n";
  s += "off() { sync; echo off > \"$STATE/off\"; in_guest && echo o > /proc/sysrq-trigger; "
       "sleep 30; }\n";
  s += "failed() { in_guest || exit 1; echo \"$1 $2\" > \"$STATE/failed\"; off; }\n";
  // As an ordinary user the guest's kernel runs in a user namespace where
  // the host's root is nobody, and so is the owner of the host's setuid
  // mount(8) seen through hostfs: run, it would drop the guest's root to
  // nobody. Then /run is mounted by a program that is not setuid
  // (python3's mount(2)), and mount and umount run from copies there.
  s += "if [ \"$(stat -L -c %u \"$(command -v mount)\")\" = 0 ]; then\n"
       "  mount -t tmpfs -o mode=1777 tmpfs /run || failed boot $?\n"
       "else\n"
       "  python3 -c 'import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
       "sys.exit(libc.mount(b\"tmpfs\", b\"/run\", b\"tmpfs\", 0, b\"mode=1777\") != 0)' "
       "|| failed boot $?\n"
       "  mkdir -p /run/bin && cp -L \"$(command -v mount)\" \"$(command -v umount)\" /run/bin/ && "
       "chmod 755 /run/bin/mount /run/bin/umount && export PATH=\"/run/bin:$PATH\" "
       "|| failed boot $?\n"
       "fi\n";
  s += "mount -t proc proc /proc\nmount -t sysfs sysfs /sys\n";
  s += "mount -t hostfs -o \"rw,$STATE\" hostfs \"$STATE\" || failed boot $?\n";
  s += "mount -t hostfs -o \"rw,$OUT\" hostfs \"$OUT\" || failed out $?\n";
  s += "mkdir -p /run/tmp\nexport TMPDIR=/run/tmp HOME=/run/tmp\n";
  if (*fs.module != 0 || p.virtio) {
    s += fmt::format("mkdir -p /run/modules/lib && ln -s {} /run/modules/lib/modules\n",
                     kUmlModules);
  }
  if (p.virtio) {
    // The disk appears once its driver is in; devtmpfs makes the node.
    s += "modprobe -d /run/modules virtio_blk || failed disk $?\n";
    s += fmt::format(
        "n=0; while [ ! -b {0} ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done\n"
        "[ -b {0} ] || failed disk 1\n",
        p.device);
  }
  if (*fs.module != 0) {
    s += fmt::format("modprobe -d /run/modules {} || failed module $?\n", fs.module);
  }
  if (!o.no_mkfs) s += fmt::format("{} || failed mkfs $?\n", mkfs);
  s += fmt::format("mount -t {} -o {} {} /mnt || failed mount $?\n", fs.name, quote(mount_options),
                   p.device);
  s += "echo up > \"$STATE/up\"\n";
  s += "cd \"$OUT\"\nexport ZONELAB_FS=/mnt ZONELAB_OUT=\"$OUT\"\n";
  if (!p.hint_shim.empty()) {
    s += fmt::format("export LD_PRELOAD={} ZONELAB_STREAM_HINTS=\"$STATE/hints\"\n",
                     quote(p.hint_shim));
  }
  s += command + "\ncode=$?\nin_guest || exit 1\necho $code > \"$STATE/command\"\ncd /\n";
  s += "umount /mnt || failed umount $?\n";
  if (o.fsck) s += fmt::format("{} {}; echo $? > \"$STATE/fsck\"\n", fs.check, p.device);
  s += "off\n";
  return s;
}

Result<std::string> make_private_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/zonelab-vm.XXXXXX", tmp != nullptr && *tmp ? tmp : "/tmp");
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    return Error{fmt::format("cannot make a private directory in {}: {}",
                             tmp != nullptr ? tmp : "/tmp", std::strerror(errno))};
  }
  return std::string(buffer.data());
}

// A step of the init script, as the error says it.
std::string step_text(const std::string& step, const FsKind& fs) {
  if (step == "mkfs") return fs.mkfs;
  if (step == "mount") return fmt::format("mounting {} at /mnt", fs.name);
  if (step == "umount") return fmt::format("unmounting {}", fs.name);
  if (step == "module") return fmt::format("loading the {} module", fs.module);
  if (step == "out") return "mounting the output directory";
  if (step == "disk") return "finding the virtio disk (virtio_blk)";
  return "the guest's setup";
}

std::optional<int> read_status(const std::string& path) {
  std::ifstream in(path);
  int value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// How long a guest that asked to power off may take to exit.
constexpr std::chrono::seconds kPowerOffGrace{15};
// How long the console stays silent after a line of the kernel's panic
// before the guest is taken for stuck (a real panic prints its stack and
// then nothing; a COMMAND that printed such a line goes on printing or
// ends).
constexpr std::chrono::seconds kPanicGrace{10};

// What the console forwarder saw.
struct ConsoleWatch {
  std::atomic<bool> panicked{false};
  // When the console last said anything (steady clock, ns).
  std::atomic<int64_t> last_output_ns{0};
  std::mutex lock;
  std::string line;  // the panic's line

  std::string panic_line() {
    std::lock_guard<std::mutex> hold(lock);
    return line;
  }
};

constexpr std::string_view kPanicPrefix = "Kernel panic - not syncing";
constexpr size_t kConsoleLineMax = 512;

// Passes the guest's console from `from` to `to` until its end, and notes
// a line of the kernel's panic. A reader that has gone (a closed pipe)
// does not stop the draining: the guest must not block on its console.
void forward_console(int from, int to, ConsoleWatch& watch) {
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  std::vector<char> buffer(64 << 10);
  std::string line;
  bool passing = true;
  for (;;) {
    ssize_t n = read(from, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    watch.last_output_ns.store(std::chrono::steady_clock::now().time_since_epoch() /
                               std::chrono::nanoseconds(1));
    if (passing && !write_all(to, buffer.data(), static_cast<uint64_t>(n))) passing = false;
    for (ssize_t i = 0; i < n; ++i) {
      char c = buffer[static_cast<size_t>(i)];
      if (c == '\n' || c == '\r') {
        if (!watch.panicked.load() && line.starts_with(kPanicPrefix)) {
          {
            std::lock_guard<std::mutex> hold(watch.lock);
            watch.line = line;
          }
          watch.panicked.store(true);
        }
        line.clear();
      } else if (line.size() < kConsoleLineMax) {
        line += c;
      }
    }
  }
}

// The keeper's exit status when it cannot make the guest's PID namespace.
constexpr int kNoNamespaceExit = 126;

// Boots UML; the pid of the process that waits for it, or -1.
//
// UML runs every process of the guest as a host process of its own, which
// the kernel's main process traces; were the main process to die alone,
// those would run on as host processes, with the host's files and the
// rights of the user. So the guest gets a PID namespace of its own (where
// the system allows one: as root, or through a user namespace), with
// UML's main process as its init: when it dies, for any reason, the host
// kernel kills everything in the namespace before its death is reported.
// A keeper process between us and UML makes the namespace; both die with
// their parent (PR_SET_PDEATHSIG), so kill -9 of zonelab takes the guest
// down too. The keeper ends as UML ended (its status, or the same signal).
pid_t boot(const std::vector<std::string>& argv, const std::string& state,
           const std::string& fp_shim, int console) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // UML keeps its memory in a file under TMPDIR, and warns unless that is
  // a tmpfs: /dev/shm where there is one, else our private directory.
  std::string tmpdir =
      "TMPDIR=" + (access("/dev/shm", W_OK | X_OK) == 0 ? std::string("/dev/shm") : state);
  // UML's kernel process, not the guest's (UML starts those itself, without
  // exec): serve/uml_fp_shim.c.
  std::string preload = "LD_PRELOAD=" + fp_shim;
  // Without privileges the namespace comes with a user namespace, in which
  // the user is itself (its maps are written by the keeper, after fork,
  // from these strings made before it).
  const std::string uid_map = fmt::format("{0} {0} 1\n", getuid());
  const std::string gid_map = fmt::format("{0} {0} 1\n", getgid());
  pid_t keeper = fork();
  if (keeper != 0) return keeper;
  // From here to exec: only calls that are safe after fork in a threaded
  // process.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_UNBLOCK, &all, nullptr);
  if (unshare(CLONE_NEWPID) != 0) {
    if (unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0) _exit(kNoNamespaceExit);
    auto put = [](const char* path, const char* text, size_t length) {
      int fd = open(path, O_WRONLY | O_CLOEXEC);
      bool ok = fd >= 0 && write(fd, text, length) == static_cast<ssize_t>(length);
      if (fd >= 0) close(fd);
      return ok;
    };
    if (!put("/proc/self/setgroups", "deny", 4) ||
        !put("/proc/self/uid_map", uid_map.data(), uid_map.size()) ||
        !put("/proc/self/gid_map", gid_map.data(), gid_map.size())) {
      _exit(kNoNamespaceExit);
    }
  }
  pid_t uml = fork();
  if (uml < 0) _exit(127);
  if (uml == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    putenv(tmpdir.data());
    putenv(preload.data());
    dup2(console, STDOUT_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(uml, &status, 0) < 0) {
    if (errno != EINTR) _exit(127);
  }
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    kill(getpid(), WTERMSIG(status));
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

}  // namespace

void add_vm_command(CLI::App& app, VmCommandOptions& o) {
  auto* vm = app.add_subcommand(
      "vm",
      "boot User-Mode Linux on a served block image: make a kernel file system, mount it at "
      "/mnt and run COMMAND inside");
  vm->add_option("IMAGE", o.flags.image, "block-interface device image (interface = block)")
      ->required();
  vm->add_option("COMMAND", o.command, "what to run in the guest, after --")->type_name("...");
  vm->add_option("--fs", o.fs, "ext4 (default), xfs, f2fs or btrfs")->type_name("FS");
  vm->add_option("--discard", o.discard,
                 "on: mount with -o discard (freed blocks trimmed online); off (default)")
      ->type_name("on|off");
  vm->add_option("--disk", o.disk,
                 "how the guest sees the image: virtio (default; a virtio block device on a "
                 "vhost-user socket, the guest's queue depth reaching the device) or ubd (UML's "
                 "own disk on a FUSE file: one 4 KiB request at a time)")
      ->type_name("virtio|ubd");
  vm->add_option("--memory", o.memory, "the guest's memory (default 512MiB)")->type_name("SIZE");
  vm->add_option("--out", o.out,
                 "host directory the guest writes in; COMMAND runs there (default: the current "
                 "directory)")
      ->type_name("DIR");
  vm->add_option("--mkfs-options", o.mkfs_options, "more options for mkfs")->type_name("OPTS");
  vm->add_option("--mount-options", o.mount_options, "more mount options")->type_name("OPTS");
  vm->add_flag("--no-mkfs", o.no_mkfs, "mount the file system already on the image");
  vm->add_flag("--fsck", o.fsck,
               "after COMMAND, unmount and check the file system read-only with its own tool "
               "(e2fsck -fn, xfs_repair -n, fsck.f2fs --dry-run, btrfs check --readonly)");
  vm->add_flag("--verbose", o.verbose, "show the guest kernel's messages");
  vm->add_flag("--write-hints", o.write_hints,
               "carry COMMAND's write-lifetime hints (fcntl F_SET_RW_HINT, as RocksDB sets them) "
               "to the block SSD's write streams, through a shim preloaded into it; the image "
               "needs block.streams of 2 or more (docs/serve.md)");
  add_serve_flags(vm, o.flags);
}

int run_vm_command(const VmCommandOptions& o) {
  auto plan = plan_of(o);
  if (!plan) return bad_input(plan.error());
  auto state = make_private_dir();
  if (!state) return bad_input(state.error());
  // The FUSE mount for a ubd disk; a virtio disk is a socket beside it.
  std::string mount_point = *state + "/mnt";
  if (!plan->virtio) fsys::create_directory(mount_point);
  auto parsed = serve_options(o.flags, mount_point, "disk",
                              plan->virtio ? *state + "/disk.sock" : std::string());
  if (!parsed) return bad_input(parsed.error());
  serve::ServeOptions options = *parsed;
  if (o.write_hints) {
    options.stream_hints_path = *state + "/hints";
    std::ofstream(options.stream_hints_path).flush();  // the shim appends to it
  }
  sigset_t signals = stop_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  auto cleanup = [&] {
    std::error_code ec;
    fsys::remove_all(*state, ec);
  };
  auto served = serve::ServedImage::open(options);
  if (!served) {
    cleanup();
    return bad_input(served.error());
  }
  for (const std::string& n : (*served)->notes()) note(n);
  std::string init = *state + "/init.sh";
  {
    std::ofstream script(init);
    script << init_script(o, *plan, *state, (*served)->block_bytes());
  }
  chmod(init.c_str(), 0755);
  std::vector<std::string> argv = {
      plan->uml,
      fmt::format("mem={}M", plan->memory_bytes >> 20),
      plan->virtio ? "virtio_uml.device=" + (*served)->file_path() + ":2"
                   : "ubd0=" + (*served)->file_path(),
      "root=/dev/root",
      "rootfstype=hostfs",
      "rootflags=/",
      "ro",
      "init=" + init,
      "con=null",
      "con0=fd:0,fd:1",
      "umid=zonelab-vm",
      "uml_dir=" + *state,
  };
  if (!o.verbose) {
    argv.push_back("quiet");
    argv.push_back("loglevel=1");
  }
  // The guest's console (its kernel's messages and COMMAND's output) comes
  // through a pipe, passed on to stdout (stderr with --json) and read for
  // the kernel's panic: Debian's UML 6.1 spins after one rather than exit.
  int console[2];
  if (pipe2(console, O_CLOEXEC) != 0) {
    cleanup();
    std::fprintf(stderr, "zonelab: error: cannot make a pipe for the guest's console: %s\n",
                 std::strerror(errno));
    return kExitInternal;
  }
  ConsoleWatch watch;
  std::thread forwarder(forward_console, console[0], o.flags.json ? STDERR_FILENO : STDOUT_FILENO,
                        std::ref(watch));
  auto start = std::chrono::steady_clock::now();
  pid_t pid = boot(argv, *state, plan->fp_shim, console[1]);
  close(console[1]);
  int wait_status = 0;
  bool interrupted = false;
  // Once the guest has synced and asked to power off, nothing of the image
  // is in flight. Debian's UML 6.1 has been seen (rarely) to print "Power
  // down" and then spin instead of exiting; it is stopped after a grace.
  std::optional<std::chrono::steady_clock::time_point> off_since;
  bool stopped_after_off = false;
  const std::string off_marker = *state + "/off";
  bool stopped_after_panic = false;
  while (pid > 0) {
    pid_t done = waitpid(pid, &wait_status, WNOHANG);
    if (done == pid) break;
    if (watch.panicked.load() && !stopped_after_panic) {
      auto silent = std::chrono::steady_clock::now().time_since_epoch() -
                    std::chrono::nanoseconds(watch.last_output_ns.load());
      if (silent > kPanicGrace) {
        stopped_after_panic = true;
        kill(pid, SIGKILL);
      }
    }
    if (!off_since && access(off_marker.c_str(), F_OK) == 0) {
      off_since = std::chrono::steady_clock::now();
    }
    if (off_since && !stopped_after_off &&
        std::chrono::steady_clock::now() - *off_since > kPowerOffGrace) {
      stopped_after_off = true;
      kill(pid, SIGKILL);
    }
    timespec wait{0, 100'000'000};
    int got = sigtimedwait(&signals, nullptr, &wait);
    if (got == SIGUSR1) {
      if (Outcome w = write_stats_file(o.flags.stats_path, (*served)->stats_json()); !w) {
        note(w.error());
      }
    } else if (got > 0 && !interrupted) {
      interrupted = true;
      kill(pid, SIGKILL);
    }
  }
  // Every end of the pipe's writing side is gone with the guest's namespace
  // and the keeper.
  forwarder.join();
  close(console[0]);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stopped_after_off) {
    note(fmt::format("the guest powered off but did not exit within {} s; it was stopped",
                     std::chrono::duration_cast<std::chrono::seconds>(kPowerOffGrace).count()));
  }
  Outcome closed = (*served)->close();
  if (std::string why = (*served)->transport_error(); !why.empty()) {
    note(fmt::format("the guest's disk was taken away: {}", why));
  }
  Json stats = (*served)->stats_json();
  if (Outcome w = write_stats_file(o.flags.stats_path, stats); !w) note(w.error());

  std::optional<int> command = read_status(*state + "/command");
  std::optional<int> fsck = read_status(*state + "/fsck");
  std::string failed = read_line(*state + "/failed");
  cleanup();
  if (!closed) {
    std::fprintf(stderr, "zonelab: error: %s\n", one_line(closed.error()).c_str());
    return kExitDeviceError;
  }
  int code = kExitOk;
  std::string problem;
  if (pid < 0) {
    problem = fmt::format("cannot start {}: {}", plan->uml, std::strerror(errno));
    code = kExitInternal;
  } else if (!command && failed.empty() && WIFEXITED(wait_status) &&
             WEXITSTATUS(wait_status) == kNoNamespaceExit) {
    problem =
        "cannot give the guest a PID namespace of its own (as root, or through a user namespace): "
        "without one, a guest whose kernel dies would leave its processes running on the host";
    code = kExitBadInput;
  } else if (interrupted) {
    problem = "interrupted: the guest was stopped";
    code = kExitInternal;
  } else if (stopped_after_panic || (!command && watch.panicked.load())) {
    problem =
        fmt::format("the guest's kernel panicked ({}){}", watch.panic_line(),
                    stopped_after_panic
                        ? fmt::format(" and was stopped after {} s of silence", kPanicGrace.count())
                        : "");
    code = kExitInternal;
  } else if (!failed.empty()) {
    std::string step = failed.substr(0, failed.find(' '));
    std::string status = failed.substr(failed.find(' ') + 1);
    problem = fmt::format("{} failed in the guest (exit {}){}", step_text(step, *plan->fs), status,
                          o.verbose ? "" : "; --verbose shows the kernel's messages");
    code = kExitBadInput;
  } else if (!command) {
    problem = WIFSIGNALED(wait_status)
                  ? fmt::format("the guest was killed (signal {}) before COMMAND ended",
                                WTERMSIG(wait_status))
                  : "the guest ended before COMMAND did (--verbose shows the kernel's messages)";
    code = kExitInternal;
  } else if (*command != 0) {
    problem = fmt::format("COMMAND exited with status {} in the guest", *command);
    code = *command;
  } else if (o.fsck && fsck.value_or(-1) != 0) {
    problem = fsck ? fmt::format("{} found problems (exit {})", plan->fs->check, *fsck)
                   : fmt::format("{} did not run", plan->fs->check);
    code = kExitDeviceError;
  }
  if (o.flags.json) {
    Json out = status_json(Status::kSuccess);
    out["exit_code"] = code;
    out["fs"] = plan->fs->name;
    out["discard"] = o.discard == "on";
    out["disk"] = o.disk;
    out["command_status"] = command ? Json(*command) : Json(nullptr);
    if (o.fsck) out["fsck_status"] = fsck ? Json(*fsck) : Json(nullptr);
    if (!problem.empty()) out["error"] = problem;
    out["seconds"] = seconds;
    for (auto& [key, value] : stats.items()) out[key] = value;
    print_json(out);
  } else {
    std::fflush(stdout);
    if (!problem.empty()) std::fprintf(stderr, "zonelab: error: %s\n", problem.c_str());
    if (o.fsck && fsck) {
      std::fprintf(stderr, "zonelab: %s: %s\n", plan->fs->check,
                   *fsck == 0 ? "clean" : fmt::format("exit {}", *fsck).c_str());
    }
  }
  // The summary goes to stderr: stdout is the command's.
  if (!o.flags.json && code == kExitOk) print_serve_summary(stderr, stats, seconds);
  return code;
}

}  // namespace zonelab::cli
