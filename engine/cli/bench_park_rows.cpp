// The park@D, wake@D and reprefill@D repetitions of `arbor-cli bench` (see bench_runner.hpp):
// the engine's own park file writer and reader (arbor/park.hpp, what Session::park and
// Session::wake call) on sequences of the backend's KV cache, and the re-prefill they save.
#include "bench_runner.hpp"

#include <arbor/sampling.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace arbor::cli::bench {
namespace {

Result<uint64_t> file_size(const std::string& path) {
    struct stat sb {};
    if (::stat(path.c_str(), &sb) != 0) return make_error(path + ": cannot stat: " + std::strerror(errno));
    return uint64_t(sb.st_size);
}

std::string bits_of(float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    char b[48];
    std::snprintf(b, sizeof b, "%.9g (0x%08x)", double(v), u);
    return b;
}

}  // namespace

ParkContents BenchRunner::park_contents(std::vector<TokenId> tokens) const {
    const int64_t n_vocab = backend_.model().config().n_vocab;
    ParkContents c;
    c.tokens = std::move(tokens);
    Sampler sampler(SamplerParams{}, n_vocab);
    sampler.accept(c.tokens);
    c.sampler_state = sampler.serialize();
    c.logits.assign(size_t(n_vocab), 0.0f);
    return c;
}

Status BenchRunner::save_contexts() {
    for (size_t k = 0; k < contexts_.size(); ++k) {
        const std::string path =
            save_dir_ + "/arbor-bench-c" + std::to_string(k + 1) + "-" + std::to_string(depth_[k]) + ".park";
        if (auto s = write_park_file(path, backend_.model(), *contexts_[k], park_contents(ids_[k])); !s)
            return make_error("saving context " + std::to_string(k + 1) + ": " + s.message());
        saved_.push_back(path);
    }
    return {};
}

Status BenchRunner::prepare_park_files() {
    const Model& model = backend_.model();
    slot_.assign(runs_.size(), 0);
    for (size_t i = 0; i < runs_.size(); ++i) {
        const RowSpec& r = runs_[i].spec;
        if (r.kind != RowKind::Park && r.kind != RowKind::Wake) continue;
        auto same = std::find_if(park_files_.begin(), park_files_.end(), [&](const ParkSlot& f) { return f.depth == r.depth; });
        if (same == park_files_.end()) {
            ParkSlot f;
            f.depth = r.depth;
            f.path = park_dir_ + "/arbor-bench-" + (keep_park_ ? std::string() : std::to_string(::getpid()) + "-") +
                     std::to_string(r.depth) + ".park";
            f.contents = park_contents({ids_[0].begin(), ids_[0].begin() + std::ptrdiff_t(r.depth)});
            park_files_.push_back(std::move(f));  // before writing: the destructor removes it
            const ParkSlot& made = park_files_.back();
            const auto fork = contexts_[0]->fork(r.depth);
            if (auto s = write_park_file(made.path, model, *fork, made.contents); !s)
                return make_error("writing the park file of " + r.name + ": " + s.message());
            same = park_files_.end() - 1;
        }
        slot_[i] = size_t(same - park_files_.begin());
        auto bytes = file_size(same->path);
        if (!bytes) return bytes.error();
        runs_[i].file_bytes = bytes.value();
    }
    return {};
}

std::vector<std::string> BenchRunner::park_paths() const {
    std::vector<std::string> p;
    for (const ParkSlot& f : park_files_) p.push_back(f.path);
    return p;
}

void BenchRunner::remove_park_files() {
    for (const ParkSlot& f : park_files_) (void)std::remove(f.path.c_str());
    park_files_.clear();
}

Status BenchRunner::park_rep(size_t i, RepSample& rep) {
    const RowSpec& r = runs_[i].spec;
    const ParkSlot& f = park_files_[slot_[i]];
    rep.begin_ns = now_ns();
    const Status s = write_park_file(f.path, backend_.model(), *seqs_[i][0], f.contents);
    rep.end_ns = now_ns();
    if (!s) return make_error("row " + r.name + ": " + s.message());
    auto bytes = file_size(f.path);
    if (!bytes) return make_error("row " + r.name + ": " + bytes.message());
    runs_[i].file_bytes = bytes.value();
    return {};
}

Result<ParkRead> BenchRunner::restore(const std::string& path, KvSequence& seq, int64_t depth) {
    auto read = read_park_file(path, backend_.model(), cache_->layout().type, seq);
    if (!read) return read.error();
    const ParkRead& got = read.value();
    if (int64_t(got.contents.tokens.size()) != depth)
        return make_error("it holds " + std::to_string(got.contents.tokens.size()) + " cells, not the " +
                          std::to_string(depth) + " this run needs");
    // A wake that would fall back to re-prefilling is a failure here: the bench measures restoring.
    if (!got.cells_restored) return make_error("its cells were not restored (" + got.problem + ")");
    if (got.cells != depth || seq.size() != depth)
        return make_error("the wake restored " + std::to_string(got.cells) + " cells into a sequence of " +
                          std::to_string(seq.size()) + ", not " + std::to_string(depth));
    return read;
}

Status BenchRunner::wake_rep(size_t i, RepSample& rep) {
    const RowSpec& r = runs_[i].spec;
    std::unique_ptr<KvSequence>& seq = seqs_[i][0];
    seq.reset();  // the last repetition's pages go back first
    seq = std::make_unique<KvSequence>(cache_, capacity_);
    rep.begin_ns = now_ns();
    auto read = restore(park_files_[slot_[i]].path, *seq, r.depth);
    rep.end_ns = now_ns();
    if (!read) return make_error("row " + r.name + ": the park file: " + read.message());
    return {};
}

Status BenchRunner::reprefill_rep(size_t i, RepSample& rep) {
    const RowSpec& r = runs_[i].spec;
    std::unique_ptr<KvSequence>& seq = seqs_[i][0];
    seq.reset();
    seq = std::make_unique<KvSequence>(cache_, capacity_);
    rep.begin_ns = now_ns();
    const Status s = prefill(*seq, std::span<const TokenId>(ids_[0].data(), size_t(r.depth)), true);
    rep.end_ns = now_ns();
    if (!s) return make_error("row " + r.name + " " + s.message());
    if (out_.size() != 1) return make_error("row " + r.name + ": the last pass returned no logits");
    return {};
}

Status BenchRunner::check_wake(size_t i) {
    const RowSpec& r = runs_[i].spec;
    const int64_t n_vocab = backend_.model().config().n_vocab;
    const TokenId tok = tokens_[i][0][0];
    auto step = [&](KvSequence& seq, double& ms) -> Status {
        BatchEntry e{&seq, std::span<const TokenId>(&tok, 1), LogitsMode::Last};
        const int64_t t0 = now_ns();
        const Status s = backend_.eval(std::span<const BatchEntry>(&e, 1), &out_);
        ms = double(now_ns() - t0) / 1e6;
        if (s && out_.size() != 1) return make_error("the backend returned no logits");
        return s;
    };
    WakeCheck c;
    c.reference = context_files_.empty() ? std::string() : context_files_[0];
    c.restored_cells = seqs_[i][0]->size();
    c.recomputed_cells = 0;  // read_park_file evaluates nothing (the row's passes_per_rep shows 0)
    const auto never = contexts_[0]->fork(r.depth);
    if (auto s = step(*never, c.first_step_ms_never_parked); !s)
        return make_error("row " + r.name + ": the never-parked context's step: " + s.message());
    const std::vector<float> want(out_.row(0), out_.row(0) + n_vocab);
    if (auto s = step(*seqs_[i][0], c.first_step_ms); !s)
        return make_error("row " + r.name + ": the woken context's step: " + s.message());
    const float* got = out_.row(0);
    c.logits_identical = std::memcmp(got, want.data(), size_t(n_vocab) * sizeof(float)) == 0;
    runs_[i].wake_check = c;
    if (!c.logits_identical) {
        int64_t k = 0;
        while (k < n_vocab && std::memcmp(&got[k], &want[size_t(k)], sizeof(float)) == 0) ++k;
        return make_error("row " + r.name + ": the logits of the step after the wake differ from the never-parked " +
                          "context's, first at token id " + std::to_string(k) + ": " + bits_of(got[k]) + " vs " +
                          bits_of(want[size_t(k)]));
    }
    return {};
}

}  // namespace arbor::cli::bench
