// StreamDetokenizer: token pieces out as text, holding back an incomplete UTF-8 tail.
#include "tokenizer/tokenizer_impl.hpp"

#include "tokenizer/utf8.hpp"

namespace arbor {
namespace {

// How many bytes at the end of `s` are a UTF-8 sequence that is valid so far but incomplete
// (0 when the end is complete, or when the tail can never become valid).
size_t incomplete_tail(std::string_view s) {
    const size_t n = s.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        const auto b = static_cast<uint8_t>(s[n - back]);
        if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
        size_t need = 0;
        if ((b & 0xE0) == 0xC0) {
            need = 2;
        } else if ((b & 0xF0) == 0xE0) {
            need = 3;
        } else if ((b & 0xF8) == 0xF0) {
            need = 4;
        }
        return need > back ? back : 0;
    }
    return 0;
}

bool plausible_held(std::string_view h) { return h.size() <= 3 && incomplete_tail(h) == h.size(); }

}  // namespace

StreamDetokenizer::StreamDetokenizer(Tokenizer tokenizer, bool render_special, bool at_text_start)
    : tok_(std::move(tokenizer)), render_special_(render_special), at_text_start_(at_text_start) {
    st_.at_start = at_text_start;
}

std::string StreamDetokenizer::push(TokenId id) {
    std::string piece = tok_.token_to_piece(id, render_special_);
    if (st_.at_start) {
        if (tok_.add_space_prefix() && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
        st_.at_start = false;
    }
    std::string text = std::move(st_.held);
    text += piece;
    const size_t hold = incomplete_tail(text);
    st_.held = text.substr(text.size() - hold);
    text.resize(text.size() - hold);
    return text;
}

std::string StreamDetokenizer::finish() {
    std::string rest = std::move(st_.held);
    st_ = State{};
    st_.at_start = at_text_start_;
    return rest;
}

StreamDetokenizer::State StreamDetokenizer::state() const { return st_; }

Status StreamDetokenizer::restore(const State& s) {
    if (!plausible_held(s.held)) {
        return make_error("stream detokenizer state: " + std::to_string(s.held.size()) +
                          " held bytes are not the start of one UTF-8 sequence");
    }
    st_ = s;
    return {};
}

std::string StreamDetokenizer::serialize(const State& s) {
    std::string out;
    out.push_back('\x01');  // format version
    out.push_back(s.at_start ? '\x01' : '\x00');
    out.push_back(static_cast<char>(s.held.size()));
    out += s.held;
    return out;
}

Result<StreamDetokenizer::State> StreamDetokenizer::deserialize(std::string_view b) {
    if (b.size() < 3) return make_error("stream detokenizer state: " + std::to_string(b.size()) + " bytes, need at least 3");
    if (b[0] != '\x01') return make_error("stream detokenizer state: unknown version " + std::to_string(static_cast<uint8_t>(b[0])) + " at byte 0");
    if (b[1] != '\x00' && b[1] != '\x01') return make_error("stream detokenizer state: bad flag at byte 1");
    const size_t n = static_cast<uint8_t>(b[2]);
    if (b.size() != 3 + n) {
        return make_error("stream detokenizer state: length byte says " + std::to_string(n) + " held bytes, found " +
                          std::to_string(b.size() - 3));
    }
    State s;
    s.at_start = b[1] == '\x01';
    s.held = std::string(b.substr(3));
    if (!plausible_held(s.held)) return make_error("stream detokenizer state: held bytes at byte 3 are not an incomplete UTF-8 sequence");
    return s;
}

}  // namespace arbor
