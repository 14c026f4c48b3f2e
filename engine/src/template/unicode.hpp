// Code-point level string helpers with Python str semantics (the reference renderer is Python):
// UTF-8 decoding and encoding, whitespace as str.isspace() sees it, printable as str.isprintable()
// sees it, and full case mapping as str.upper()/lower()/title()/capitalize() do it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace arbor::tmpl::uni {

// Decodes UTF-8. Invalid sequences decode as U+FFFD per byte (inputs are validated upstream).
std::u32string decode(std::string_view s);
std::string encode(std::u32string_view s);
void append_utf8(std::string& out, char32_t c);
// Offset of the first invalid UTF-8 byte, or npos when s is valid.
size_t invalid_utf8_at(std::string_view s);
// Number of code points.
size_t length(std::string_view s);

bool is_space(char32_t c);      // str.isspace()
bool is_printable(char32_t c);  // str.isprintable()
bool is_cased(char32_t c);
bool is_case_ignorable(char32_t c);
bool is_lower(char32_t c);      // Lowercase property
bool is_upper(char32_t c);      // Uppercase property
bool is_alpha(char32_t c);
bool is_decimal(char32_t c);
bool is_digit(char32_t c);
bool is_numeric(char32_t c);

std::string upper(std::string_view s);       // str.upper()
std::string lower(std::string_view s);       // str.lower(), with the final-sigma rule
std::string title(std::string_view s);       // str.title()
std::string capitalize(std::string_view s);  // str.capitalize()
std::string swapcase(std::string_view s);    // str.swapcase()

// str.islower() / str.isupper() / str.istitle() over a whole string.
bool str_islower(std::string_view s);
bool str_isupper(std::string_view s);

}  // namespace arbor::tmpl::uni
