// Bounded text files and TOML parsing; see text_input.h.
#include "common/text_input.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace zonelab {

Result<std::string> read_text_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot read {}", one_line(path), what)};
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > kMaxTextInputBytes) {
    return Error{fmt::format("{}: {} is larger than 1 MiB", one_line(path), what)};
  }
  return text.str();
}

Result<toml::table> parse_toml(std::string_view text, std::string_view origin) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& err) {
    return Error{fmt::format("{}:{}:{}: malformed TOML: {}", one_line(origin),
                             err.source().begin.line, err.source().begin.column,
                             one_line(err.description()))};
  }
}

}  // namespace zonelab
