// The registry of experiment sets; see experiment.h.
#include "experiments/experiment.h"

namespace zonelab {

std::string_view evidence_name(Evidence kind) {
  switch (kind) {
    case Evidence::kFitted:
      return "fitted";
    case Evidence::kClosedForm:
      return "closed form";
    case Evidence::kEmerged:
      return "emerged";
    case Evidence::kUnstated:
      break;
  }
  return "unstated";
}

namespace {
thread_local const std::vector<std::string>* scope_overrides = nullptr;
}  // namespace

PresetOverridesScope::PresetOverridesScope(std::vector<std::string> overrides)
    : overrides_(std::move(overrides)), outer_(scope_overrides) {
  scope_overrides = &overrides_;
}

PresetOverridesScope::~PresetOverridesScope() { scope_overrides = outer_; }

std::string preset_overrides_key() {
  std::string key;
  if (scope_overrides == nullptr) return key;
  for (const std::string& assignment : *scope_overrides) key += assignment + "\n";
  return key;
}

Result<Config> preset_with(std::string_view preset, const std::vector<std::string>& overrides) {
  auto config = preset_config(preset);
  if (!config) return Error{config.error()};
  Config result = *config;
  for (const std::string& assignment : overrides) {
    auto applied = apply_override(result, assignment);
    if (!applied) return Error{applied.error()};
  }
  if (scope_overrides != nullptr) {
    for (const std::string& assignment : *scope_overrides) {
      auto applied = apply_override(result, assignment);
      if (!applied) return Error{applied.error()};
    }
  }
  return result;
}

std::span<const ExperimentSet> experiment_sets() {
  static const ExperimentSet kSets[] = {
      confznspp_experiments(),
      block_tax_experiments(),
      zinc_softfinish_experiments(),
      rocksdb_zns_vs_block_experiments(),
      rocksdb_fs_vs_zenfs_experiments(),
      flexzns_experiments(),
      zn540_experiments(),
      confzns_experiments(),
      rocksdb_zenfsplus_experiments(),
      flexzns_rocksdb_experiments(),
  };
  return kSets;
}

const ExperimentSet* find_experiment_set(std::string_view name) {
  for (const ExperimentSet& set : experiment_sets()) {
    if (set.name == name) return &set;
  }
  return nullptr;
}

const Experiment* find_experiment(const ExperimentSet& set, std::string_view name) {
  for (const Experiment& experiment : set.experiments) {
    if (experiment.name == name) return &experiment;
  }
  return nullptr;
}

std::string experiment_set_names() {
  std::string names;
  for (const ExperimentSet& set : experiment_sets()) {
    if (!names.empty()) names += ", ";
    names += set.name;
  }
  return names;
}

}  // namespace zonelab
