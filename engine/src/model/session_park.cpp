// Session::park and Session::wake (arbor/session.hpp): a context to a park file and back, and
// the byte form of HeldGeneration that the park file's TOKS section carries.
//
// HeldGeneration bytes (little-endian): u8 'H', u8 version 1, u8 flags (1: detokenizer state
// present, 2: text_final, 4: ended), u8 ended reason (StopReason, 0 when not ended), u32 n +
// StreamDetokenizer::serialize bytes, u32 n + held text, u32 stop count, then per stop string
// u32 n + bytes. A field that starts with 0x01 instead is a bare StreamDetokenizer state
// (files parked before the held text was stored).
#include <arbor/park.hpp>
#include <arbor/session.hpp>

#include <cstring>

namespace arbor {
namespace {

constexpr char kHeldMagic = 'H';
constexpr uint8_t kHeldVersion = 1;

void put_u32(std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}
void put_bytes(std::string& out, std::string_view b) {
    put_u32(out, uint32_t(b.size()));
    out += b;
}

struct Reader {
    std::string_view b;
    size_t pos = 0;
    std::string problem;
    bool u8(uint8_t& v, const char* what) {
        if (pos + 1 > b.size()) return fail(what);
        v = uint8_t(b[pos++]);
        return true;
    }
    bool u32(uint32_t& v, const char* what) {
        if (pos + 4 > b.size()) return fail(what);
        v = 0;
        for (int i = 0; i < 4; ++i) v |= uint32_t(uint8_t(b[pos + size_t(i)])) << (8 * i);
        pos += 4;
        return true;
    }
    bool bytes(std::string& out, const char* what) {
        uint32_t n = 0;
        if (!u32(n, what)) return false;
        if (n > b.size() - pos) return fail(what);
        out.assign(b.substr(pos, n));
        pos += n;
        return true;
    }
    bool fail(const char* what) {
        problem = std::string("held text: ") + what + " runs past the end at byte " + std::to_string(pos) + " of " +
                  std::to_string(b.size());
        return false;
    }
};

}  // namespace

std::string HeldGeneration::serialize() const {
    std::string out;
    out.push_back(kHeldMagic);
    out.push_back(char(kHeldVersion));
    out.push_back(char((detok ? 1 : 0) | (text_final ? 2 : 0) | (ended ? 4 : 0)));
    out.push_back(char(ended ? int(*ended) : 0));
    put_bytes(out, detok ? StreamDetokenizer::serialize(*detok) : std::string());
    put_bytes(out, text);
    put_u32(out, uint32_t(stops.size()));
    for (const std::string& s : stops) put_bytes(out, s);
    return out;
}

Result<HeldGeneration> HeldGeneration::deserialize(std::string_view bytes) {
    HeldGeneration h;
    if (bytes.empty()) return h;
    if (bytes[0] == '\x01') {  // a bare detokenizer state
        auto st = StreamDetokenizer::deserialize(bytes);
        if (!st) return st.error();
        h.detok = st.value();
        return h;
    }
    Reader r;
    r.b = bytes;
    uint8_t magic = 0, version = 0, flags = 0, reason = 0;
    r.u8(magic, "magic");
    if (magic != uint8_t(kHeldMagic)) return make_error("held text: unknown format byte " + std::to_string(magic) + " at byte 0");
    if (!r.u8(version, "version") || !r.u8(flags, "flags") || !r.u8(reason, "stop reason")) return make_error(r.problem);
    if (version != kHeldVersion) return make_error("held text: version " + std::to_string(version) + " at byte 1 (this engine reads 1)");
    if (flags > 7) return make_error("held text: unknown flags " + std::to_string(flags) + " at byte 2");
    const bool ended = flags & 4;
    if (ended && reason != uint8_t(StopReason::EndOfGeneration) && reason != uint8_t(StopReason::StopString))
        return make_error("held text: stop reason " + std::to_string(reason) + " at byte 3 does not end a generation");
    if (ended) h.ended = StopReason(reason);
    h.text_final = flags & 2;
    std::string detok;
    uint32_t n_stops = 0;
    if (!r.bytes(detok, "detokenizer state") || !r.bytes(h.text, "text") || !r.u32(n_stops, "stop count"))
        return make_error(r.problem);
    if (flags & 1) {
        auto st = StreamDetokenizer::deserialize(detok);
        if (!st) return make_error("held text: " + st.message());
        h.detok = st.value();
    } else if (!detok.empty()) {
        return make_error("held text: a detokenizer state without its flag");
    }
    if (n_stops > bytes.size()) return make_error("held text: stop count " + std::to_string(n_stops) + " is impossible");
    for (uint32_t i = 0; i < n_stops; ++i) {
        std::string s;
        if (!r.bytes(s, "stop string")) return make_error(r.problem);
        h.stops.push_back(std::move(s));
    }
    if (r.pos != bytes.size())
        return make_error("held text: " + std::to_string(bytes.size() - r.pos) + " extra bytes at byte " + std::to_string(r.pos));
    return h;
}

Status Session::park(const std::string& path, const Sampler* sampler) const {
    ParkContents c;
    c.tokens = tokens_;
    c.pending = pending_;
    if (!held_.empty() || !held_.stops.empty()) c.detok_state = held_.serialize();
    if (sampler) c.sampler_state = sampler->serialize();
    c.logits = logits_;
    if (c.logits.empty()) c.logits.assign(size_t(model().config().n_vocab), 0.0f);
    return write_park_file(path, model(), *seq_, c);
}

Result<WakeReport> Session::wake(const std::string& path) {
    if (!tokens_.empty() || seq_->size() != 0 || pending_)
        return make_error("wake needs a fresh context (this one already holds tokens)");
    const BusyScope busy(this);
    prompt_started_ = clock_seconds();
    auto r = read_park_file(path, model(), seq_->cache().layout().type, *seq_);
    if (!r) return r.error();
    ParkRead& pr = r.value();
    WakeReport rep;
    auto held = HeldGeneration::deserialize(pr.contents.detok_state);
    if (!held) return make_error(path + ": the held text cannot be read: " + held.message());
    if (!pr.contents.sampler_state.empty()) {
        auto smp = Sampler::deserialize(pr.contents.sampler_state);
        if (smp) rep.sampler = std::move(smp.value());
    }
    if (pr.cells_restored) {
        tokens_ = std::move(pr.contents.tokens);
        logits_ = std::move(pr.contents.logits);
        std::lock_guard lock(stats_mu_);
        stats_.prompt_tokens += int64_t(tokens_.size());
        stats_.context_tokens = seq_->size();
        rep.restored_cells = pr.cells;
    } else {
        rep.problem = pr.problem;
        if (int64_t(pr.contents.tokens.size()) > seq_->capacity())
            return make_error(path + ": " + std::to_string(pr.contents.tokens.size()) +
                              " parked tokens do not fit the context of " + std::to_string(seq_->capacity()));
        auto fed = eval_tokens(pr.contents.tokens, false);
        if (!fed) return fed.error();
        rep.recomputed_cells = fed.value();
    }
    pending_ = pr.contents.pending;
    held_ = std::move(held.value());
    return rep;
}

}  // namespace arbor
