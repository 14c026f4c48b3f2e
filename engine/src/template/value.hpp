// The template interpreter's runtime value: Python's data model as jinja2 sees it.
//
// Strings are UTF-8 and count, index and slice by code point. Lists and dicts are shared and
// immutable once built (the reference runs in jinja2's ImmutableSandboxedEnvironment, where
// templates cannot mutate them); namespaces are the one mutable object. Undefined carries the
// reason it is undefined, for the error raised when it is used in a way that needs a value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace arbor::tmpl {

class Interpreter;
struct Value;
struct SrcPos {
    int line = 0, col = 0;
};

enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Object, Callable };
// How a List prints (repr) and what tojson makes of it: all iterate the same way.
// Generator stands for Python's one-shot iterators (what map/select/unique... return): iterating
// one consumes it, it has no len() and json.dumps refuses it. Its `s` holds the Python type name.
enum class SeqKind : uint8_t { List, Tuple, DictKeys, DictValues, DictItems, Range, Generator };

// Containers record how deeply they nest (1 + their deepest element) so that nothing
// recursive over values (repr, ==, json.dumps, destruction) can exhaust the stack:
// building a value nested deeper than kMaxValueDepth is an error. Objects count as leaves.
inline constexpr uint32_t kMaxValueDepth = 600;
uint32_t value_depth(const Value& v);

struct ListData {
    std::vector<Value> items;
    uint32_t depth = 1;
};

// Insertion-ordered dict with Python key equality (1 == 1.0 == True). Lookups are linear: the
// dicts a chat template sees are small.
struct DictData {
    std::vector<std::pair<Value, Value>> items;
    uint32_t depth = 1;
    const Value* find(const Value& key) const;
    const Value* find(std::string_view key) const;
    void set(Value key, Value v);
};

struct CallArgs {
    std::vector<Value> pos;
    std::vector<std::pair<std::string, Value>> kw;
};

// Objects with attributes: namespace(), the loop variable, cycler, joiner.
class Object {
public:
    virtual ~Object() = default;
    virtual std::string_view type_name() const = 0;
    // Sets out and returns true when the attribute exists.
    virtual bool get_attr(std::string_view name, Value& out) const = 0;
    virtual bool is_namespace() const { return false; }
    virtual void set_attr(std::string_view name, Value v);
    virtual std::string repr() const;
    // The attributes of a namespace (nullptr for other objects), for repr().
    virtual const DictData* namespace_attrs() const { return nullptr; }
    // Drops the values the object holds (the interpreter calls it when a render ends, to
    // break reference cycles such as a namespace holding itself).
    virtual void release() {}
};

// Macros, global functions and bound methods.
class Callable {
public:
    virtual ~Callable() = default;
    virtual std::string name() const = 0;
    virtual Value call(Interpreter& in, CallArgs& args, SrcPos at) = 0;
    virtual std::string repr() const;
};

struct Value {
    Kind kind = Kind::Undefined;
    SeqKind seq = SeqKind::List;
    bool safe = false;    // String: a jinja2 Markup (from |safe); '+' escapes the other side
    bool unsafe = false;  // Undefined: sandbox refused the attribute; calling it is an error
    bool b = false;
    int64_t i = 0;
    double f = 0;
    std::string s;  // String: the text; Undefined: why it is undefined; Range: its repr
    std::shared_ptr<ListData> list;
    std::shared_ptr<DictData> dict;
    std::shared_ptr<Object> obj;
    std::shared_ptr<Callable> fn;

    Value() = default;
    static Value undefined(std::string why, bool unsafe_attr = false);
    static Value none();
    static Value boolean(bool v);
    static Value integer(int64_t v);
    static Value number(double v);
    static Value string(std::string v, bool markup = false);
    static Value make_list(std::vector<Value> items, SeqKind k = SeqKind::List);
    static Value make_generator(std::vector<Value> items, std::string type = "generator");
    static Value make_dict(std::shared_ptr<DictData> d);
    static Value object(std::shared_ptr<Object> o);
    static Value callable(std::shared_ptr<Callable> c);

    bool is_undefined() const { return kind == Kind::Undefined; }
    bool is_none() const { return kind == Kind::None; }
    bool is_string() const { return kind == Kind::String; }
    bool is_list() const { return kind == Kind::List; }
    bool is_dict() const { return kind == Kind::Dict; }
    bool is_int() const { return kind == Kind::Int || kind == Kind::Bool; }  // Python: bool is an int
    bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
    int64_t as_int() const { return kind == Kind::Bool ? int64_t(b) : i; }
    double as_double() const { return kind == Kind::Float ? f : double(as_int()); }
    const std::vector<Value>& items() const;
    bool is_generator() const { return kind == Kind::List && seq == SeqKind::Generator; }
};

}  // namespace arbor::tmpl
