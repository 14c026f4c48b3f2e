// Tokenizer: tokenize (special-token split, then the model per fragment), token pieces,
// detokenize, and the accessors.
#include "tokenizer/tokenizer_impl.hpp"

#include "tokenizer/utf8.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace arbor {

using namespace tok;

namespace {

const std::string kEmpty;

void replace_all(std::string& s, std::string_view from, std::string_view to) {
    if (s.find(from) == std::string::npos) return;
    std::string out;
    out.reserve(s.size() + 16);
    size_t pos = 0;
    for (size_t m; (m = s.find(from, pos)) != std::string::npos; pos = m + from.size()) {
        out.append(s, pos, m - pos);
        out.append(to);
    }
    out.append(s, pos, std::string::npos);
    s = std::move(out);
}

uint8_t byte_of_token(const std::string& text) {
    // "<0xXX>" as the reference reads it: the two characters after "<0x", base 16.
    if (text.size() < 5) return 0;
    const std::string hex = text.substr(3, 2);
    return static_cast<uint8_t>(std::strtol(hex.c_str(), nullptr, 16));
}

// Byte-level BPE text back to bytes; a character outside the byte alphabet is spelled out the
// way the reference does.
std::string decode_byte_level(const std::string& text) {
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
        const uint32_t cp = utf8_decode_one(text, pos);
        const int b = cpt_to_byte(cp);
        if (b >= 0) {
            out.push_back(static_cast<char>(b));
            continue;
        }
        out += "[UNK_BYTE_0x";
        std::string enc;
        utf8_append(enc, cp);
        for (unsigned char c : enc) {
            char buf[3];
            std::snprintf(buf, sizeof buf, "%02x", c);
            out += buf;
        }
        out += text + "]";
    }
    return out;
}

}  // namespace

std::string piece_for(const Tokenizer::Impl& impl, TokenId id, bool render_special) {
    if (!impl.valid(id)) return {};
    const uint32_t a = impl.attr[static_cast<size_t>(id)];
    const std::string& text = impl.text[static_cast<size_t>(id)];
    if (a & (kAttrUnknown | kAttrControl)) return render_special ? text : std::string();
    if (a & kAttrUserDefined) return text;
    if (a & kAttrNormal) {
        if (impl.model == TokenizerModel::Bpe) return decode_byte_level(text);
        std::string s = text;
        replace_all(s, "\xE2\x96\x81", " ");
        return s;
    }
    if (a & kAttrByte) {
        if (impl.model == TokenizerModel::WordPiece) return {};
        return std::string(1, static_cast<char>(byte_of_token(text)));
    }
    return {};
}

std::vector<TokenId> Tokenizer::tokenize(std::string_view text, TokenizeOptions opts) const {
    const Impl& m = *impl_;
    std::vector<TokenId> out;
    out.reserve(text.size() / 3 + 4);
    const std::vector<Fragment> frags = split_special(m, text, opts.parse_special);
    switch (m.model) {
        case TokenizerModel::SentencePiece: {
            if (opts.add_special && m.add_bos) out.push_back(m.bos);
            bool prev_special = true;  // the first fragment gets the leading space too
            std::string buf;
            for (const Fragment& f : frags) {
                if (f.id != kNoToken) {
                    out.push_back(f.id);
                    prev_special = true;
                    continue;
                }
                buf.clear();
                if (m.add_space_prefix && prev_special) buf.push_back(' ');
                buf.append(text.substr(f.begin, f.end - f.begin));
                replace_all(buf, " ", "\xE2\x96\x81");
                spm_tokenize(m, buf, out);
                prev_special = false;
            }
            if (opts.add_special && m.add_eos) out.push_back(m.eos);
            break;
        }
        case TokenizerModel::Bpe: {
            if (opts.add_special && m.add_bos) out.push_back(m.bos);
            for (const Fragment& f : frags) {
                if (f.id != kNoToken) {
                    out.push_back(f.id);
                } else {
                    bpe_tokenize(m, text.substr(f.begin, f.end - f.begin), out);
                }
            }
            if (opts.add_special && m.add_eos) out.push_back(m.eos);
            break;
        }
        case TokenizerModel::WordPiece: {
            if (opts.add_special && m.bos >= 0) out.push_back(m.bos);
            for (const Fragment& f : frags) {
                if (f.id != kNoToken) {
                    out.push_back(f.id);
                } else {
                    wpm_tokenize(m, text.substr(f.begin, f.end - f.begin), out);
                }
            }
            if (opts.add_special && m.sep >= 0) out.push_back(m.sep);
            break;
        }
    }
    return out;
}

std::string Tokenizer::token_to_piece(TokenId id, bool render_special) const {
    const Impl& m = *impl_;
    if (!m.valid(id)) return {};
    if (!render_special && m.has(id, kAttrUnknown | kAttrControl)) return {};
    return m.piece[static_cast<size_t>(id)];
}

std::string Tokenizer::detokenize(std::span<const TokenId> ids, DetokenizeOptions opts) const {
    const Impl& m = *impl_;
    bool remove_space = m.add_space_prefix;
    if (opts.remove_special && m.add_bos && !ids.empty() && ids.front() == m.bos) {
        remove_space = false;
        ids = ids.subspan(1);
    }
    if (opts.remove_special && m.add_eos && !ids.empty() && ids.back() == m.eos) ids = ids.first(ids.size() - 1);
    std::string out;
    for (TokenId id : ids) {
        std::string p = token_to_piece(id, opts.render_special);
        if (remove_space && !p.empty() && p[0] == ' ') p.erase(0, 1);
        remove_space = false;
        out += p;
    }
    if (!(opts.clean_spaces && m.clean_spaces) || out.empty()) return out;

    // clean_up_tokenization_spaces, as the reference applies it (in place, three passes).
    std::string& t = out;
    size_t total = t.size();
    // " ?", " !", " .", " ," lose the space.
    size_t n1 = total;
    total = 1;
    for (size_t i = 1; i < n1; ++i) {
        const char x = t[i];
        if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
        t[total++] = x;
    }
    // " ' " loses both spaces.
    size_t n2 = total;
    total = 1;
    for (size_t i = 1; i < n2; ++i) {
        const char x = t[i];
        if (x == '\'' && i + 1 < n2 && t[i - 1] == ' ' && t[i + 1] == ' ') {
            --total;
            t[++i] = '\0';
        }
        t[total++] = x;
    }
    // " 's", " 'm", " 're", " 've" lose the space.
    size_t n3 = total;
    total = 1;
    for (size_t i = 1; i < n3; ++i) {
        const char x = t[i];
        if (t[i - 1] == ' ' && x == '\'' && i + 1 < n3) {
            const char x1 = t[i + 1];
            if (x1 == 's' || x1 == 'm') {
                --total;
            } else if (i + 2 < n3 && ((x1 == 'r' && t[i + 2] == 'e') || (x1 == 'v' && t[i + 2] == 'e'))) {
                --total;
            }
        }
        t[total++] = x;
    }
    t.resize(total);
    return out;
}

TokenizerModel Tokenizer::model() const { return impl_->model; }
const std::string& Tokenizer::pre() const { return impl_->pre_name; }
size_t Tokenizer::n_tokens() const { return impl_->text.size(); }
const std::string& Tokenizer::token_text(TokenId id) const {
    return impl_->valid(id) ? impl_->text[static_cast<size_t>(id)] : kEmpty;
}

TokenType Tokenizer::token_type(TokenId id) const {
    if (!impl_->valid(id)) return TokenType::Undefined;
    const uint32_t a = impl_->attr[static_cast<size_t>(id)];
    if (a & kAttrUnused) return TokenType::Unused;
    if (a & kAttrControl) return TokenType::Control;
    if (a & kAttrUserDefined) return TokenType::UserDefined;
    if (a & kAttrUnknown) return TokenType::Unknown;
    if (a & kAttrByte) return TokenType::Byte;
    if (a & kAttrNormal) return TokenType::Normal;
    return TokenType::Undefined;
}

bool Tokenizer::is_special(TokenId id) const { return impl_->valid(id) && impl_->has(id, kAttrControl | kAttrUnknown); }
bool Tokenizer::is_eog(TokenId id) const { return std::binary_search(impl_->eog.begin(), impl_->eog.end(), id); }
const std::vector<TokenId>& Tokenizer::eog_ids() const { return impl_->eog; }
std::optional<TokenId> Tokenizer::token_id(std::string_view text) const {
    const int32_t id = impl_->id_of.find(text);
    if (id < 0) return std::nullopt;
    return id;
}
TokenId Tokenizer::bos() const { return impl_->bos; }
TokenId Tokenizer::eos() const { return impl_->eos; }
TokenId Tokenizer::eot() const { return impl_->eot; }
TokenId Tokenizer::eom() const { return impl_->eom; }
TokenId Tokenizer::unk() const { return impl_->unk; }
TokenId Tokenizer::sep() const { return impl_->sep; }
TokenId Tokenizer::pad() const { return impl_->pad; }
bool Tokenizer::add_bos() const { return impl_->add_bos; }
bool Tokenizer::add_eos() const { return impl_->add_eos; }
bool Tokenizer::add_space_prefix() const { return impl_->add_space_prefix; }
const std::vector<std::string>& Tokenizer::warnings() const { return impl_->warnings; }

}  // namespace arbor
