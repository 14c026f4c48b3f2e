// The sampler chain of arbor/sampling.hpp, its PRNG and its serialised state.
#include <arbor/sampling.hpp>

#include "model/numerics.hpp"

#include "core/splitmix64.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace arbor {
namespace {

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// Little-endian byte writer/reader for the serialised state.
struct Writer {
    std::string out;
    void u32(uint32_t v) {
        for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
    }
    void u64(uint64_t v) {
        for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
    }
    void f32(float f) {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        u32(u);
    }
};

struct Reader {
    std::string_view in;
    size_t pos = 0;
    bool ok = true;
    uint64_t take(int n) {
        if (pos + size_t(n) > in.size()) {
            ok = false;
            return 0;
        }
        uint64_t v = 0;
        for (int i = 0; i < n; ++i) v |= uint64_t(uint8_t(in[pos + size_t(i)])) << (8 * i);
        pos += size_t(n);
        return v;
    }
    uint32_t u32() { return uint32_t(take(4)); }
    uint64_t u64() { return take(8); }
    float f32() {
        const uint32_t u = u32();
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
};

constexpr uint32_t kMagic = 0x504d5341;  // "ASMP"
constexpr uint32_t kVersion = 1;

}  // namespace

Status SamplerParams::validate() const {
    if (!std::isfinite(temperature) || temperature < 0) return make_error("temperature must be a number >= 0");
    if (!(top_p > 0 && top_p <= 1)) return make_error("top-p must be in (0, 1]");
    if (!(min_p >= 0 && min_p <= 1)) return make_error("min-p must be in [0, 1]");
    if (!std::isfinite(repeat_penalty) || repeat_penalty <= 0) return make_error("repeat penalty must be > 0");
    if (!std::isfinite(frequency_penalty)) return make_error("frequency penalty must be a finite number");
    if (!std::isfinite(presence_penalty)) return make_error("presence penalty must be a finite number");
    if (penalty_last_n < 0) return make_error("penalty window must be >= 0");
    return {};
}

Rng::Rng(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& s : state) s = splitmix64(x);
}

uint64_t Rng::next_u64() {
    const uint64_t result = rotl(state[1] * 5, 7) * 9;
    const uint64_t t = state[1] << 17;
    state[2] ^= state[0];
    state[3] ^= state[1];
    state[1] ^= state[2];
    state[0] ^= state[3];
    state[2] ^= t;
    state[3] = rotl(state[3], 45);
    return result;
}

float Rng::uniform() { return float(next_u64() >> 40) * 0x1.0p-24f; }

Sampler::Sampler(SamplerParams params, int64_t n_vocab) : params_(params), n_vocab_(n_vocab), rng_(params.seed) {}

void Sampler::set_params(const SamplerParams& p) {
    const uint64_t keep[4] = {rng_.state[0], rng_.state[1], rng_.state[2], rng_.state[3]};
    params_ = p;
    std::memcpy(rng_.state, keep, sizeof keep);
    if (int64_t(history_.size()) > params_.penalty_last_n)
        history_.erase(history_.begin(), history_.end() - params_.penalty_last_n);
}

void Sampler::accept(TokenId id) {
    if (params_.penalty_last_n <= 0) return;
    history_.push_back(id);
    if (int64_t(history_.size()) > params_.penalty_last_n) history_.erase(history_.begin());
}

void Sampler::accept(std::span<const TokenId> ids) {
    for (TokenId id : ids) accept(id);
}

TokenId Sampler::sample(std::span<const float> logits) {
    const int64_t n = std::min<int64_t>(n_vocab_, int64_t(logits.size()));
    if (n <= 0) return kNoToken;
    work_.assign(logits.begin(), logits.begin() + n);
    float* l = work_.data();
    // 1. penalties
    const SamplerParams& P = params_;
    if (!history_.empty() && (P.repeat_penalty != 1.0f || P.frequency_penalty != 0.0f || P.presence_penalty != 0.0f)) {
        idx_.assign(history_.begin(), history_.end());
        std::sort(idx_.begin(), idx_.end());
        for (size_t i = 0; i < idx_.size();) {
            size_t j = i;
            while (j < idx_.size() && idx_[j] == idx_[i]) ++j;
            const TokenId id = idx_[i];
            const float c = float(j - i);
            i = j;
            if (id < 0 || id >= n) continue;
            float v = l[id];
            if (P.repeat_penalty != 1.0f) v = v > 0 ? num::div_rn(v, P.repeat_penalty) : num::mul_rn(v, P.repeat_penalty);
            v = num::sub_rn(v, num::add_rn(num::mul_rn(c, P.frequency_penalty), P.presence_penalty));
            l[id] = v;
        }
    }
    // 2. greedy
    auto better = [l](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); };
    if (P.temperature <= 0.0f) {
        int32_t best = 0;
        for (int32_t i = 1; i < int32_t(n); ++i)
            if (better(i, best)) best = i;
        return best;
    }
    // 3. sort, top-k
    idx_.resize(size_t(n));
    for (int32_t i = 0; i < int32_t(n); ++i) idx_[size_t(i)] = i;
    int64_t m = n;
    if (P.top_k > 0 && P.top_k < n) {
        m = P.top_k;
        std::partial_sort(idx_.begin(), idx_.begin() + m, idx_.end(), better);
    } else {
        std::sort(idx_.begin(), idx_.end(), better);
    }
    const float l0 = l[idx_[0]];
    // 4. top-p
    if (P.top_p < 1.0f) {
        float s = 0.0f;
        for (int64_t i = 0; i < m; ++i) s = num::add_rn(s, num::exp_f(num::sub_rn(l[idx_[size_t(i)]], l0)));
        const float target = num::mul_rn(P.top_p, s);
        float run = 0.0f;
        int64_t keep = m;
        for (int64_t i = 0; i < m; ++i) {
            run = num::add_rn(run, num::exp_f(num::sub_rn(l[idx_[size_t(i)]], l0)));
            if (run >= target) {
                keep = i + 1;
                break;
            }
        }
        m = keep;
    }
    // 5. min-p
    if (P.min_p > 0.0f) {
        int64_t keep = 1;
        while (keep < m && num::exp_f(num::sub_rn(l[idx_[size_t(keep)]], l0)) >= P.min_p) ++keep;
        m = keep;
    }
    // 6. temperature, 7. draw
    float s = 0.0f;
    for (int64_t i = 0; i < m; ++i) {
        const float li = num::div_rn(l[idx_[size_t(i)]], P.temperature);
        l[idx_[size_t(i)]] = li;
    }
    const float t0 = l[idx_[0]];
    for (int64_t i = 0; i < m; ++i) s = num::add_rn(s, num::exp_f(num::sub_rn(l[idx_[size_t(i)]], t0)));
    const float u = num::mul_rn(rng_.uniform(), s);
    float run = 0.0f;
    for (int64_t i = 0; i < m; ++i) {
        run = num::add_rn(run, num::exp_f(num::sub_rn(l[idx_[size_t(i)]], t0)));
        if (run > u) return idx_[size_t(i)];
    }
    return idx_[size_t(m - 1)];
}

std::string Sampler::serialize() const {
    Writer w;
    w.u32(kMagic);
    w.u32(kVersion);
    w.f32(params_.temperature);
    w.u32(uint32_t(params_.top_k));
    w.f32(params_.top_p);
    w.f32(params_.min_p);
    w.f32(params_.repeat_penalty);
    w.f32(params_.frequency_penalty);
    w.f32(params_.presence_penalty);
    w.u32(uint32_t(params_.penalty_last_n));
    w.u64(params_.seed);
    w.u64(uint64_t(n_vocab_));
    for (uint64_t s : rng_.state) w.u64(s);
    w.u32(uint32_t(history_.size()));
    for (TokenId id : history_) w.u32(uint32_t(id));
    return w.out;
}

Result<Sampler> Sampler::deserialize(std::string_view bytes) {
    Reader r{bytes};
    if (r.u32() != kMagic || !r.ok) return make_error("sampler state: bad magic (not a sampler state)");
    const uint32_t version = r.u32();
    if (version != kVersion)
        return make_error("sampler state: version " + std::to_string(version) + " is not supported (expected " +
                          std::to_string(kVersion) + ")");
    SamplerParams p;
    p.temperature = r.f32();
    p.top_k = int32_t(r.u32());
    p.top_p = r.f32();
    p.min_p = r.f32();
    p.repeat_penalty = r.f32();
    p.frequency_penalty = r.f32();
    p.presence_penalty = r.f32();
    p.penalty_last_n = int32_t(r.u32());
    p.seed = r.u64();
    const int64_t n_vocab = int64_t(r.u64());
    uint64_t st[4];
    for (uint64_t& s : st) s = r.u64();
    const uint32_t n_hist = r.u32();
    if (!r.ok) return make_error("sampler state: truncated at byte " + std::to_string(bytes.size()));
    if (auto v = p.validate(); !v) return make_error("sampler state: " + v.message());
    if (n_vocab <= 0 || n_vocab > (int64_t(1) << 31)) return make_error("sampler state: bad vocabulary size");
    if (int64_t(n_hist) > p.penalty_last_n || size_t(n_hist) * 4 != bytes.size() - r.pos)
        return make_error("sampler state: history length " + std::to_string(n_hist) + " does not match the data");
    Sampler s(p, n_vocab);
    std::memcpy(s.rng_.state, st, sizeof st);
    for (uint32_t i = 0; i < n_hist; ++i) s.history_.push_back(TokenId(r.u32()));
    return s;
}

bool Sampler::operator==(const Sampler& o) const {
    return serialize() == o.serialize();
}

}  // namespace arbor
