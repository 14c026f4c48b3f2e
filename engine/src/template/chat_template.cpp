// arbor::ChatTemplate: the public face of the template engine. Internal RenderErrors become
// arbor::Error values here; nothing is thrown across this boundary.
#include <arbor/chat_template.hpp>

#include "template/errors.hpp"
#include "template/interpreter.hpp"
#include "template/parser.hpp"
#include "template/pyops.hpp"
#include "template/unicode.hpp"

#include <exception>
#include <new>

namespace arbor {
namespace {

constexpr size_t kMaxTemplateBytes = size_t(4) << 20;

std::string where(const tmpl::RenderError& e) {
    if (!e.has_pos) return "chat template: ";
    return "chat template line " + std::to_string(e.pos.line) + ", column " + std::to_string(e.pos.col) + ": ";
}

}  // namespace

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
    if (source.size() > kMaxTemplateBytes)
        return make_error("chat template is too large (" + std::to_string(source.size()) + " bytes)");
    size_t bad = tmpl::uni::invalid_utf8_at(source);
    if (bad != std::string_view::npos)
        return make_error("chat template is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    try {
        ChatTemplate t;
        t.ast_ = tmpl::parse_template(source);
        t.source_ = std::string(source);
        return t;
    } catch (const tmpl::RenderError& e) {
        return make_error(where(e) + "syntax error: " + e.message);
    } catch (const std::bad_alloc&) {
        return make_error("chat template: out of memory while parsing");
    } catch (const std::exception& e) {
        return make_error(std::string("chat template: internal error while parsing: ") + e.what());
    }
}

Result<std::string> ChatTemplate::render(const json::Value& messages, const json::Value& tools,
                                         const ChatTemplateOptions& options) const {
    if (!ast_) return make_error("chat template: not parsed");
    tmpl::Limits limits;
    limits.max_output_bytes = options.max_output_bytes;
    limits.max_string_bytes = options.max_output_bytes;
    limits.max_loop_iterations = options.max_loop_iterations;
    limits.max_call_depth = options.max_call_depth;
    limits.max_seconds = options.max_seconds;
    try {
        std::vector<std::pair<std::string, tmpl::Value>> vars;
        vars.emplace_back("messages", tmpl::from_json(messages));
        vars.emplace_back("tools", tmpl::from_json(tools));
        vars.emplace_back("documents", tmpl::Value::none());
        vars.emplace_back("add_generation_prompt", tmpl::Value::boolean(options.add_generation_prompt));
        vars.emplace_back("bos_token", tmpl::Value::string(options.bos_token));
        vars.emplace_back("eos_token", tmpl::Value::string(options.eos_token));
        for (const auto& kv : options.extra_vars) vars.emplace_back(kv.first, tmpl::from_json(kv.second));
        tmpl::Interpreter in(ast_, limits, options.now_iso);
        return in.render(std::move(vars));
    } catch (const tmpl::RenderError& e) {
        return make_error(where(e) + e.message);
    } catch (const std::bad_alloc&) {
        return make_error("chat template: out of memory while rendering");
    } catch (const std::exception& e) {
        return make_error(std::string("chat template: internal error while rendering: ") + e.what());
    }
}

std::string chatml_fallback_template() {
    return "{%- for message in messages -%}\n"
           "{%- set ns = namespace(content='') -%}\n"
           "{%- if message['content'] is string -%}{%- set ns.content = message['content'] -%}\n"
           "{%- elif message['content'] is iterable and message['content'] is not mapping -%}\n"
           "{%- for part in message['content'] -%}\n"
           "{%- if part is mapping and part['type'] == 'text' -%}{%- set ns.content = ns.content ~ part['text'] -%}{%- endif -%}\n"
           "{%- endfor -%}\n"
           "{%- endif -%}\n"
           "{{- '<|im_start|>' ~ message['role'] ~ '\\n' ~ ns.content ~ '<|im_end|>\\n' -}}\n"
           "{%- endfor -%}\n"
           "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}\n";
}

}  // namespace arbor
