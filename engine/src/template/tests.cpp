// jinja2's built-in tests (`value is name(args)`).
#include "template/builtins.hpp"
#include "template/interpreter.hpp"
#include "template/objects.hpp"
#include "template/pyops.hpp"
#include "template/unicode.hpp"

#include <algorithm>

namespace arbor::tmpl {
namespace {

const char* const kTests[] = {
    "boolean", "callable", "defined", "divisibleby", "eq", "equalto", "==", "escaped", "even", "false", "filter",
    "float", "ge", ">=", "gt", "greaterthan", ">", "in", "integer", "iterable", "le", "<=", "lower", "lt",
    "lessthan", "<", "mapping", "ne", "!=", "none", "number", "odd", "sameas", "sequence", "string", "test",
    "true", "undefined", "upper"};

const Value& arg(const CallArgs& a, const char* test) {
    if (a.pos.empty()) fail(std::string("test '") + test + "' needs an argument");
    return a.pos[0];
}

}  // namespace

bool is_known_test(std::string_view name) {
    return std::find(std::begin(kTests), std::end(kTests), name) != std::end(kTests);
}

bool apply_test(Interpreter&, std::string_view name, const Value& v, CallArgs& a) {
    if (name == "defined") return !v.is_undefined();
    if (name == "undefined") return v.is_undefined();
    if (name == "none") return v.is_none();
    if (name == "boolean") return v.kind == Kind::Bool;
    if (name == "true") return v.kind == Kind::Bool && v.b;
    if (name == "false") return v.kind == Kind::Bool && !v.b;
    if (name == "string") return v.kind == Kind::String;
    if (name == "number") return v.is_number();
    if (name == "integer") return v.kind == Kind::Int;
    if (name == "float") return v.kind == Kind::Float;
    if (name == "mapping") return v.kind == Kind::Dict;
    if (name == "iterable")
        return v.kind == Kind::String || v.kind == Kind::List || v.kind == Kind::Dict || v.kind == Kind::Undefined ||
               (v.kind == Kind::Object && v.obj->type_name() == "LoopContext");
    if (name == "sequence")
        return v.kind == Kind::String || v.kind == Kind::Dict || v.kind == Kind::Undefined ||
               (v.kind == Kind::List && v.seq != SeqKind::DictKeys && v.seq != SeqKind::DictValues &&
                v.seq != SeqKind::DictItems && v.seq != SeqKind::Generator) ||
               (v.kind == Kind::Object && v.obj->type_name() == "LoopContext");
    if (name == "callable") return v.kind == Kind::Callable || v.is_undefined();
    if (name == "escaped") return v.kind == Kind::String && v.safe;
    if (name == "lower") return uni::str_islower(to_str(v));
    if (name == "upper") return uni::str_isupper(to_str(v));
    if (name == "odd" || name == "even") {
        if (v.is_undefined()) fail(v.s);
        if (!v.is_int()) fail("unsupported operand type(s) for %: '" + type_name(v) + "' and 'int'");
        int64_t m = ((v.as_int() % 2) + 2) % 2;
        return name == "odd" ? m == 1 : m == 0;
    }
    if (name == "divisibleby") {
        Value r = py_arith(ExprOp::Mod, v, arg(a, "divisibleby"));
        return equals(r, Value::integer(0));
    }
    if (name == "eq" || name == "equalto" || name == "==") return equals(v, arg(a, "eq"));
    if (name == "ne" || name == "!=") return !equals(v, arg(a, "ne"));
    if (name == "lt" || name == "lessthan" || name == "<") return compare(CmpOp::Lt, v, arg(a, "lt"));
    if (name == "le" || name == "<=") return compare(CmpOp::Le, v, arg(a, "le"));
    if (name == "gt" || name == "greaterthan" || name == ">") return compare(CmpOp::Gt, v, arg(a, "gt"));
    if (name == "ge" || name == ">=") return compare(CmpOp::Ge, v, arg(a, "ge"));
    if (name == "in") return contains(arg(a, "in"), v);
    if (name == "sameas") {
        const Value& o = arg(a, "sameas");
        if (v.kind != o.kind) return false;
        switch (v.kind) {
            case Kind::None:
            case Kind::Undefined: return true;
            case Kind::Bool: return v.b == o.b;
            case Kind::Int: return v.i == o.i && v.i >= -5 && v.i <= 256;
            case Kind::List: return v.list == o.list;
            case Kind::Dict: return v.dict == o.dict;
            case Kind::Object: return v.obj == o.obj;
            case Kind::Callable: return v.fn == o.fn;
            default: return false;
        }
    }
    if (name == "filter") return v.kind == Kind::String && is_known_filter(v.s);
    if (name == "test") return v.kind == Kind::String && is_known_test(v.s);
    fail("No test named '" + std::string(name) + "' found.");
}

}  // namespace arbor::tmpl
