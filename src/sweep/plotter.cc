// The plotting tool, run as a child process; see plotter.h.
#include "sweep/plotter.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "zonelab/result.h"

extern char** environ;

#ifndef ZONELAB_SOURCE_DIR
#define ZONELAB_SOURCE_DIR "."
#endif

namespace zonelab {
namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? std::string(value) : fallback;
}

// The last non-empty line of a process's output, for a one-line warning.
std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  start = start == std::string::npos ? 0 : start + 1;
  return one_line(text.substr(start, end + 1 - start));
}

// Runs the plotting tool on the experiments' JSON files. Empty on success;
// otherwise why it failed, in one line.
}  // namespace

std::string run_plotter(const std::vector<fs::path>& json_files) {
  std::string source_dir = ZONELAB_SOURCE_DIR;
  std::string venv_python = source_dir + "/.venv/bin/python";
  std::error_code ec;
  std::string python =
      env_or("ZONELAB_PYTHON", fs::exists(venv_python, ec) ? venv_python : std::string("python3"));
  std::string script = env_or("ZONELAB_PLOT", source_dir + "/tools/plot/plot.py");
  std::vector<std::string> args = {python, script};
  for (const auto& path : json_files) args.push_back(path.string());
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return fmt::format("pipe: {}", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return fmt::format("cannot run {}: {}", python, std::strerror(spawned));
  }
  std::string output;
  char buffer[4096];
  for (;;) {
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buffer, static_cast<size_t>(n));
    if (output.size() > 65536) output.erase(0, output.size() - 65536);  // keep the tail
  }
  close(pipe_fds[0]);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) return "";
  std::string why = last_line(output);
  if (why.empty()) why = fmt::format("{} {} failed", python, script);
  return why;
}

}  // namespace zonelab
