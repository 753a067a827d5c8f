// Shared pieces of the command-line tool; see cli.h.
#include "tools/cli.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>

#include "common/rng.h"
#include "common/units.h"
#include "stack/device_factory.h"

namespace zonelab::cli {

int bad_input(const std::string& message) {
  fmt::print(stderr, "zonelab: error: {}\n", one_line(message, 1000));
  return kExitBadInput;
}

void note(const std::string& message) {
  fmt::print(stderr, "zonelab: note: {}\n", one_line(message, 1000));
}

namespace {

uint64_t parse_count_option(const std::string& name, const std::string& value) {
  auto n = parse_count(value);
  if (!n) {
    throw CLI::ValidationError(
        name, fmt::format("'{}' is not a whole number from 0 to 18446744073709551615",
                          one_line(value, 64)));
  }
  return *n;
}

}  // namespace

CLI::Option* add_count_option(CLI::App* app, const std::string& name, uint64_t& target,
                              const std::string& help) {
  return app
      ->add_option_function<std::string>(
          name, [&target, name](const std::string& v) { target = parse_count_option(name, v); },
          help)
      ->type_name("N");
}

CLI::Option* add_count_option(CLI::App* app, const std::string& name,
                              std::optional<uint64_t>& target, const std::string& help) {
  return app
      ->add_option_function<std::string>(
          name, [&target, name](const std::string& v) { target = parse_count_option(name, v); },
          help)
      ->type_name("N");
}

void add_config_options(CLI::App& app, ConfigOptions& options) {
  std::string names;
  for (const std::string& name : preset_names()) names += (names.empty() ? "" : ", ") + name;
  app.add_option("--preset", options.preset,
                 "start from a shipped preset: " + names + " (small is the default)");
  app.add_option("--config", options.config_file,
                 "TOML configuration file applied over the preset");
  app.add_option("--set", options.overrides, "override one key, e.g. --set zns.max_open=8")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
}

Result<std::unique_ptr<Stack>> open_or_make_stack(const std::string& image,
                                                  const ConfigOptions& config,
                                                  const StackOptions& options) {
  if (!image.empty()) return Stack::open(image, options);
  auto resolved = resolve_config(config);
  if (!resolved) return Error{resolved.error()};
  return Stack::make(*resolved, options);
}

Result<Config> resolve_config(const ConfigOptions& options, bool check) {
  Config config = default_config();
  if (!options.preset.empty()) {
    auto preset = preset_config(options.preset);
    if (!preset) return Error{preset.error()};
    config = *preset;
  }
  if (!options.config_file.empty()) {
    auto outcome = apply_toml_file(config, options.config_file);
    if (!outcome) return Error{outcome.error()};
  }
  for (const auto& assignment : options.overrides) {
    auto outcome = apply_override(config, assignment);
    if (!outcome) return Error{outcome.error()};
  }
  if (!check) return config;
  auto checked = check_device_config(config);
  if (!checked) return Error{checked.error()};
  return config;
}

void fill_pattern(uint64_t seed, uint64_t lba, uint8_t* out, uint64_t lba_size) {
  Rng rng(derive_seed(seed, lba, 0x5a5a));
  for (uint64_t i = 0; i < lba_size; i += 8) {
    uint64_t word = rng.next();
    std::memcpy(out + i, &word, std::min<uint64_t>(8, lba_size - i));
  }
}

bool ProgressThrottle::due() {
  if (quiet_) return false;
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::seconds(2)) return false;
  last_ = now;
  return true;
}

double ProgressThrottle::wall_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void print_virtual_progress(ProgressThrottle& throttle, uint64_t virtual_ns, uint64_t commands) {
  if (!throttle.due()) return;
  fmt::print(stderr, "progress: virtual {:.3f} s, {} commands, {:.0f} s wall\n",
             static_cast<double>(virtual_ns) / 1e9, commands, throttle.wall_s());
}

Json status_json(Status status) {
  Json j;
  j["status"] = std::string(status_name(status));
  j["sct"] = status_sct(status);
  j["sc"] = status_sc(status);
  return j;
}

void print_json(const Json& json) {
  // Names and paths come from the user byte for byte: a byte that is not
  // UTF-8 is printed as U+FFFD rather than failing the command.
  std::string text = json.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

namespace {

bool same_file(const struct stat& a, const std::string& image) {
  struct stat b;
  return ::stat(image.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

std::optional<std::string> output_is_image(std::string_view flag, const std::string& path,
                                           const std::string& image) {
  struct stat a;
  if (path.empty() || ::stat(path.c_str(), &a) != 0 || !same_file(a, image)) return std::nullopt;
  return fmt::format("{} {}: is the image itself (it would be overwritten)", flag, one_line(path));
}

bool is_image_file(int fd, const std::string& image) {
  struct stat a;
  return ::fstat(fd, &a) == 0 && same_file(a, image);
}

}  // namespace zonelab::cli
