// Template parser: tokens to a syntax tree, following jinja2 3.1's grammar (operator
// precedence, tuples, slices, call arguments, filters and tests, statements). Nesting is bounded
// (kMaxParseDepth) so a hostile template cannot exhaust the stack.
#pragma once

#include "template/ast.hpp"

#include <memory>
#include <string_view>

namespace arbor::tmpl {

inline constexpr int kMaxParseDepth = 400;

// Throws RenderError (with position) on a syntax error.
std::shared_ptr<const TemplateAst> parse_template(std::string_view source);

}  // namespace arbor::tmpl
