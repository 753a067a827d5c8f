// Bounded text files and TOML parsing; see text_input.h.
#include "common/text_input.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace zonelab {
namespace {

// How deep a TOML document nests, measured lexically: table headers, keys,
// strings, comments, arrays and inline tables are recognised and every other
// value is skipped. Where the document is valid TOML the scan follows it;
// where it is not, the scan stops (toml++ stops at the same error, so
// nothing after it is ever built). Each level is checked as it opens, so the
// scan's own recursion is bounded by the limit too.
class DepthScan {
 public:
  explicit DepthScan(std::string_view text) : text_(text) {}

  // False when a level goes past kMaxTomlDepth; line() and column() say where.
  bool within_limit() {
    document();
    return !too_deep_;
  }
  uint64_t line() const { return fail_line_; }
  uint64_t column() const { return fail_column_; }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void advance(size_t count = 1) {
    for (size_t i = 0; i < count && !at_end(); ++i) {
      if (text_[pos_] == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      }
      ++pos_;
    }
  }

  // A node at `depth` (the root table is 0) opens here.
  bool enter(uint64_t depth) {
    if (depth <= kMaxTomlDepth) return true;
    too_deep_ = true;
    fail_line_ = line_;
    fail_column_ = pos_ - line_start_ + 1;
    return false;
  }

  void skip_blank() {
    while (peek() == ' ' || peek() == '\t') advance();
  }
  void skip_comment() {
    if (peek() != '#') return;
    while (!at_end() && peek() != '\n') advance();
  }
  // Blanks, line breaks and comments (between statements, inside arrays).
  void skip_space() {
    for (;;) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance();
      } else if (c == '#') {
        skip_comment();
      } else {
        return;
      }
    }
  }

  // A string at the cursor, basic ("...", """...""") or literal ('...',
  // '''...'''). False if it does not end where TOML says it must.
  bool string() {
    char quote = peek();
    bool basic = quote == '"';
    if (peek(1) == quote && peek(2) == quote) {
      advance(3);
      while (!at_end()) {
        if (basic && peek() == '\\') {
          advance(2);
        } else if (peek() == quote && peek(1) == quote && peek(2) == quote) {
          advance(3);
          for (int extra = 0; extra < 2 && peek() == quote; ++extra) advance();
          return true;
        } else {
          advance();
        }
      }
      return false;
    }
    advance();
    while (!at_end() && peek() != '\n') {
      if (basic && peek() == '\\') {
        advance(2);
      } else if (peek() == quote) {
        advance();
        return true;
      } else {
        advance();
      }
    }
    return false;
  }

  static bool is_delimiter(char c) {
    static constexpr std::string_view kDelimiters = " \t\r\n=.[]{},#\"'";
    return kDelimiters.find(c) != std::string_view::npos;
  }

  // A dotted key whose first part sits at depth base + 1: the number of
  // parts, or -1 where the scan stops (too deep or not a key).
  int64_t key(uint64_t base) {
    int64_t parts = 0;
    for (;;) {
      skip_blank();
      if (peek() == '"' || peek() == '\'') {
        if (!string()) return -1;
      } else {
        size_t start = pos_;
        while (!at_end() && !is_delimiter(peek())) advance();
        if (pos_ == start) return -1;
      }
      ++parts;
      if (!enter(base + static_cast<uint64_t>(parts))) return -1;
      skip_blank();
      if (peek() != '.') return parts;
      advance();
    }
  }

  // A value at `depth`; false where the scan stops.
  bool value(uint64_t depth) {
    if (!enter(depth)) return false;
    skip_blank();
    char c = peek();
    if (c == '"' || c == '\'') return string();
    if (c == '[') {
      advance();
      return array(depth);
    }
    if (c == '{') {
      advance();
      return inline_table(depth);
    }
    static constexpr std::string_view kValueEnds = ",]}\r\n#";
    while (!at_end() && kValueEnds.find(peek()) == std::string_view::npos) advance();
    return true;
  }

  bool array(uint64_t depth) {
    for (;;) {
      skip_space();
      if (peek() == ']') {
        advance();
        return true;
      }
      if (at_end() || !value(depth + 1)) return false;
      skip_space();
      if (peek() == ',') {
        advance();
      } else if (peek() == ']') {
        advance();
        return true;
      } else {
        return false;
      }
    }
  }

  bool inline_table(uint64_t depth) {
    for (;;) {
      skip_space();
      if (peek() == '}') {
        advance();
        return true;
      }
      int64_t parts = key(depth);
      if (parts < 0) return false;
      skip_blank();
      if (peek() != '=') return false;
      advance();
      if (!value(depth + static_cast<uint64_t>(parts))) return false;
      skip_space();
      if (peek() == ',') {
        advance();
      } else if (peek() == '}') {
        advance();
        return true;
      } else {
        return false;
      }
    }
  }

  // [a.b] opens tables at depths 1 and 2; [[a.b]] adds the array's element.
  bool header(uint64_t& table_depth) {
    advance();
    bool array_of_tables = peek() == '[';
    if (array_of_tables) advance();
    int64_t parts = key(0);
    if (parts < 0) return false;
    table_depth = static_cast<uint64_t>(parts) + (array_of_tables ? 1 : 0);
    if (!enter(table_depth)) return false;
    skip_blank();
    if (peek() != ']') return false;
    advance();
    if (array_of_tables) {
      if (peek() != ']') return false;
      advance();
    }
    return true;
  }

  void document() {
    uint64_t table_depth = 0;
    for (;;) {
      skip_space();
      if (at_end()) return;
      if (peek() == '[') {
        if (!header(table_depth)) return;
        continue;
      }
      int64_t parts = key(table_depth);
      if (parts < 0) return;
      skip_blank();
      if (peek() != '=') return;
      advance();
      if (!value(table_depth + static_cast<uint64_t>(parts))) return;
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  uint64_t line_ = 1;
  size_t line_start_ = 0;
  bool too_deep_ = false;
  uint64_t fail_line_ = 0;
  uint64_t fail_column_ = 0;
};

}  // namespace

Result<std::string> read_text_file(const std::string& path, std::string_view what) {
  std::string shown = one_line(path);
  if (path.empty()) return Error{fmt::format("'': an empty path is not a {}", what)};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error{fmt::format("{}: cannot read {} ({})", shown, what, std::strerror(errno))};
  }
  auto fail = [fd](std::string message) -> Result<std::string> {
    ::close(fd);
    return Error{std::move(message)};
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return fail(fmt::format("{}: cannot read {} ({})", shown, what, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) return fail(fmt::format("{}: is a directory, not a {}", shown, what));
  // Read in pieces and stop one byte past the limit: a larger file (or an
  // endless one, /dev/zero) is refused without being read whole.
  std::string text;
  std::array<char, 64 << 10> buffer;
  for (;;) {
    ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return fail(fmt::format("{}: cannot read {} ({})", shown, what, std::strerror(errno)));
    }
    if (got == 0) break;
    text.append(buffer.data(), static_cast<size_t>(got));
    if (text.size() > kMaxTextInputBytes) {
      return fail(fmt::format("{}: {} is larger than the limit of 1 MiB", shown, what));
    }
  }
  ::close(fd);
  return text;
}

Outcome check_toml_bounds(std::string_view text, std::string_view origin) {
  if (text.size() > kMaxTextInputBytes) {
    return Error{
        fmt::format("{}: TOML document is larger than the limit of 1 MiB", one_line(origin))};
  }
  DepthScan scan(text);
  if (!scan.within_limit()) {
    return Error{fmt::format(
        "{}:{}:{}: TOML nested deeper than the limit of {} levels (tables, dotted keys, arrays "
        "and inline tables count together)",
        one_line(origin), scan.line(), scan.column(), kMaxTomlDepth)};
  }
  return {};
}

Result<toml::table> parse_toml(std::string_view text, std::string_view origin) {
  auto bounded = check_toml_bounds(text, origin);
  if (!bounded) return Error{bounded.error()};
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& err) {
    return Error{fmt::format("{}:{}:{}: malformed TOML: {}", one_line(origin),
                             err.source().begin.line, err.source().begin.column,
                             one_line(err.description()))};
  }
}

}  // namespace zonelab
