// CPU engine benchmark: prefill and decode speed at several context depths and thread counts,
// and the prefill speed-up of 2 threads over 1 (the issue asks for >= 1.6x).
//
//   cpu_engine_bench [-m MODEL.gguf] [--prompt N] [--decode N] [--depths 0,2048]
//                    [--threads 1,2] [--reps R]
//
// Without -m it writes a qwen3-0.6B-shaped Q4_K model with arbor::synthesize_model to
// $TMPDIR (or /tmp) once and reuses it. Prefill: one pass of N prompt tokens (logits for the
// last one), after `depth` cells already in the context. Decode: N single-token passes after
// the prompt. Context cells for the depth are allocated but not computed (zero K/V): the cost of
// attention depends on how many cells there are, not on their values. Times are the median of
// R repetitions. "busy threads" is process CPU time over wall time during prefill: near the
// thread count when every thread works (on a machine with that many free cores). Also prints the weight bytes read per decoded token and the effective
// bandwidth, and the multiply-accumulates per prefill token and the effective rate.
#include <arbor/backend.hpp>
#include <arbor/kv_cache.hpp>
#include <arbor/model.hpp>
#include <arbor/synth.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <time.h>
#include <vector>

using namespace arbor;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// CPU time of the whole process (all threads), for the "busy threads" column.
double cpu_now() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

std::vector<int> int_list(const char* s) {
    std::vector<int> v;
    std::string t(s);
    size_t at = 0;
    while (at <= t.size()) {
        const size_t comma = t.find(',', at);
        v.push_back(std::atoi(t.substr(at, comma - at).c_str()));
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return v;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Speed {
    double prefill_tok_s, decode_tok_s;
    double prefill_busy;  // CPU seconds per wall second during prefill: ~threads when they all work
};

Speed measure(const std::shared_ptr<const Model>& m, int threads, int depth, int n_prompt, int n_decode, int reps) {
    BackendOptions bo;
    bo.threads = threads;
    bo.max_batch_tokens = std::max(n_prompt, 1);
    auto be = make_cpu_backend(m, bo);
    if (!be) {
        std::fprintf(stderr, "error: %s\n", be.message().c_str());
        std::exit(2);
    }
    const int64_t n_ctx = depth + n_prompt + n_decode + 1;
    auto cache = std::make_shared<KvCache>(m->config(), KvType::F16, n_ctx / kKvPageCells + 2);
    std::vector<TokenId> prompt;
    for (int i = 0; i < n_prompt; ++i) prompt.push_back(TokenId((i * 7919 + 13) % m->config().n_vocab));
    std::vector<double> pre, dec, busy;
    PassLogits out;
    for (int r = 0; r < reps; ++r) {
        KvSequence seq(cache, n_ctx);
        if (depth > 0) {
            if (!seq.prepare_write(0, depth)) std::exit(2);
            seq.set_size(depth);
        }
        BatchEntry e{&seq, prompt, LogitsMode::Last};
        double t0 = now();
        const double c0 = cpu_now();
        if (!be.value()->eval(std::span<const BatchEntry>(&e, 1), &out)) std::exit(2);
        const double wall = now() - t0;
        pre.push_back(double(n_prompt) / wall);
        busy.push_back((cpu_now() - c0) / wall);
        TokenId tok = 1;
        t0 = now();
        for (int i = 0; i < n_decode; ++i) {
            BatchEntry d{&seq, std::span<const TokenId>(&tok, 1), LogitsMode::Last};
            if (!be.value()->eval(std::span<const BatchEntry>(&d, 1), &out)) std::exit(2);
            tok = TokenId((tok * 31 + 7) % m->config().n_vocab);
        }
        dec.push_back(double(n_decode) / (now() - t0));
    }
    return {median(pre), median(dec), median(busy)};
}

}  // namespace

int main(int argc, char** argv) {
    std::string model;
    int n_prompt = 64, n_decode = 32, reps = 3;
    std::vector<int> depths = {0, 2048}, threads = {1, 2};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "error: %s needs a value\n", a.c_str());
                std::exit(1);
            }
            return argv[++i];
        };
        if (a == "-m") model = next();
        else if (a == "--prompt") n_prompt = std::atoi(next());
        else if (a == "--decode") n_decode = std::atoi(next());
        else if (a == "--depths") depths = int_list(next());
        else if (a == "--threads") threads = int_list(next());
        else if (a == "--reps") reps = std::max(1, std::atoi(next()));
        else {
            std::fprintf(stderr, "usage: cpu_engine_bench [-m MODEL.gguf] [--prompt N] [--decode N] "
                                 "[--depths 0,2048] [--threads 1,2] [--reps R]\n");
            return 1;
        }
    }
    if (model.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        model = std::string(tmp && *tmp ? tmp : "/tmp") + "/arbor-bench-qwen3-0.6b-q4k.gguf";
        struct stat st;
        if (stat(model.c_str(), &st) != 0) {
            std::fprintf(stderr, "writing %s (qwen3-0.6b shape, Q4_K)...\n", model.c_str());
            SynthOptions so;
            so.arch = "qwen3";
            so.shape = "qwen3-0.6b";
            so.type = TensorType::Q4_K;
            if (auto s = synthesize_model(so, model); !s) {
                std::fprintf(stderr, "error: %s\n", s.message().c_str());
                return 2;
            }
        }
    }
    auto loaded = Model::load(model);
    if (!loaded) {
        std::fprintf(stderr, "error: %s\n", loaded.message().c_str());
        return 1;
    }
    auto m = loaded.value();
    const ModelConfig& c = m->config();
    // Weight bytes a decode step streams (the embedding row is one row; the LM head all of it),
    // and the multiply-accumulates of one prefill token without the LM head.
    uint64_t bytes = 0, macs = 0;
    for (const auto& t : m->gguf().tensors()) {
        if (t.n_dims < 2 || std::string_view(t.name) == "token_embd.weight") continue;
        bytes += t.nbytes;
        if (std::string_view(t.name) != "output.weight") macs += uint64_t(t.n_elements());
    }
    if (c.tied_embeddings)
        if (const GgufTensor* e = m->gguf().tensor("token_embd.weight")) bytes += e->nbytes;
    if (c.is_moe()) std::printf("note: MoE model; byte and MAC counts assume every expert is read\n");
    std::printf("model %s: %s, %lld layers, n_embd %lld, vocab %lld, weights read per decode step %.1f MiB\n",
                model.c_str(), c.arch_name.c_str(), (long long)c.n_layer, (long long)c.n_embd, (long long)c.n_vocab,
                double(bytes) / (1 << 20));
    std::printf("prompt %d tokens, decode %d tokens, median of %d\n\n", n_prompt, n_decode, reps);
    std::printf("| threads | depth | prefill tok/s | decode tok/s | decode GB/s | prefill GMAC/s | prefill busy threads |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    double pre1 = 0, pre2 = 0;
    for (int d : depths)
        for (int t : threads) {
            const Speed r = measure(m, t, d, n_prompt, n_decode, reps);
            std::printf("| %d | %d | %.1f | %.2f | %.2f | %.2f | %.2f |\n", t, d, r.prefill_tok_s, r.decode_tok_s,
                        r.decode_tok_s * double(bytes) / 1e9, r.prefill_tok_s * double(macs) / 1e9, r.prefill_busy);
            std::fflush(stdout);
            if (d == depths.front() && t == 1) pre1 = r.prefill_tok_s;
            if (d == depths.front() && t == 2) pre2 = r.prefill_tok_s;
        }
    if (pre1 > 0 && pre2 > 0) std::printf("\nprefill speed-up, 2 threads over 1: %.2fx\n", pre2 / pre1);
    return 0;
}
