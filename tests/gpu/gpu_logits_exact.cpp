// GPU-vs-CPU logits exactness (issue #10): backend A's logits equal backend B's bit for bit, for
// every model of the model folders and every synthetic architecture, over batch compositions
// of 1, 4 and 8 sequences, prefill in one pass and in many (max_batch_tokens 256, 7, 1, and
// caller-side chunks), contexts across the 256-cell page boundary, park and wake between the
// backends, and KV f16 and f32 (logits_exact_cases.hpp lists the cases).
//
//   gpu_logits_exact [--a SPEC] [--b SPEC] [--models DIR]... [--cli PATH] [--quick | --exhaustive]
//                    [--only TEXT] [--skip TEXT]... [--plant-difference]
//
// SPEC: name[:threads=N,scalar=0|1] (A default "gpu", B default "cpu"). --models: folders of
// GGUF files (default $ARBOR_SHARED_DATA/quant and $ARBOR_SHARED_DATA/models). --cli: the
// arbor-cli that synthesizes the other architectures (default $ARBOR_CLI).
// Plans (logits_exact_plans.cpp): by default one model per architecture runs every case and
// the other models the weight-type plan; --exhaustive runs every case on every model; --quick
// is CI's subset. --only / --skip: models whose label contains / does not contain TEXT (labels:
// file names without .gguf, synth-ARCH-TYPE). --plant-difference: a test of the
// suite, one bit of A's logits flipped in every case, so every case must fail.
// Prints "ok MODEL CASE (S s)" or "FAIL MODEL CASE: why (S s)" per case and "N cases, M failed".
// Exit: 0 all equal, 1 a case failed, 2 setup error (usage, missing or unloadable model files,
// a backend that cannot be made for the first model).
#include "logits_exact_cases.hpp"
#include "logits_exact_models.hpp"

#include <arbor/synth.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace arbor;
using namespace arbor::exact;

namespace {

struct Args {
    std::string a = "gpu", b = "cpu";
    std::vector<std::string> dirs;
    std::string cli;
    bool quick = false;
    bool plant = false;
    bool exhaustive = false;
    std::string only;
    std::vector<std::string> skip;
};

constexpr const char* kUsage =
    "usage: gpu_logits_exact [--a SPEC] [--b SPEC] [--models DIR]... [--cli PATH] [--quick | --exhaustive]\n"
    "                        [--only TEXT] [--skip TEXT]... [--plant-difference]\n"
    "  SPEC: name[:threads=N,scalar=0|1], e.g. gpu, cpu, cpu:threads=1, cpu:threads=2,scalar=1\n";

int setup_error(const std::string& msg) {
    std::printf("error: %s\n", msg.c_str());
    return 2;
}

bool parse_args(int argc, char** argv, Args& out, std::string& err) {
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        auto value = [&](std::string& v) {
            if (i + 1 >= argc) return err = k + " needs a value", false;
            v = argv[++i];
            return true;
        };
        std::string d;
        if (k == "--a") {
            if (!value(out.a)) return false;
        } else if (k == "--b") {
            if (!value(out.b)) return false;
        } else if (k == "--models") {
            if (!value(d)) return false;
            out.dirs.push_back(d);
        } else if (k == "--cli") {
            if (!value(out.cli)) return false;
        } else if (k == "--only") {
            if (!value(out.only)) return false;
        } else if (k == "--skip") {
            if (!value(d)) return false;
            out.skip.push_back(d);
        } else if (k == "--quick") {
            out.quick = true;
        } else if (k == "--exhaustive") {
            out.exhaustive = true;
        } else if (k == "--plant-difference") {
            out.plant = true;
        } else {
            return err = "unknown argument '" + k + "'", false;
        }
    }
    return true;
}

std::string shared_data() {
    if (const char* s = std::getenv("ARBOR_SHARED_DATA"); s && *s) return s;
#ifdef ARBOR_TEST_DEFAULT_SHARED
    return ARBOR_TEST_DEFAULT_SHARED;
#else
    return {};
#endif
}

// Synthetic models: the suite's list, plus the default mix of any architecture synth offers
// that the list does not name, as that architecture's deep model (a new architecture is
// covered as soon as synth knows it).
std::vector<SynthModel> all_synth_models(bool quick) {
    std::vector<SynthModel> v = synth_models(quick);
    if (quick) return v;
    for (const std::string& arch : synth_architectures()) {
        bool named = false;
        for (const SynthModel& m : v) named = named || m.arch == arch;
        if (!named) v.push_back({arch, "", true});
    }
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    const auto t0 = std::chrono::steady_clock::now();
    Args args;
    std::string err;
    if (!parse_args(argc, argv, args, err)) {
        std::fputs(kUsage, stdout);
        return setup_error(err);
    }
    auto spec_a = parse_backend_spec(args.a);
    if (!spec_a) return setup_error(spec_a.message());
    auto spec_b = parse_backend_spec(args.b);
    if (!spec_b) return setup_error(spec_b.message());
    if (args.dirs.empty()) {
        const std::string sd = shared_data();
        if (sd.empty()) return setup_error("no model folders: pass --models DIR or set ARBOR_SHARED_DATA");
        args.dirs = {sd + "/quant", sd + "/models"};
    }
    std::vector<std::string> missing;
    std::vector<ModelFile> models = find_model_files(args.dirs, args.quick, &missing);
    if (!missing.empty()) {
        std::string m, d;
        for (const auto& x : missing) m += (m.empty() ? "" : ", ") + x;
        for (const auto& x : args.dirs) d += (d.empty() ? "" : ", ") + x;
        return setup_error("missing model files (looked in " + d + "): " + m);
    }
    if (args.cli.empty())
        if (const char* c = std::getenv("ARBOR_CLI")) args.cli = c;
    if (args.cli.empty()) return setup_error("no arbor-cli to synthesize models with: pass --cli PATH or set ARBOR_CLI");
    if (access(args.cli.c_str(), X_OK) != 0) return setup_error("--cli " + args.cli + " is not an executable file");

    char tmpl[] = "/tmp/arbor-logits-exact-XXXXXX";
    if (!mkdtemp(tmpl)) return setup_error(std::string("cannot make a temporary folder: ") + std::strerror(errno));
    const std::string tmp = tmpl;
    struct Cleanup {
        std::string dir;
        ~Cleanup() {
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    } cleanup{tmp};
    auto wanted = [&](const std::string& label) {
        if (!args.only.empty() && label.find(args.only) == std::string::npos) return false;
        for (const std::string& x : args.skip)
            if (label.find(x) != std::string::npos) return false;
        return true;
    };
    for (const SynthModel& sm : all_synth_models(args.quick)) {
        if (!wanted(sm.label())) continue;
        auto f = synthesize_with_cli(args.cli, sm, tmp);
        if (!f) return setup_error(f.message());
        models.push_back(*f);
    }
    std::erase_if(models, [&](const ModelFile& f) { return !wanted(f.label); });
    if (models.empty()) return setup_error("no model left after --only / --skip");

    std::printf("gpu_logits_exact: A %s, B %s, %zu models, %s suite\n", spec_a->text.c_str(), spec_b->text.c_str(),
                models.size(), args.quick ? "quick" : "full");
    std::fflush(stdout);
    Reporter rep;
    if (auto why = self_check(); why.empty()) rep.ok("harness", "compare");
    else rep.fail("harness", "compare", why);
    bool first = true;
    for (const ModelFile& mf : models) {
        auto model = Model::load(mf.path);
        if (!model) return setup_error("cannot load " + mf.label + ": " + model.message());
        BackendPool a(*spec_a, *model), b(*spec_b, *model);
        if (first) {
            // A backend that cannot be made at all (no GPU, a bad spec) is a setup error.
            auto ba = a.get(256);
            if (!ba) return setup_error("backend A: " + ba.message());
            auto bb = b.get(256);
            if (!bb) return setup_error("backend B: " + bb.message());
            std::printf("A: %s\nB: %s\n", (*ba)->device().c_str(), (*bb)->device().c_str());
            first = false;
        }
        CasePlan plan = args.quick                   ? quick_plan(mf.label == "stories260K")
                        : args.exhaustive || mf.deep ? full_plan()
                                                     : type_plan();
        plan.plant_difference = args.plant;
        run_model_cases(mf.label, *model, a, b, plan, tmp, rep);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%d cases, %d failed (%.1f s)\n", rep.cases(), rep.failed(), secs);
    return rep.failed() ? 1 : 0;
}
