// The runtime objects templates can hold: namespace(), the `loop` variable, macros (and the
// caller of a call block), and native functions (globals and bound methods).
#pragma once

#include "template/ast.hpp"
#include "template/interpreter.hpp"
#include "template/value.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace arbor::tmpl {

class NamespaceObj : public Object {
public:
    std::string_view type_name() const override { return "Namespace"; }
    bool get_attr(std::string_view name, Value& out) const override;
    bool is_namespace() const override { return true; }
    void set_attr(std::string_view name, Value v) override;
    std::string repr() const override;
    const DictData* namespace_attrs() const override { return &attrs; }
    void release() override { attrs.items.clear(); }
    DictData attrs;
};

class LoopObj : public Object {
public:
    std::string_view type_name() const override { return "LoopContext"; }
    bool get_attr(std::string_view name, Value& out) const override;
    std::string repr() const override;
    void release() override {
        *last_changed = Value();
        items = std::make_shared<const std::vector<Value>>();
        index0 = 0;
    }

    std::shared_ptr<const std::vector<Value>> items;
    size_t index0 = 0;
    // loop.changed() state
    std::shared_ptr<Value> last_changed = std::make_shared<Value>();
    std::shared_ptr<bool> has_last_changed = std::make_shared<bool>(false);
};

class MacroFn : public Callable {
public:
    MacroFn(std::shared_ptr<const MacroDef> def, ScopePtr closure, std::shared_ptr<const TemplateAst> keep)
        : def_(std::move(def)), closure_(std::move(closure)), keep_(std::move(keep)) {}
    std::string name() const override { return def_->name; }
    Value call(Interpreter& in, CallArgs& args, SrcPos at) override;
    std::string repr() const override { return "<Macro '" + def_->name + "'>"; }

private:
    std::shared_ptr<const MacroDef> def_;
    ScopePtr closure_;
    std::shared_ptr<const TemplateAst> keep_;
};

class NativeFn : public Callable {
public:
    using Impl = std::function<Value(Interpreter&, CallArgs&)>;
    NativeFn(std::string name, Impl impl, std::string repr_text = {})
        : name_(std::move(name)), impl_(std::move(impl)), repr_(std::move(repr_text)) {}
    std::string name() const override { return name_; }
    Value call(Interpreter& in, CallArgs& args, SrcPos) override { return impl_(in, args); }
    std::string repr() const override { return repr_.empty() ? "<built-in function " + name_ + ">" : repr_; }

private:
    std::string name_;
    Impl impl_;
    std::string repr_;
};

Value native(std::string name, NativeFn::Impl impl, std::string repr_text = {});

// Binds call arguments to named parameters like a Python signature would:
// positional first, then keywords; an unknown keyword or too many positionals is an error.
// Returns one slot per parameter (Undefined kind when not given: check `given`).
struct Bound {
    std::vector<Value> values;
    std::vector<bool> given;
    bool has(size_t k) const { return k < given.size() && given[k]; }
    const Value& get(size_t k) const { return values[k]; }
};
Bound bind_args(const std::string& fn, const CallArgs& args, std::initializer_list<const char*> params,
                size_t required = 0);

// The template globals: range, namespace, dict, joiner, cycler, raise_exception, strftime_now.
std::vector<std::pair<std::string, Value>> make_globals();

}  // namespace arbor::tmpl
