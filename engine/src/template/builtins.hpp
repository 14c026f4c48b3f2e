// The built-in filters, tests and global functions jinja2 provides (plus the reference's
// tojson, raise_exception and strftime_now), and Python's methods on str, dict and list.
#pragma once

#include "template/value.hpp"

#include <string>
#include <string_view>

namespace arbor::tmpl {

bool is_known_filter(std::string_view name);
bool is_known_test(std::string_view name);

// value|name(args). Throws RenderError on bad arguments or values.
Value apply_filter(Interpreter& in, std::string_view name, const Value& value, CallArgs& args);
// value is name(args)
bool apply_test(Interpreter& in, std::string_view name, const Value& value, CallArgs& args);

// obj.name as jinja2's sandboxed getattr sees it: Python attributes (methods) first, then items.
// Sets out to Undefined (maybe marked unsafe) when there is no such attribute.
Value get_attr(const Value& obj, std::string_view name);
// obj[key] as jinja2's sandboxed getitem sees it: items first, then attributes for string keys.
Value get_item(const Value& obj, const Value& key);

}  // namespace arbor::tmpl
