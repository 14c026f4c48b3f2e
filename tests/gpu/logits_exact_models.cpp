// Model files and synthetic models for the logits exactness suite.
#include "logits_exact_models.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace arbor::exact {

std::vector<std::string> required_model_files(bool quick) {
    if (quick) return {"stories260K.gguf", "random-qwen3-Q4_K_M.gguf", "random-qwen3moe-MXFP4_MOE.gguf"};
    std::vector<std::string> v{"stories260K.gguf", "random-qwen3moe-MXFP4_MOE.gguf"};
    for (const char* arch : {"qwen3", "qwen3moe"})
        for (const char* t : {"bf16", "Q4_0", "Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0", "IQ4_NL", "IQ4_XS"})
            v.push_back(std::string("random-") + arch + "-" + t + ".gguf");
    return v;
}

namespace {

bool deep_file(const std::string& name) {
    return name == "stories260K.gguf" || name == "random-qwen3-Q4_K_M.gguf" || name == "random-qwen3moe-Q4_K_M.gguf";
}

}  // namespace

std::vector<ModelFile> find_model_files(const std::vector<std::string>& dirs, bool quick, std::vector<std::string>* missing) {
    std::vector<ModelFile> found;
    std::set<std::string> names;
    for (const std::string& dir : dirs) {
        DIR* dp = opendir(dir.c_str());
        if (!dp) continue;
        std::vector<std::string> here;
        while (const dirent* e = readdir(dp)) {
            const std::string n = e->d_name;
            if (n.size() > 5 && n.compare(n.size() - 5, 5, ".gguf") == 0) here.push_back(n);
        }
        closedir(dp);
        std::sort(here.begin(), here.end());
        for (const std::string& n : here)
            if (names.insert(n).second) found.push_back({n.substr(0, n.size() - 5), dir + "/" + n, deep_file(n)});
    }
    const std::vector<std::string> req = required_model_files(quick);
    for (const std::string& r : req)
        if (!names.count(r)) missing->push_back(r);
    if (quick)
        found.erase(std::remove_if(found.begin(), found.end(),
                                   [&](const ModelFile& f) {
                                       return std::find(req.begin(), req.end(), f.label + ".gguf") == req.end();
                                   }),
                    found.end());
    std::sort(found.begin(), found.end(), [](const ModelFile& x, const ModelFile& y) { return x.label < y.label; });
    return found;
}

std::string SynthModel::label() const {
    return "synth-" + arch + (shape == "tiny" ? "" : "-" + shape) + "-" + (type.empty() ? "mix" : type);
}

std::vector<SynthModel> synth_models(bool quick) {
    // qwen2: Q/K/V biases; llama at the synthetic shape (vocab 1024, NORMAL RoPE); qwen3 with F32
    // weights; the MoE release mix (IQ4_XS experts, Q4_K embeddings, Q6_K head).
    // qwen2's default mix is its architecture's deep model. flashnext: tiny's mix is the deep
    // model; tiny-k4 (a one-block budget) adds attention that skips whole chunks. qwen3moe tiny-k3
    // routes three experts a token (an odd slot count). qwen3 tiny-hd128 has 128-dim heads, as the
    // real models do (the attention's paths for them: ARBOR_MK_O_FIXED's, on by default on
    // NVIDIA, and ARBOR_MK_SCORE_UNROLL's).
    if (quick) return {{"qwen2", "", true}};
    return {{"llama", ""}, {"llama", "F16"}, {"qwen2", "", true}, {"qwen2", "Q8_0"}, {"qwen2", "BF16"},
            {"qwen3", "F32"}, {"qwen3", "", false, "tiny-hd128"}, {"qwen3moe", ""}, {"qwen3moe", "", false, "tiny-k3"}, {"flashnext", "", true}, {"flashnext", "", false, "tiny-k4"}};
}

Result<ModelFile> synthesize_with_cli(const std::string& cli, const SynthModel& m, const std::string& dir) {
    const std::string out = dir + "/" + m.label() + ".gguf";
    std::vector<std::string> args{cli, "synth", "--arch", m.arch, "--shape", m.shape, "--seed", "7", "-o", out};
    if (!m.type.empty()) args.insert(args.end() - 2, {"--type", m.type});
    std::string cmd;
    for (const auto& a : args) cmd += (cmd.empty() ? "" : " ") + a;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) return make_error("fork for '" + cmd + "': " + std::strerror(errno));
    if (pid == 0) {
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return make_error("waitpid for '" + cmd + "': " + std::strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return make_error("'" + cmd + "' failed (" +
                          (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                             : "signal " + std::to_string(WTERMSIG(status))) +
                          (WIFEXITED(status) && WEXITSTATUS(status) == 127 ? ": cannot run the CLI" : "") + ")");
    return ModelFile{m.label(), out, m.deep};
}

}  // namespace arbor::exact
