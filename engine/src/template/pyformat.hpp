// Python string formatting as templates use it: str.format(), printf-style `fmt % args`, and
// strftime for the strftime_now() global.
#pragma once

#include "template/value.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace arbor::tmpl {

// str.format(*args, **kwargs): auto and manual field numbering, keyword fields, .attr and [key]
// lookups, !s/!r/!a conversions and format specs [[fill]align][sign][#][0][width][,|_][.prec][type].
std::string py_format(std::string_view fmt, const CallArgs& args);
// format(value, spec): one value with a format spec.
std::string py_format_value(const Value& v, std::string_view spec);
// fmt % args with %s %r %a %d %i %u %f %F %e %E %g %G %x %X %o %c %% and flags/width/precision.
std::string py_percent(std::string_view fmt, const Value& args);
// datetime.now().strftime(fmt) in the C locale. now_iso ("2026-11-29T12:00:00") pins the clock.
std::string strftime_now(std::string_view fmt, const std::optional<std::string>& now_iso);

}  // namespace arbor::tmpl
