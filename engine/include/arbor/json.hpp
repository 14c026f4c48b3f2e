// JSON values, a strict RFC 8259 parser and a serializer.
//
// - Value holds null, bool, int64, double, string (UTF-8), array or object. Objects keep their
//   insertion order (a vector of pairs; lookups are linear, so iterate big maps rather than
//   looking keys up one by one).
// - parse() is strict: no comments, no trailing commas, no leading zeros, no control characters
//   or invalid UTF-8 inside strings, no unpaired surrogate escapes. Nesting is bounded
//   (kMaxDepth). Integers that do not fit int64 become Float. A duplicate key keeps the first
//   position and the last value (as Python's json does). Errors name line:column and byte offset.
// - dump() prints integers exactly and doubles in Python's repr style (shortest round-trip
//   digits, "1.0", "1e-05", "1e+16"), so a float re-parses as a float; NaN and infinities print
//   as null. Strings keep UTF-8 as is; " \ and control characters are escaped (\n, \u001f...).
//   Compact output is {"a":1,"b":[1,2]}; indent >= 0 pretty-prints like Python's
//   json.dumps(indent=n).
//
// Accessors never throw: as_*() on the wrong kind returns a neutral value (false, 0, "", an empty
// container). The mutating operator[], push_back() and the mutable as_array()/as_object() turn a
// value of another kind into an empty object or array first.
#pragma once

#include <arbor/result.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace arbor::json {

class Value;
using Array = std::vector<Value>;
using Member = std::pair<std::string, Value>;
using Object = std::vector<Member>;

class Value {
public:
    enum class Kind { Null, Bool, Int, Float, String, Array, Object };

    Value() = default;
    Value(std::nullptr_t) {}
    Value(bool b) : v_(b) {}
    Value(int i) : v_(int64_t(i)) {}
    Value(unsigned i) : v_(int64_t(i)) {}
    Value(long i) : v_(int64_t(i)) {}
    Value(long long i) : v_(int64_t(i)) {}
    Value(unsigned long i);       // stored as Int when it fits int64, else Float
    Value(unsigned long long i);  // likewise
    Value(double d) : v_(d) {}
    Value(const char* s) : v_(std::string(s ? s : "")) {}
    Value(std::string s) : v_(std::move(s)) {}
    Value(std::string_view s) : v_(std::string(s)) {}
    Value(Array a) : v_(std::move(a)) {}
    Value(Object o) : v_(std::move(o)) {}

    static Value array() { return Value(Array{}); }
    static Value object() { return Value(Object{}); }
    // A Float that prints as the shortest decimal that round-trips the float32 f.
    static Value from_float32(float f);

    Kind kind() const { return Kind(v_.index()); }
    bool is_null() const { return kind() == Kind::Null; }
    bool is_bool() const { return kind() == Kind::Bool; }
    bool is_int() const { return kind() == Kind::Int; }
    bool is_float() const { return kind() == Kind::Float; }
    bool is_number() const { return is_int() || is_float(); }
    bool is_string() const { return kind() == Kind::String; }
    bool is_array() const { return kind() == Kind::Array; }
    bool is_object() const { return kind() == Kind::Object; }
    // True for a Float made by from_float32 (dump prints it with float32 precision).
    bool is_float32() const { return f32_; }

    bool as_bool() const;            // false unless Bool
    int64_t as_int() const;          // Int; Float truncated (saturating); else 0
    double as_double() const;        // Int or Float; else 0
    const std::string& as_string() const;  // "" unless String
    const Array& as_array() const;   // empty unless Array
    Array& as_array();               // makes this an empty Array unless it is one
    const Object& as_object() const; // empty unless Object
    Object& as_object();             // makes this an empty Object unless it is one

    // Object: the member named key, inserted as null when absent (a non-object becomes {}).
    Value& operator[](std::string_view key);
    const Value* find(std::string_view key) const;  // nullptr if absent or not an object
    Value* find(std::string_view key);
    bool contains(std::string_view key) const { return find(key) != nullptr; }
    // Array: appends (a non-array becomes []).
    void push_back(Value v);
    // Elements of an array, members of an object, bytes of a string; 0 otherwise.
    size_t size() const;

    // Deep structural equality. Int and Float compare by value (1 == 1.0).
    friend bool operator==(const Value& a, const Value& b);

private:
    std::variant<std::monostate, bool, int64_t, double, std::string, Array, Object> v_;
    bool f32_ = false;
};

// Maximum nesting of arrays/objects that parse() accepts.
inline constexpr int kMaxDepth = 512;

Result<Value> parse(std::string_view text);
std::string dump(const Value& v, int indent = -1);
// The JSON string literal for s, with quotes. UTF-8 is kept as is.
std::string quote(std::string_view s);
// Appends quote(s) to out.
void append_quoted(std::string& out, std::string_view s);
// A double in Python's repr() style: shortest round-trip digits, scientific below 1e-4 and
// from 1e16 ("1e-05", "1.5e+16"), otherwise fixed with at least one decimal ("2.0").
// NaN and infinities give "nan", "inf", "-inf" (dump() prints them as null instead).
std::string format_double(double d);
// Likewise for the shortest digits that round-trip the float32 f.
std::string format_float32(float f);

}  // namespace arbor::json
