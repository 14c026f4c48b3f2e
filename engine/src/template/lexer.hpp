// Template lexer: splits source into data and tag tokens the way jinja2's lexer does with
// trim_blocks=True and lstrip_blocks=True (whitespace control with '-' and '+', comments, raw
// blocks, newline normalisation, one trailing newline dropped).
#pragma once

#include "template/value.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace arbor::tmpl {

enum class Tok { Data, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, Eof };

struct Token {
    Tok type = Tok::Eof;
    std::string text;  // Data text, Name, String value (unescaped), Op symbol
    int64_t ival = 0;
    double fval = 0;
    SrcPos pos;
};

// Throws RenderError (with position) on a lexical error.
std::vector<Token> tokenize(std::string_view source);

// Line and column (1-based, column in code points) of a byte offset in normalised source.
class LineMap {
public:
    explicit LineMap(std::string_view text);
    SrcPos at(size_t offset) const;

private:
    std::string_view text_;
    std::vector<size_t> starts_;
};

// The source as jinja2 sees it: \r\n and \r become \n; one trailing newline is dropped.
std::string normalize_newlines(std::string_view source);

}  // namespace arbor::tmpl
