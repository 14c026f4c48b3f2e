// Python arithmetic on template values: int (64-bit; Python's unbounded ints beyond that are an
// error), float, str and list operators, and Markup's escaping '+'.
#include "template/builtins.hpp"
#include "template/interpreter.hpp"
#include "template/pyformat.hpp"
#include "template/pyops.hpp"

#include <cmath>
#include <limits>

namespace arbor::tmpl {
namespace {

[[noreturn]] void overflow() { fail("integer overflow: results beyond 64 bits are not supported"); }

[[noreturn]] void unsupported(const char* op, const Value& a, const Value& b) {
    if (a.kind == Kind::String && std::string_view(op) == "+")
        fail("can only concatenate str (not \"" + type_name(b) + "\") to str");
    fail(std::string("unsupported operand type(s) for ") + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

void check_defined(const Value& a, const Value& b) {
    if (a.is_undefined()) fail(a.s.empty() ? "value is undefined" : a.s);
    if (b.is_undefined()) fail(b.s.empty() ? "value is undefined" : b.s);
}

constexpr size_t kMaxBytes = size_t(16) << 20;

Value repeat(const Value& seq, int64_t n) {
    if (n <= 0) {
        if (seq.kind == Kind::String) return Value::string("", seq.safe);
        return Value::make_list({}, seq.seq == SeqKind::Tuple ? SeqKind::Tuple : SeqKind::List);
    }
    if (seq.kind == Kind::String) {
        if (seq.s.size() * uint64_t(n) > kMaxBytes || (seq.s.size() && uint64_t(n) > kMaxBytes))
            fail("string repetition result is too large");
        std::string out;
        out.reserve(seq.s.size() * size_t(n));
        for (int64_t k = 0; k < n; ++k) out += seq.s;
        return Value::string(std::move(out), seq.safe);
    }
    const auto& items = seq.items();
    if (items.size() * uint64_t(n) > kMaxBytes / 16 || (items.size() && uint64_t(n) > kMaxBytes))
        fail("list repetition result is too large");
    std::vector<Value> out;
    for (int64_t k = 0; k < n; ++k) out.insert(out.end(), items.begin(), items.end());
    return Value::make_list(std::move(out), seq.seq == SeqKind::Tuple ? SeqKind::Tuple : SeqKind::List);
}

bool is_seq(const Value& v) {
    return v.kind == Kind::List && (v.seq == SeqKind::List || v.seq == SeqKind::Tuple);
}

// Python's float floor division and modulo.
void float_divmod(double vx, double wx, double& floordiv, double& mod) {
    mod = std::fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod != 0.0) {
        if ((wx < 0) != (mod < 0)) {
            mod += wx;
            div -= 1.0;
        }
    } else {
        mod = std::copysign(0.0, wx);
    }
    if (div != 0.0) {
        floordiv = std::floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
        floordiv = std::copysign(0.0, vx / wx);
    }
}

}  // namespace

Value py_add(const Value& a, const Value& b) {
    check_defined(a, b);
    if (a.is_number() && b.is_number()) {
        if (a.kind == Kind::Float || b.kind == Kind::Float) return Value::number(a.as_double() + b.as_double());
        int64_t r;
        if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) overflow();
        return Value::integer(r);
    }
    if (a.kind == Kind::String && b.kind == Kind::String) {
        if (a.s.size() + b.s.size() > kMaxBytes) fail("string result is too large");
        if (a.safe || b.safe) {
            // Markup + str escapes the str; str + Markup likewise.
            std::string l = a.safe ? a.s : html_escape(a.s);
            std::string r = b.safe ? b.s : html_escape(b.s);
            return Value::string(l + r, true);
        }
        return Value::string(a.s + b.s);
    }
    if (is_seq(a) && is_seq(b) && a.seq == b.seq) {
        std::vector<Value> out = a.items();
        out.insert(out.end(), b.items().begin(), b.items().end());
        return Value::make_list(std::move(out), a.seq);
    }
    if (is_seq(a) && is_seq(b))
        fail("can only concatenate " + type_name(a) + " (not \"" + type_name(b) + "\") to " + type_name(a));
    unsupported("+", a, b);
}

Value py_arith(ExprOp op, const Value& a, const Value& b) {
    if (op == ExprOp::Add) return py_add(a, b);
    if (op == ExprOp::Mod && a.kind == Kind::String) {
        if (b.is_undefined()) fail(b.s.empty() ? "value is undefined" : b.s);
        return Value::string(py_percent(a.s, b), a.safe);
    }
    check_defined(a, b);
    if (op == ExprOp::Mul) {
        if ((a.kind == Kind::String || is_seq(a)) && b.is_int()) return repeat(a, b.as_int());
        if ((b.kind == Kind::String || is_seq(b)) && a.is_int()) return repeat(b, a.as_int());
    }
    static const char* names[] = {"+", "-", "*", "/", "//", "%", "**"};
    const char* sym = names[int(op) - int(ExprOp::Add)];
    if (!a.is_number() || !b.is_number()) unsupported(sym, a, b);
    const bool flt = a.kind == Kind::Float || b.kind == Kind::Float;
    const double x = a.as_double(), y = b.as_double();
    const int64_t p = a.as_int(), q = b.as_int();
    int64_t r;
    switch (op) {
        case ExprOp::Sub:
            if (flt) return Value::number(x - y);
            if (__builtin_sub_overflow(p, q, &r)) overflow();
            return Value::integer(r);
        case ExprOp::Mul:
            if (flt) return Value::number(x * y);
            if (__builtin_mul_overflow(p, q, &r)) overflow();
            return Value::integer(r);
        case ExprOp::Div:
            if (y == 0.0) fail(flt ? "float division by zero" : "division by zero");
            return Value::number(x / y);
        case ExprOp::FloorDiv:
        case ExprOp::Mod: {
            if (flt) {
                if (y == 0.0) fail(op == ExprOp::Mod ? "float modulo" : "float floor division by zero");
                double fd, md;
                float_divmod(x, y, fd, md);
                return Value::number(op == ExprOp::Mod ? md : fd);
            }
            if (q == 0) fail("integer division or modulo by zero");
            if (p == std::numeric_limits<int64_t>::min() && q == -1) {
                if (op == ExprOp::Mod) return Value::integer(0);
                overflow();
            }
            int64_t d = p / q, m = p % q;
            if (m != 0 && ((m < 0) != (q < 0))) {
                m += q;
                d -= 1;
            }
            return Value::integer(op == ExprOp::Mod ? m : d);
        }
        case ExprOp::Pow: {
            if (!flt && q >= 0) {
                int64_t result = 1, base = p, e = q;
                while (e > 0) {
                    if (e & 1)
                        if (__builtin_mul_overflow(result, base, &result)) overflow();
                    e >>= 1;
                    if (e > 0 && __builtin_mul_overflow(base, base, &base)) {
                        if (base != 0 && base != 1 && base != -1) overflow();
                    }
                }
                return Value::integer(result);
            }
            if (x == 0.0 && y < 0) fail("0.0 cannot be raised to a negative power");
            if (x < 0 && y != std::floor(y)) fail("complex results are not supported");
            double v = std::pow(x, y);
            if (std::isinf(v) && std::isfinite(x) && std::isfinite(y)) fail("numerical result out of range");
            return Value::number(v);
        }
        default: unsupported(sym, a, b);
    }
}

}  // namespace arbor::tmpl
