// Reading the text documents users give zonelab (configurations, job files)
// with bounded size and one-line errors: "path:line:col: malformed TOML: ...".
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "zonelab/result.h"

namespace zonelab {

inline constexpr uint64_t kMaxTextInputBytes = 1 << 20;

// The whole file, or an error naming `what` ("configuration file").
Result<std::string> read_text_file(const std::string& path, std::string_view what);
// Parses TOML; `origin` names the source in messages.
Result<toml::table> parse_toml(std::string_view text, std::string_view origin);

}  // namespace zonelab
