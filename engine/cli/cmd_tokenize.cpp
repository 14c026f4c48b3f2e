// arbor-cli tokenize -m VOCAB_OR_MODEL.gguf (-f FILE | -p TEXT) [--special] [--bos]
// Prints the token ids of the text, separated by single spaces, with one newline at the end
// (an empty text prints an empty line). -f is read byte for byte; -p is taken literally.
// --special turns special-token text into those tokens; --bos puts the model's BOS first.
#include "cli.hpp"

#include <arbor/gguf.hpp>
#include <arbor/tokenizer.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace arbor::cli {
namespace {

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
    std::ostringstream ss;
    ss << f.rdbuf();
    if (f.bad()) throw RuntimeFailure("cannot read '" + path + "'");
    return ss.str();
}

int run_tokenize(std::vector<std::string> argv) {
    Args args(std::move(argv));
    // Values first: a prompt may itself look like a flag.
    const auto prompt = args.value("-p", "--prompt");
    const auto file = args.value("-f", "--file");
    const auto model = args.value("-m", "--model");
    const bool special = args.flag("--special");
    const bool bos = args.flag("--bos");
    args.finish();
    if (!model) throw UsageError("-m MODEL.gguf is required");
    if (prompt.has_value() == file.has_value()) throw UsageError("give exactly one of -f FILE or -p TEXT");

    auto gguf = GgufFile::open(*model);
    if (!gguf) throw InputError(gguf.message());
    auto tok = Tokenizer::from_gguf(**gguf);
    if (!tok) throw InputError(tok.message());
    for (const std::string& w : tok->warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());

    const std::string text = prompt ? *prompt : read_file(*file);
    TokenizeOptions opts;
    opts.parse_special = special;
    std::vector<TokenId> ids;
    if (bos) {
        if (tok->bos() == kNoToken) throw InputError(*model + ": the model has no BOS token");
        ids.push_back(tok->bos());
    }
    const auto body = tok->tokenize(text, opts);
    ids.insert(ids.end(), body.begin(), body.end());

    std::string out;
    out.reserve(ids.size() * 7 + 1);
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) out.push_back(' ');
        out += std::to_string(ids[i]);
    }
    out.push_back('\n');
    write_stdout(out);
    return 0;
}

const Command kTokenize("tokenize", "print the token ids of a text",
                        "-m VOCAB_OR_MODEL.gguf (-f FILE | -p TEXT) [--special] [--bos]", run_tokenize);

}  // namespace
}  // namespace arbor::cli
