// Reading the text documents users give zonelab (configurations, job files,
// the configuration stored in an image) with bounds that are checked while
// the text is read, before a parser sees it, and one-line errors:
// "path:line:col: malformed TOML: ...".
//
// Bounds: a file is at most kMaxTextInputBytes (reading stops one byte past
// it), and a TOML document nests at most kMaxTomlDepth levels, counting
// tables, dotted-key parts, arrays and inline tables together. toml++ builds
// and frees nested tables recursively, so a document of 100,000 dotted parts
// would otherwise overflow the stack; the limit is checked by a lexical scan
// (it knows strings and comments) before toml++ parses anything.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "zonelab/result.h"

namespace zonelab {

inline constexpr uint64_t kMaxTextInputBytes = 1 << 20;
// zonelab's own documents need 4 levels at most ([zns.reset] mode = ...).
inline constexpr uint32_t kMaxTomlDepth = 32;

// The whole file, or an error naming `what` ("configuration file"): missing,
// a directory, unreadable, or larger than kMaxTextInputBytes.
Result<std::string> read_text_file(const std::string& path, std::string_view what);
// Checks the size and nesting bounds of a TOML document; `origin` names the
// source in messages.
Outcome check_toml_bounds(std::string_view text, std::string_view origin);
// Checks the bounds, then parses TOML; `origin` names the source in messages.
Result<toml::table> parse_toml(std::string_view text, std::string_view origin);

}  // namespace zonelab
