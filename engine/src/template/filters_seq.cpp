// jinja2's built-in filters on sequences and mappings. jinja2 returns generators from map,
// select, reject, unique, items and reverse; here they are lists (they iterate the same way).
#include "template/filters.hpp"
#include "template/objects.hpp"
#include "template/pyops.hpp"
#include "template/unicode.hpp"

#include <algorithm>

namespace arbor::tmpl {
namespace {

// jinja2's make_attrgetter: "a.b.0" looks up item by item (getitem, then attribute).
struct AttrGetter {
    std::vector<Value> parts;
    bool active = false;

    explicit AttrGetter(const Value* attribute) {
        if (!attribute || attribute->is_none()) return;
        active = true;
        if (attribute->is_int()) {
            parts.push_back(Value::integer(attribute->as_int()));
            return;
        }
        std::string a = to_str(*attribute);
        size_t start = 0;
        for (;;) {
            size_t dot = a.find('.', start);
            std::string part = a.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos && part.size() < 18)
                parts.push_back(Value::integer(std::stoll(part)));
            else
                parts.push_back(Value::string(part));
            if (dot == std::string::npos) break;
            start = dot + 1;
        }
    }

    Value operator()(Value item) const {
        for (const Value& p : parts) {
            if (item.is_undefined()) fail(item.s);
            item = get_item(item, p);
        }
        return item;
    }
};

Value ignore_case(const Value& v) {
    if (v.kind == Kind::String) return Value::string(uni::lower(v.s));
    return v;
}

std::vector<Value> sorted_by_keys(std::vector<Value> items, const std::vector<Value>& keys, bool reverse) {
    std::vector<size_t> order(items.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        return reverse ? compare(CmpOp::Lt, keys[y], keys[x]) : compare(CmpOp::Lt, keys[x], keys[y]);
    });
    std::vector<Value> out;
    out.reserve(items.size());
    for (size_t k : order) out.push_back(std::move(items[k]));
    return out;
}

Value min_max(const Value& v, CallArgs& a, bool want_max, const char* fn) {
    Bound b = bind_args(fn, a, {"case_sensitive", "attribute"});
    bool cs = b.has(0) && truthy(b.get(0));
    AttrGetter get(b.has(1) ? &b.get(1) : nullptr);
    std::vector<Value> items = iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    size_t best = 0;
    Value best_key;
    for (size_t k = 0; k < items.size(); ++k) {
        Value key = get.active ? get(items[k]) : items[k];
        if (!cs) key = ignore_case(key);
        if (k == 0 || compare(CmpOp::Lt, want_max ? best_key : key, want_max ? key : best_key)) {
            best = k;
            best_key = key;
        }
    }
    return items[best];
}

Value select_impl(Interpreter& in, const Value& v, CallArgs& a, bool attr, bool keep_on_true, const char* fn) {
    // jinja2 yields nothing (and checks nothing) for a falsy input.
    if (!truthy(v)) return Value::make_generator({});
    std::vector<Value> pos = a.pos;
    AttrGetter get(nullptr);
    if (attr) {
        if (pos.empty()) fail(std::string(fn) + "() missing the attribute argument");
        get = AttrGetter(&pos[0]);
        pos.erase(pos.begin());
    }
    std::string test;
    if (!pos.empty()) {
        if (pos[0].kind != Kind::String) fail(std::string(fn) + "(): the test name must be a string");
        test = pos[0].s;
        pos.erase(pos.begin());
        if (!is_known_test(test)) fail("No test named '" + test + "'.");
    }
    CallArgs targs;
    targs.pos = pos;
    targs.kw = a.kw;
    std::vector<Value> out;
    for (const Value& item : iterate(v)) {
        Value x = attr ? get(item) : item;
        bool r = test.empty() ? truthy(x) : apply_test(in, test, x, targs);
        if (r == keep_on_true) out.push_back(item);
    }
    return Value::make_generator(std::move(out));
}

}  // namespace

Value f_length(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("length", a, {});
    return Value::integer(length(v));
}

Value f_list(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("list", a, {});
    return Value::make_list(iterate(v));
}

Value f_first(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("first", a, {});
    if (v.is_generator()) {
        // next(iter(gen)) takes one item.
        auto& items = v.list->items;
        if (items.empty()) return Value::undefined("No first item, sequence was empty.");
        Value first = std::move(items.front());
        items.erase(items.begin());
        return first;
    }
    std::vector<Value> items = iterate(v);
    if (items.empty()) return Value::undefined("No first item, sequence was empty.");
    return items.front();
}

Value f_last(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("last", a, {});
    if (v.is_generator()) fail("'" + type_name(v) + "' object is not reversible");
    std::vector<Value> items = iterate(v);
    if (items.empty()) return Value::undefined("No last item, sequence was empty.");
    return items.back();
}

Value f_reverse(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("reverse", a, {});
    if (v.kind == Kind::String) {
        std::u32string u = uni::decode(v.s);
        std::reverse(u.begin(), u.end());
        return Value::string(uni::encode(u), v.safe);
    }
    // reversed(x) is an iterator; a generator cannot be reversed, so jinja2 makes a list.
    const bool was_generator = v.is_generator();
    std::string type = v.kind == Kind::Dict ? "dict_reversekeyiterator"
                       : (v.kind == Kind::List && v.seq == SeqKind::List) ? "list_reverseiterator"
                       : (v.kind == Kind::List && v.seq == SeqKind::Range) ? "range_iterator"
                                                                            : "reversed";
    if (v.kind == Kind::List && (v.seq == SeqKind::DictKeys || v.seq == SeqKind::DictValues || v.seq == SeqKind::DictItems))
        type = "dict_reverse" + std::string(v.seq == SeqKind::DictKeys ? "key" : v.seq == SeqKind::DictValues ? "value" : "item") + "iterator";
    std::vector<Value> items = iterate(v);
    std::reverse(items.begin(), items.end());
    if (was_generator) return Value::make_list(std::move(items));
    return Value::make_generator(std::move(items), type);
}

Value f_items(Interpreter&, const Value& v, CallArgs& a) {
    bind_args("items", a, {});
    if (v.is_undefined()) return Value::make_generator({});
    if (v.kind != Kind::Dict) fail("Can only get item pairs from a mapping.");
    std::vector<Value> out;
    for (const auto& kv : v.dict->items) out.push_back(Value::make_list({kv.first, kv.second}, SeqKind::Tuple));
    return Value::make_generator(std::move(out));
}

Value f_join(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("join", a, {"d", "attribute"});
    std::string sep = b.has(0) ? to_str(b.get(0)) : "";
    AttrGetter get(b.has(1) ? &b.get(1) : nullptr);
    std::string out;
    bool first = true;
    for (const Value& item : iterate(v)) {
        if (!first) out += sep;
        first = false;
        out += to_str(get.active ? get(item) : item);
        if (out.size() > (size_t(64) << 20)) fail("join result is too large");
    }
    return Value::string(std::move(out));
}

Value f_map(Interpreter& in, const Value& v, CallArgs& a) {
    // jinja2 yields nothing (and checks nothing) for a falsy input.
    if (!truthy(v)) return Value::make_generator({});
    std::vector<Value> out;
    if (a.pos.empty()) {
        const Value* attribute = nullptr;
        const Value* dflt = nullptr;
        for (const auto& kv : a.kw) {
            if (kv.first == "attribute") attribute = &kv.second;
            else if (kv.first == "default") dflt = &kv.second;
            else fail("Unexpected keyword argument '" + kv.first + "'");
        }
        if (!attribute) fail("map requires a filter argument");
        AttrGetter get(attribute);
        for (const Value& item : iterate(v)) {
            Value x = get(item);
            if (dflt && x.is_undefined()) x = *dflt;
            out.push_back(std::move(x));
        }
        return Value::make_generator(std::move(out));
    }
    if (a.pos[0].kind != Kind::String) fail("map(): the filter name must be a string");
    std::string name = a.pos[0].s;
    if (!is_known_filter(name)) fail("No filter named '" + name + "'.");
    CallArgs rest;
    rest.pos.assign(a.pos.begin() + 1, a.pos.end());
    rest.kw = a.kw;
    for (const Value& item : iterate(v)) {
        CallArgs copy = rest;
        out.push_back(apply_filter(in, name, item, copy));
    }
    return Value::make_generator(std::move(out));
}

Value f_select(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, true, "select"); }
Value f_reject(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, false, "reject"); }
Value f_selectattr(Interpreter& in, const Value& v, CallArgs& a) {
    return select_impl(in, v, a, true, true, "selectattr");
}
Value f_rejectattr(Interpreter& in, const Value& v, CallArgs& a) {
    return select_impl(in, v, a, true, false, "rejectattr");
}

Value f_sort(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("sort", a, {"reverse", "case_sensitive", "attribute"});
    bool reverse = b.has(0) && truthy(b.get(0));
    bool cs = b.has(1) && truthy(b.get(1));
    std::vector<AttrGetter> getters;
    if (b.has(2) && !b.get(2).is_none()) {
        if (b.get(2).kind == Kind::String) {
            std::string spec = b.get(2).s;
            size_t start = 0;
            for (;;) {
                size_t comma = spec.find(',', start);
                Value part = Value::string(spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
                getters.emplace_back(&part);
                if (comma == std::string::npos) break;
                start = comma + 1;
            }
        } else {
            getters.emplace_back(&b.get(2));
        }
    }
    std::vector<Value> items = iterate(v);
    std::vector<Value> keys;
    for (const Value& item : items) {
        if (getters.empty()) {
            keys.push_back(cs ? item : ignore_case(item));
        } else if (getters.size() == 1) {
            Value k = getters[0](item);
            keys.push_back(cs ? k : ignore_case(k));
        } else {
            std::vector<Value> parts;
            for (const auto& g : getters) {
                Value k = g(item);
                parts.push_back(cs ? k : ignore_case(k));
            }
            keys.push_back(Value::make_list(std::move(parts)));
        }
    }
    return Value::make_list(sorted_by_keys(std::move(items), keys, reverse));
}

Value f_dictsort(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("dictsort", a, {"case_sensitive", "by", "reverse"});
    bool cs = b.has(0) && truthy(b.get(0));
    std::string by = b.has(1) ? to_str(b.get(1)) : "key";
    bool reverse = b.has(2) && truthy(b.get(2));
    if (by != "key" && by != "value") fail("You can only sort by either 'key' or 'value'");
    if (v.kind != Kind::Dict) fail("dictsort needs a mapping, not " + type_name(v));
    std::vector<Value> items, keys;
    for (const auto& kv : v.dict->items) {
        items.push_back(Value::make_list({kv.first, kv.second}, SeqKind::Tuple));
        const Value& k = by == "key" ? kv.first : kv.second;
        keys.push_back(cs ? k : ignore_case(k));
    }
    return Value::make_list(sorted_by_keys(std::move(items), keys, reverse));
}

Value f_unique(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("unique", a, {"case_sensitive", "attribute"});
    bool cs = b.has(0) && truthy(b.get(0));
    AttrGetter get(b.has(1) ? &b.get(1) : nullptr);
    std::vector<Value> out, seen;
    for (const Value& item : iterate(v)) {
        Value key = get.active ? get(item) : item;
        if (!cs) key = ignore_case(key);
        if (key.kind == Kind::Dict || (key.kind == Kind::List && key.seq != SeqKind::Tuple))
            fail("unhashable type: '" + type_name(key) + "'");
        bool dup = false;
        for (const Value& s : seen)
            if (equals(s, key)) dup = true;
        if (dup) continue;
        seen.push_back(key);
        out.push_back(item);
    }
    return Value::make_generator(std::move(out));
}

Value f_min(Interpreter&, const Value& v, CallArgs& a) { return min_max(v, a, false, "min"); }
Value f_max(Interpreter&, const Value& v, CallArgs& a) { return min_max(v, a, true, "max"); }

Value f_sum(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("sum", a, {"attribute", "start"});
    AttrGetter get(b.has(0) ? &b.get(0) : nullptr);
    Value total = b.has(1) ? b.get(1) : Value::integer(0);
    for (const Value& item : iterate(v)) total = py_add(total, get.active ? get(item) : item);
    return total;
}

Value f_batch(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("batch", a, {"linecount", "fill_with"}, 1);
    int64_t n = b.get(0).as_int();
    if (n <= 0) fail("batch size must be positive");
    std::vector<Value> out, cur;
    for (const Value& item : iterate(v)) {
        if (int64_t(cur.size()) == n) {
            out.push_back(Value::make_list(std::move(cur)));
            cur.clear();
        }
        cur.push_back(item);
    }
    if (!cur.empty()) {
        if (b.has(1) && !b.get(1).is_none())
            while (int64_t(cur.size()) < n) cur.push_back(b.get(1));
        out.push_back(Value::make_list(std::move(cur)));
    }
    return Value::make_generator(std::move(out));
}

Value f_slice(Interpreter&, const Value& v, CallArgs& a) {
    Bound b = bind_args("slice", a, {"slices", "fill_with"}, 1);
    int64_t slices = b.get(0).as_int();
    if (slices <= 0 || slices > 100000) fail("slice count must be positive");
    std::vector<Value> seq = iterate(v);
    int64_t len = int64_t(seq.size());
    int64_t per = len / slices, extra = len % slices, offset = 0;
    std::vector<Value> out;
    for (int64_t k = 0; k < slices; ++k) {
        int64_t start = offset + k * per;
        if (k < extra) ++offset;
        int64_t end = offset + (k + 1) * per;
        std::vector<Value> part(seq.begin() + start, seq.begin() + end);
        if (b.has(1) && !b.get(1).is_none() && k >= extra) part.push_back(b.get(1));
        out.push_back(Value::make_list(std::move(part)));
    }
    return Value::make_generator(std::move(out));
}

}  // namespace arbor::tmpl
