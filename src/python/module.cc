// The Python module `zonelab` (docs/python.md): images, device commands and
// zone operations, bench jobs in virtual time, traces, and counters, for
// notebooks and scripts. Everything runs in this process through the stack
// (stack/stack.h); results are plain dicts, as the command line's --json
// gives them.
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "stack/device_factory.h"
#include "stack/stack.h"
#include "stack/stack_report.h"
#include "sweep/plotter.h"
#include "sweep/sweep.h"
#include "workload/job.h"
#include "workload/replay.h"
#include "workload/runner.h"
#include "workload/trace.h"

namespace py = pybind11;

namespace zonelab::python {

namespace {

using Json = nlohmann::ordered_json;

// JSON into Python objects (dicts keep their order).
py::object to_python(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return py::none();
    case Json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case Json::value_t::number_integer:
      return py::int_(j.get<int64_t>());
    case Json::value_t::number_unsigned:
      return py::int_(j.get<uint64_t>());
    case Json::value_t::number_float:
      return py::float_(j.get<double>());
    case Json::value_t::string:
      return py::str(j.get<std::string>());
    case Json::value_t::array: {
      py::list out;
      for (const auto& v : j) out.append(to_python(v));
      return out;
    }
    default: {
      py::dict out;
      for (const auto& [k, v] : j.items()) out[py::str(k)] = to_python(v);
      return out;
    }
  }
}

class ZonelabError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

Config config_of(const std::string& preset, const std::map<std::string, std::string>& settings) {
  auto preset_made = preset_config(preset);
  if (!preset_made) throw ZonelabError(preset_made.error());
  Config c = *preset_made;
  for (const auto& [key, value] : settings) {
    if (auto ok = apply_override(c, key + "=" + value); !ok) throw ZonelabError(ok.error());
  }
  if (auto ok = check_device_config(c); !ok) throw ZonelabError(ok.error());
  return c;
}

Json jobs_json(const RunResult& run) {
  Json out;
  Json list = Json::array();
  for (const JobResult& r : run.jobs) list.push_back(job_result_json(r));
  out["jobs"] = list;
  out["virtual_time_ns"] = run.end_ns - run.start_ns;
  out["commands"] = run.commands;
  return out;
}

// An open image (or a throwaway device) and its stack, in virtual time.
class Device {
 public:
  explicit Device(std::unique_ptr<Stack> stack) : stack_(std::move(stack)) {}
  ~Device() { close(); }

  Stack& stack() {
    if (stack_ == nullptr) throw ZonelabError("the device is closed");
    return *stack_;
  }

  py::dict info() {
    Json j = device_info_json(stack().info());
    j["stores_data"] = stack().stores_data();
    return py::dict(to_python(j));
  }

  py::list zones(uint32_t first, std::optional<uint32_t> count) {
    const DeviceInfo& i = stack().info();
    if (i.interface != "zns") throw ZonelabError("a block-interface device has no zones");
    if (first >= i.zone_count) {
      throw ZonelabError(
          fmt::format("zone {} does not exist (the device has {})", first, i.zone_count));
    }
    uint32_t end =
        count ? static_cast<uint32_t>(std::min<uint64_t>(i.zone_count, uint64_t{first} + *count))
              : i.zone_count;
    py::list out;
    for (uint32_t z = first; z < end; ++z) {
      ZoneDescriptor d = stack().zone(z);
      py::dict zd;
      zd["zone"] = d.zone;
      zd["start"] = d.start_lba;
      zd["capacity"] = d.capacity_lbas;
      zd["wp"] = d.wp_lba;
      zd["state"] = std::string(zone_state_name(d.state));
      out.append(zd);
    }
    return out;
  }

  py::dict run(Command& c) {
    if (!stack().io().submit_wait(c)) throw ZonelabError("the device takes no more commands");
    py::dict d;
    d["status"] = std::string(status_name(c.status));
    d["latency_ns"] = c.latency_ns();
    if (c.opcode == Opcode::kAppend) d["lba"] = c.result_lba;
    return d;
  }

  py::dict write(uint64_t lba, const py::bytes& data, bool append) {
    std::string bytes = data;
    const uint64_t lba_bytes = stack().info().lba_size_bytes;
    if (bytes.empty() || bytes.size() % lba_bytes != 0) {
      throw ZonelabError(
          fmt::format("{} bytes are not a whole number of {}-byte LBAs", bytes.size(), lba_bytes));
    }
    Command c;
    c.opcode = append ? Opcode::kAppend : Opcode::kWrite;
    c.slba = lba;
    c.nlb = static_cast<uint32_t>(bytes.size() / lba_bytes);
    c.data = reinterpret_cast<uint8_t*>(bytes.data());
    return run(c);
  }

  py::tuple read(uint64_t lba, uint32_t blocks) {
    if (blocks == 0) throw ZonelabError("a read of 0 blocks");
    std::string out(uint64_t{blocks} * stack().info().lba_size_bytes, '\0');
    Command c;
    c.opcode = Opcode::kRead;
    c.slba = lba;
    c.nlb = blocks;
    c.data = reinterpret_cast<uint8_t*>(out.data());
    py::dict d = run(c);
    return py::make_tuple(d, py::bytes(out));
  }

  py::dict zone_action(uint32_t zone, const std::string& action) {
    auto a = zone_action_from_name(action);
    if (!a || *a == ZoneAction::kNone) {
      throw ZonelabError(
          fmt::format("'{}' is no zone action (open, close, finish, reset, offline)", action));
    }
    const DeviceInfo& i = stack().info();
    if (zone >= i.zone_count) throw ZonelabError(fmt::format("zone {} does not exist", zone));
    Command c;
    c.opcode = Opcode::kZoneManagementSend;
    c.action = *a;
    c.slba = i.zone_start_lba(zone);
    return run(c);
  }

  py::dict deallocate(uint64_t lba, uint32_t blocks) {
    Command c;
    c.opcode = Opcode::kDeallocate;
    c.slba = lba;
    c.nlb = blocks;
    return run(c);
  }

  py::dict flush() {
    Command c;
    c.opcode = Opcode::kFlush;
    return run(c);
  }

  py::object counters() {
    Json out;
    uint64_t now = stack().clock().now_ns();
    stack().inspect([&](const ModeledDevice& d) { out = device_counters_json(d, now); });
    out["virtual_time_ns"] = now;
    return to_python(out);
  }

  uint64_t now_ns() { return stack().clock().now_ns(); }

  py::object bench(const std::string& job_toml) {
    auto jobs = parse_job_file_text(job_toml, "job");
    if (!jobs) throw ZonelabError(jobs.error());
    Stack& s = stack();
    if (auto ok = check_jobs(*jobs, s.info()); !ok) throw ZonelabError(ok.error());
    if (auto ok = check_jobs_on_device(*jobs, s.device()); !ok) throw ZonelabError(ok.error());
    RunResult run;
    {
      py::gil_scoped_release unlocked;
      run = run_jobs(s.device(), s.sim(), *jobs, s.config().seed);
    }
    Json out = jobs_json(run);
    uint64_t span = run.end_ns - run.start_ns;
    s.inspect([&](const ModeledDevice& d) { out["device"] = device_counters_json(d, span); });
    return to_python(out);
  }

  py::object replay(const std::string& trace_path, bool timestamps, uint32_t iodepth) {
    if (iodepth == 0 || iodepth > 65536) throw ZonelabError("iodepth: from 1 to 65536");
    auto trace = read_trace_file(trace_path);
    if (!trace) throw ZonelabError(trace.error());
    Stack& s = stack();
    if (auto ok = check_trace(*trace, s.info(), s.device()); !ok) {
      throw ZonelabError(fmt::format("{}: {}", trace_path, ok.error()));
    }
    ReplayOptions o;
    o.timestamps = timestamps;
    o.iodepth = iodepth;
    ReplayResult r;
    {
      py::gil_scoped_release unlocked;
      r = replay_trace(s.device(), s.sim(), *trace, o);
    }
    return to_python(replay_result_json(r));
  }

  void close() {
    if (stack_ == nullptr) return;
    auto closed = stack_->close();
    stack_.reset();
    if (!closed) throw ZonelabError(closed.error());
  }

 private:
  std::unique_ptr<Stack> stack_;
};

std::unique_ptr<Device> open_image(const std::string& path, bool read_only,
                                   const std::string& scheduler) {
  StackOptions so;
  so.read_only = read_only;
  so.scheduler = scheduler;
  auto stack = Stack::open(path, so);
  if (!stack) throw ZonelabError(stack.error());
  return std::make_unique<Device>(std::move(stack).value());
}

// A parsed, expanded sweep spec (src/sweep/sweep.h): the pieces the Dask
// driver (python/zonelab/sweep.py) is made of.
class Sweep {
 public:
  explicit Sweep(SweepSpec spec) : spec_(std::move(spec)) {}
  static Sweep load(const std::string& path) {
    auto spec = load_sweep_spec(path);
    if (!spec) throw ZonelabError(spec.error());
    return Sweep(*spec);
  }
  static Sweep from_text(const std::string& text, const std::string& origin) {
    auto spec = parse_sweep_spec_text(text, origin);
    if (!spec) throw ZonelabError(spec.error());
    return Sweep(*spec);
  }

  const std::string& name() const { return spec_.name; }
  const std::string& origin() const { return spec_.origin; }
  const std::string& text() const { return spec_.text; }
  std::vector<std::string> axes() const { return spec_.axes; }
  size_t size() const { return spec_.points.size(); }
  py::list points() const {
    py::list out;
    for (const SweepPoint& p : spec_.points) out.append(to_python(point_json(p)));
    return out;
  }

  std::string run_point(size_t index) const {
    Result<std::string> result = Error{""};
    {
      py::gil_scoped_release unlocked;
      result = run_sweep_point(spec_, index);
    }
    if (!result) throw ZonelabError(result.error());
    return *result;
  }

  py::tuple lookup(const std::string& cache_dir, size_t index) const {
    PointCache::Lookup found = PointCache(cache_dir).lookup(point(index));
    return py::make_tuple(found.result ? py::object(py::str(*found.result)) : py::none(),
                          found.problem);
  }
  void store(const std::string& cache_dir, size_t index, const std::string& result) const {
    auto stored = PointCache(cache_dir).store(point(index), result);
    if (!stored) throw ZonelabError(stored.error());
  }
  std::string cache_path(const std::string& cache_dir, size_t index) const {
    return PointCache(cache_dir).path_of(point(index)).string();
  }

  py::tuple write(const std::string& out, const std::vector<std::string>& results) const {
    auto files = sweep_files(spec_, results);
    if (!files) throw ZonelabError(files.error());
    auto json_path = write_sweep_files(spec_, *files, out);
    if (!json_path) throw ZonelabError(json_path.error());
    return py::make_tuple(json_path->string(), files->plottable);
  }

 private:
  const SweepPoint& point(size_t index) const {
    if (index >= spec_.points.size()) {
      throw ZonelabError(fmt::format("{}: no point {}", spec_.origin, index));
    }
    return spec_.points[index];
  }
  SweepSpec spec_;
};

}  // namespace

PYBIND11_MODULE(_zonelab, m) {
  m.doc() = "zonelab: a ZNS and conventional SSD model (see docs/python.md)";
  py::register_exception<ZonelabError>(m, "ZonelabError", PyExc_RuntimeError);

  m.def("presets", &preset_names, "The shipped presets' names.");
  m.def(
      "create",
      [](const std::string& path, const std::string& preset,
         const std::map<std::string, std::string>& settings, bool force) {
        auto made = Stack::create_image(path, config_of(preset, settings), force);
        if (!made) throw ZonelabError(made.error());
        return open_image(path, false, "");
      },
      py::arg("path"), py::arg("preset") = "small",
      py::arg("settings") = std::map<std::string, std::string>{}, py::arg("force") = false,
      "Makes a device image from a preset and KEY=VALUE settings; returns it open.");
  m.def("open", &open_image, py::arg("path"), py::arg("read_only") = false,
        py::arg("scheduler") = "", "Opens (and locks) a device image.");
  m.def(
      "device",
      [](const std::string& preset, const std::map<std::string, std::string>& settings,
         const std::string& scheduler) {
        Config c = config_of(preset, settings);
        StackOptions so;
        so.scheduler = scheduler;
        auto stack = Stack::make(c, so);
        if (!stack) throw ZonelabError(stack.error());
        return std::make_unique<Device>(std::move(stack).value());
      },
      py::arg("preset") = "small", py::arg("settings") = std::map<std::string, std::string>{},
      py::arg("scheduler") = "", "A throwaway device of a preset (no image).");

  py::class_<Device>(m, "Device", "An open image or a throwaway device, in virtual time.")
      .def_property_readonly("info", &Device::info, "Interface, LBA size, zones, limits.")
      .def("zones", &Device::zones, py::arg("first") = 0, py::arg("count") = py::none(),
           "The zone report: zone, start, capacity, wp (LBAs) and state.")
      .def("write", &Device::write, py::arg("lba"), py::arg("data"), py::arg("append") = false,
           "Writes whole LBAs (a zone append with append=True, lba the zone's start).")
      .def("read", &Device::read, py::arg("lba"), py::arg("blocks"),
           "Reads blocks: (result, data).")
      .def("zone_action", &Device::zone_action, py::arg("zone"), py::arg("action"),
           "Zone Management Send: open, close, finish, reset or offline.")
      .def("deallocate", &Device::deallocate, py::arg("lba"), py::arg("blocks"),
           "Dataset Management deallocate (trim).")
      .def("flush", &Device::flush, "Flush.")
      .def("counters", &Device::counters, "The device's counters, as `zonelab info --json`.")
      .def_property_readonly("now_ns", &Device::now_ns, "Virtual time.")
      .def("bench", &Device::bench, py::arg("job"),
           "Runs a bench job file's TOML text in virtual time (docs/cli.md).")
      .def("replay", &Device::replay, py::arg("trace"), py::arg("timestamps") = true,
           py::arg("iodepth") = 32, "Replays a fio iolog or blkparse text (docs/replay.md).")
      .def("close", &Device::close, "Saves the image's state and lets it go.")
      .def("__enter__", [](Device& d) -> Device& { return d; })
      .def("__exit__", [](Device& d, py::args) { d.close(); });

  m.def(
      "build_id", [] { return std::string(zonelab_build_id()); },
      "The build results come from: what sweep points are cached under.");
  m.def(
      "default_cache_dir", [] { return PointCache::default_dir().string(); },
      "Where sweeps cache their points unless told.");
  m.def(
      "plot", [](const std::string& json_path) { return run_plotter({json_path}); },
      py::arg("json_path"), "Draws a result document's PNG; empty, or why not.");
  py::class_<Sweep>(m, "Sweep", "A sweep spec, expanded into points (docs/sweep.md).")
      .def_static("load", &Sweep::load, py::arg("path"), "Reads and expands a spec file.")
      .def_static("from_text", &Sweep::from_text, py::arg("text"), py::arg("origin"),
                  "Expands a spec's text; origin names it in messages.")
      .def_property_readonly("name", &Sweep::name)
      .def_property_readonly("origin", &Sweep::origin)
      .def_property_readonly("text", &Sweep::text)
      .def_property_readonly("axes", &Sweep::axes)
      .def_property_readonly("points", &Sweep::points,
                             "index, key, label, coordinates, seed (and member) of each point")
      .def("__len__", &Sweep::size)
      .def("run_point", &Sweep::run_point, py::arg("index"),
           "Runs one point here: its result document as JSON text.")
      .def("lookup", &Sweep::lookup, py::arg("cache_dir"), py::arg("index"),
           "(result or None, why a damaged entry cannot be used or '')")
      .def("store", &Sweep::store, py::arg("cache_dir"), py::arg("index"), py::arg("result"))
      .def("cache_path", &Sweep::cache_path, py::arg("cache_dir"), py::arg("index"))
      .def("write", &Sweep::write, py::arg("out"), py::arg("results"),
           "Writes NAME.csv and NAME.json from every point's result: (json path, plottable).");
}

}  // namespace zonelab::python
