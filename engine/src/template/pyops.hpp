// Python semantics over template values: truthiness, equality, ordering, str(), repr(),
// iteration, len(), `in`, conversion from JSON and json.dumps() (the reference's tojson).
//
// Failures throw RenderError (see errors.hpp) with the message Python/jinja2 would give in
// spirit ("'<' not supported between instances of 'str' and 'int'").
#pragma once

#include "template/errors.hpp"
#include "template/value.hpp"

#include <arbor/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace arbor::tmpl {

std::string type_name(const Value& v);
bool truthy(const Value& v);
bool equals(const Value& a, const Value& b);
enum class CmpOp { Lt, Le, Gt, Ge };
bool compare(CmpOp op, const Value& a, const Value& b);

std::string to_str(const Value& v);   // str(v); Undefined gives ""
std::string repr(const Value& v);     // repr(v)
std::string repr_string(std::string_view s);

// for x in v: lists and tuples give items, dicts give keys, strings give characters,
// Undefined gives nothing. Anything else is a TypeError.
std::vector<Value> iterate(const Value& v);
int64_t length(const Value& v);
bool contains(const Value& container, const Value& item);  // item in container

// markupsafe.escape
std::string html_escape(std::string_view s);

// JSON input (messages, tools, variables) as template values.
Value from_json(const json::Value& j);

struct DumpOptions {
    bool ensure_ascii = false;
    bool has_indent = false;
    std::string indent;  // one level of indentation
    bool has_separators = false;
    std::string item_sep = ", ", key_sep = ": ";
    bool sort_keys = false;
};
// json.dumps(v, ...) as Python 3.11 writes it.
std::string dumps(const Value& v, const DumpOptions& o);

}  // namespace arbor::tmpl
