// Chat templates: the Jinja2 subset real model templates use, rendered the way Hugging Face
// transformers' apply_chat_template renders them with Python's jinja2:
//   ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) + loopcontrols,
//   tojson = json.dumps(x, ensure_ascii=False, indent=, separators=, sort_keys=),
//   globals raise_exception(msg) and strftime_now(fmt), and HF's {% generation %} tag.
// The supported subset and the known differences are listed in docs/TEMPLATES.md.
//
// A template is untrusted input (it comes from a GGUF file). Parsing and rendering never crash
// and are bounded (nesting depth, macro recursion, loop iterations, output size, time); a bound
// exceeded is an error. Every error names the template line and column. Parsing and rendering
// need at most about 1 MiB of stack (measured; nesting is bounded), so any thread can do them.
//
// Variables a template sees: messages, tools (None when null), documents (None),
// add_generation_prompt, bos_token, eos_token, then extra_vars (which override the others).
#pragma once

#include <arbor/json.hpp>
#include <arbor/result.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace arbor {

namespace tmpl {
struct TemplateAst;
}

struct ChatTemplateOptions {
    bool add_generation_prompt = false;
    std::string bos_token, eos_token;
    // Model-specific flags such as enable_thinking; they override the variables above.
    std::vector<std::pair<std::string, json::Value>> extra_vars;
    // Pins what strftime_now() sees ("2026-11-29T12:00:00"); unset means the local clock.
    std::optional<std::string> now_iso;

    // Bounds.
    size_t max_output_bytes = size_t(16) << 20;
    uint64_t max_loop_iterations = 1'000'000;
    int max_call_depth = 100;
    double max_seconds = 10.0;
};

class ChatTemplate {
public:
    // Parses (and checks) a template. Errors name line and column.
    static Result<ChatTemplate> parse(std::string_view source);

    // Renders messages (a JSON array of message objects) with tools (a JSON array, or null for
    // none). Errors name line and column.
    Result<std::string> render(const json::Value& messages, const json::Value& tools,
                               const ChatTemplateOptions& options) const;

    const std::string& source() const { return source_; }

private:
    std::shared_ptr<const tmpl::TemplateAst> ast_;
    std::string source_;
};

// A ChatML template (<|im_start|>role\ncontent<|im_end|>\n), the fallback when a model's own
// template fails to parse or render.
std::string chatml_fallback_template();

}  // namespace arbor
