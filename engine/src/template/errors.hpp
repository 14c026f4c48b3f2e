// The interpreter's internal error. It is thrown inside the template engine only and turned into
// an arbor::Error (with line and column) at the public API boundary (chat_template.cpp).
#pragma once

#include "template/value.hpp"

#include <string>

namespace arbor::tmpl {

struct RenderError {
    std::string message;
    SrcPos pos;
    bool has_pos = false;
};

[[noreturn]] inline void fail(std::string message) { throw RenderError{std::move(message), {}, false}; }
[[noreturn]] inline void fail_at(SrcPos pos, std::string message) {
    throw RenderError{std::move(message), pos, true};
}

}  // namespace arbor::tmpl
