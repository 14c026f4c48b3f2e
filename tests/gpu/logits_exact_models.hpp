// The models of the logits exactness suite: the GGUF files of the model folders (llama.cpp's
// quantizations of the random qwen3 / qwen3moe models, stories260K) and synthetic models that
// `arbor-cli synth` writes at run time for the architectures and types no file covers.
#pragma once

#include <arbor/result.hpp>

#include <string>
#include <vector>

namespace arbor::exact {

struct ModelFile {
    std::string label;  // the file name without .gguf, or "synth-<arch>-<type>"
    std::string path;
    bool deep = false;  // one per architecture: runs the full plan (logits_exact_cases.hpp)
};

// The files the suite must find (file names): the full suite needs every architecture and
// quant type of issue #10; --quick a few that cover dense, MoE and llama.
std::vector<std::string> required_model_files(bool quick);

// Full: every *.gguf in the folders (sorted by name, the first folder that has a name wins),
// the deep ones marked (stories260K for llama, random-qwen3-Q4_K_M, random-qwen3moe-Q4_K_M);
// quick: the required ones only. Files of required_model_files that none of the folders holds
// go to `missing`.
std::vector<ModelFile> find_model_files(const std::vector<std::string>& dirs, bool quick, std::vector<std::string>* missing);

struct SynthModel {
    std::string arch;
    std::string type;  // "" : the shape's default mix (Q4_K with Q6_K, or IQ4_XS experts)
    bool deep = false;
    std::string shape = "tiny";
    std::string label() const;  // synth-ARCH[-SHAPE unless tiny]-TYPE
};
std::vector<SynthModel> synth_models(bool quick);

// Runs `cli synth --arch A --shape S [--type T] --seed 7 -o dir/label.gguf`.
Result<ModelFile> synthesize_with_cli(const std::string& cli, const SynthModel& m, const std::string& dir);

}  // namespace arbor::exact
