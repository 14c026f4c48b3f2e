// arbor::json::Value: construction, accessors and equality.
#include <arbor/json.hpp>

#include <cmath>
#include <limits>

namespace arbor::json {
namespace {

const std::string& empty_string() {
    static const std::string s;
    return s;
}
const Array& empty_array() {
    static const Array a;
    return a;
}
const Object& empty_object() {
    static const Object o;
    return o;
}

}  // namespace

Value::Value(unsigned long i) {
    if (i <= uint64_t(std::numeric_limits<int64_t>::max()))
        v_ = int64_t(i);
    else
        v_ = double(i);
}

Value::Value(unsigned long long i) {
    if (i <= uint64_t(std::numeric_limits<int64_t>::max()))
        v_ = int64_t(i);
    else
        v_ = double(i);
}

Value Value::from_float32(float f) {
    Value v{static_cast<double>(f)};
    v.f32_ = true;
    return v;
}

bool Value::as_bool() const {
    if (auto* b = std::get_if<bool>(&v_)) return *b;
    return false;
}

int64_t Value::as_int() const {
    if (auto* i = std::get_if<int64_t>(&v_)) return *i;
    if (auto* d = std::get_if<double>(&v_)) {
        if (std::isnan(*d)) return 0;
        if (*d >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
        if (*d <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
        return int64_t(*d);
    }
    return 0;
}

double Value::as_double() const {
    if (auto* i = std::get_if<int64_t>(&v_)) return double(*i);
    if (auto* d = std::get_if<double>(&v_)) return *d;
    return 0.0;
}

const std::string& Value::as_string() const {
    if (auto* s = std::get_if<std::string>(&v_)) return *s;
    return empty_string();
}

const Array& Value::as_array() const {
    if (auto* a = std::get_if<Array>(&v_)) return *a;
    return empty_array();
}

Array& Value::as_array() {
    if (!is_array()) {
        v_ = Array{};
        f32_ = false;
    }
    return std::get<Array>(v_);
}

const Object& Value::as_object() const {
    if (auto* o = std::get_if<Object>(&v_)) return *o;
    return empty_object();
}

Object& Value::as_object() {
    if (!is_object()) {
        v_ = Object{};
        f32_ = false;
    }
    return std::get<Object>(v_);
}

Value& Value::operator[](std::string_view key) {
    Object& o = as_object();
    for (auto& m : o)
        if (m.first == key) return m.second;
    o.emplace_back(std::string(key), Value());
    return o.back().second;
}

const Value* Value::find(std::string_view key) const {
    auto* o = std::get_if<Object>(&v_);
    if (!o) return nullptr;
    for (auto& m : *o)
        if (m.first == key) return &m.second;
    return nullptr;
}

Value* Value::find(std::string_view key) {
    auto* o = std::get_if<Object>(&v_);
    if (!o) return nullptr;
    for (auto& m : *o)
        if (m.first == key) return &m.second;
    return nullptr;
}

void Value::push_back(Value v) { as_array().push_back(std::move(v)); }

size_t Value::size() const {
    switch (kind()) {
        case Kind::String: return std::get<std::string>(v_).size();
        case Kind::Array: return std::get<Array>(v_).size();
        case Kind::Object: return std::get<Object>(v_).size();
        default: return 0;
    }
}

bool operator==(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
        return a.as_double() == b.as_double();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case Value::Kind::Null: return true;
        case Value::Kind::Bool: return a.as_bool() == b.as_bool();
        case Value::Kind::String: return a.as_string() == b.as_string();
        case Value::Kind::Array: return a.as_array() == b.as_array();
        case Value::Kind::Object: {
            const Object& x = a.as_object();
            const Object& y = b.as_object();
            if (x.size() != y.size()) return false;
            for (const auto& m : x) {
                const Value* other = b.find(m.first);
                if (!other || !(*other == m.second)) return false;
            }
            return true;
        }
        default: return false;
    }
}

}  // namespace arbor::json
