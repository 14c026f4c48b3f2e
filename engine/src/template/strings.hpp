// Python str algorithms by code point: strip, split, splitlines, replace, justify.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace arbor::tmpl {

// str.strip(chars) / lstrip / rstrip. chars == nullptr strips whitespace.
std::string py_strip(std::string_view s, const std::string* chars, bool left, bool right);
// str.split(sep, maxsplit) / rsplit. sep == nullptr splits on runs of whitespace.
std::vector<std::string> py_split(std::string_view s, const std::string* sep, int64_t maxsplit, bool from_right);
// str.splitlines(keepends)
std::vector<std::string> py_splitlines(std::string_view s, bool keepends);
// str.replace(old, new, count)
std::string py_replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count);
// str.center / ljust / rjust (how = 'c', 'l', 'r')
std::string py_justify(std::string_view s, int64_t width, std::string_view fill, char how);

}  // namespace arbor::tmpl
