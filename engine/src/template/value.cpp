// Template value construction and the insertion-ordered dict.
#include "template/value.hpp"

#include "template/errors.hpp"
#include "template/pyops.hpp"

#include <algorithm>

namespace arbor::tmpl {

Value Value::undefined(std::string why, bool unsafe_attr) {
    Value v;
    v.s = std::move(why);
    v.unsafe = unsafe_attr;
    return v;
}

Value Value::none() {
    Value v;
    v.kind = Kind::None;
    return v;
}

Value Value::boolean(bool x) {
    Value v;
    v.kind = Kind::Bool;
    v.b = x;
    return v;
}

Value Value::integer(int64_t x) {
    Value v;
    v.kind = Kind::Int;
    v.i = x;
    return v;
}

Value Value::number(double x) {
    Value v;
    v.kind = Kind::Float;
    v.f = x;
    return v;
}

Value Value::string(std::string x, bool markup) {
    Value v;
    v.kind = Kind::String;
    v.s = std::move(x);
    v.safe = markup;
    return v;
}

uint32_t value_depth(const Value& v) {
    if (v.kind == Kind::List && v.list) return v.list->depth;
    if (v.kind == Kind::Dict && v.dict) return v.dict->depth;
    return 0;
}

Value Value::make_list(std::vector<Value> items, SeqKind k) {
    Value v;
    v.kind = Kind::List;
    v.seq = k;
    v.list = std::make_shared<ListData>();
    uint32_t depth = 1;
    for (const Value& x : items) depth = std::max(depth, value_depth(x) + 1);
    if (depth > kMaxValueDepth) fail("a value nests deeper than " + std::to_string(kMaxValueDepth) + " levels");
    v.list->depth = depth;
    v.list->items = std::move(items);
    return v;
}

Value Value::make_generator(std::vector<Value> items, std::string type) {
    Value v = make_list(std::move(items), SeqKind::Generator);
    v.s = std::move(type);
    return v;
}

Value Value::make_dict(std::shared_ptr<DictData> d) {
    Value v;
    v.kind = Kind::Dict;
    v.dict = d ? std::move(d) : std::make_shared<DictData>();
    return v;
}

Value Value::object(std::shared_ptr<Object> o) {
    Value v;
    v.kind = Kind::Object;
    v.obj = std::move(o);
    return v;
}

Value Value::callable(std::shared_ptr<Callable> c) {
    Value v;
    v.kind = Kind::Callable;
    v.fn = std::move(c);
    return v;
}

const std::vector<Value>& Value::items() const {
    static const std::vector<Value> empty;
    return (kind == Kind::List && list) ? list->items : empty;
}

const Value* DictData::find(const Value& key) const {
    for (const auto& kv : items)
        if (equals(kv.first, key)) return &kv.second;
    return nullptr;
}

const Value* DictData::find(std::string_view key) const {
    for (const auto& kv : items)
        if (kv.first.kind == Kind::String && kv.first.s == key) return &kv.second;
    return nullptr;
}

void DictData::set(Value key, Value v) {
    uint32_t d = std::max(value_depth(key), value_depth(v)) + 1;
    if (d > kMaxValueDepth) fail("a value nests deeper than " + std::to_string(kMaxValueDepth) + " levels");
    depth = std::max(depth, d);
    for (auto& kv : items) {
        if (equals(kv.first, key)) {
            kv.second = std::move(v);
            return;
        }
    }
    items.emplace_back(std::move(key), std::move(v));
}

void Object::set_attr(std::string_view, Value) {}

std::string Object::repr() const { return "<" + std::string(type_name()) + " object>"; }

std::string Callable::repr() const { return "<function " + name() + ">"; }

}  // namespace arbor::tmpl
