// Byte-level BPE tables: the GPT-2 byte alphabet, and vocabulary + merges moved from
// byte-alphabet text to raw bytes so that merging works on the input bytes directly.
//
// The move is exact: the alphabet is a bijection between bytes and 256 code points, so two
// strings over it are equal exactly when their raw bytes are. A vocabulary text or merge part
// with a code point outside the alphabet can never equal byte-encoded input; it is left out.
#include "tokenizer/tokenizer_impl.hpp"

#include "tokenizer/utf8.hpp"


namespace arbor::tok {
namespace {

struct ByteAlphabet {
    uint32_t to_cpt[256] = {};
    int16_t from_cpt[256 + 68] = {};  // 68 bytes are moved above U+00FF
    constexpr ByteAlphabet() {
        uint32_t n = 0;
        for (auto& f : from_cpt) f = -1;
        for (uint32_t b = 0; b < 256; ++b) {
            const bool self = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
            to_cpt[b] = self ? b : 256 + n++;
            from_cpt[to_cpt[b]] = static_cast<int16_t>(b);
        }
    }
};

constexpr ByteAlphabet kAlphabet{};
const ByteAlphabet& alphabet() { return kAlphabet; }

// Byte-alphabet text -> raw bytes; false if some code point is outside the alphabet.
bool decode_byte_text(std::string_view s, std::string& raw) {
    raw.clear();
    size_t pos = 0;
    while (pos < s.size()) {
        const uint32_t cp = utf8_decode_one(s, pos);
        const int b = cpt_to_byte(cp);
        if (b < 0) return false;
        raw.push_back(static_cast<char>(b));
    }
    return true;
}

}  // namespace

uint32_t byte_to_cpt(uint8_t b) { return alphabet().to_cpt[b]; }

int cpt_to_byte(uint32_t cp) { return cp < 256 + 68 ? alphabet().from_cpt[cp] : -1; }

Status build_bpe_tables(Tokenizer::Impl& impl, const std::vector<std::string>& merges) {
    BpeTables& t = impl.bpe;
    // Pieces never move once added (a deque), so the map can hold views of them as it fills.
    t.token_of.reserve(impl.text.size() + merges.size() / 8);
    t.piece_of.reserve(impl.text.size() + merges.size() / 8);
    auto piece = [&](std::string_view raw) -> int32_t {
        const int32_t found = t.piece_of.find(raw);
        if (found >= 0) return found;
        const auto id = static_cast<int32_t>(t.pieces.size());
        t.pieces.emplace_back(raw);
        t.token_of.push_back(-1);
        t.piece_of.insert(t.pieces.back(), id);
        return id;
    };

    std::string raw;
    for (size_t id = 0; id < impl.text.size(); ++id) {
        if (!decode_byte_text(impl.text[id], raw) || raw.empty()) continue;
        const int32_t p = piece(raw);
        if (t.token_of[static_cast<size_t>(p)] < 0) t.token_of[static_cast<size_t>(p)] = static_cast<int32_t>(id);
    }

    t.merges.reserve(merges.size());
    std::string left, right;
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const std::string& m = merges[rank];
        const size_t sp = m.find(' ', 1);
        if (sp == std::string::npos) continue;  // the reference files it under ("", ""), unusable
        if (!decode_byte_text(std::string_view(m).substr(0, sp), left) ||
            !decode_byte_text(std::string_view(m).substr(sp + 1), right) || left.empty() || right.empty()) {
            continue;
        }
        const int32_t l = piece(left);
        const int32_t r = piece(right);
        left += right;
        const int32_t res = piece(left);
        t.merges.insert(l, r, {static_cast<int32_t>(rank), res});
    }

    for (int b = 0; b < 256; ++b) {
        t.byte_piece[static_cast<size_t>(b)] = t.piece_of.find(std::string(1, static_cast<char>(b)));
        // The reference looks up each byte of the alphabet character's UTF-8 on its own.
        std::string enc;
        utf8_append(enc, byte_to_cpt(static_cast<uint8_t>(b)));
        auto& fb = t.byte_fallback[static_cast<size_t>(b)];
        fb = {-1, -1};
        for (size_t k = 0; k < enc.size() && k < 2; ++k) fb[k] = impl.text_token(enc.substr(k, 1));
    }
    return {};
}

}  // namespace arbor::tok
