// arbor-cli detokenize -m MODEL.gguf ID... [--no-special]
// Prints the text of the token ids, exactly, with no newline added. Special tokens print as
// their text unless --no-special is given. Ids may also come as one argument ("1 2 3").
#include "cli.hpp"

#include <arbor/gguf.hpp>
#include <arbor/tokenizer.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace arbor::cli {
namespace {

std::vector<TokenId> parse_ids(const std::vector<std::string>& words, size_t n_vocab) {
    std::vector<TokenId> ids;
    for (const std::string& w : words) {
        size_t pos = 0;
        while (pos < w.size()) {
            if (w[pos] == ' ' || w[pos] == ',' || w[pos] == '\t' || w[pos] == '\n') {
                ++pos;
                continue;
            }
            size_t end = pos;
            while (end < w.size() && w[end] != ' ' && w[end] != ',' && w[end] != '\t' && w[end] != '\n') ++end;
            const std::string item = w.substr(pos, end - pos);
            errno = 0;
            char* stop = nullptr;
            const long long v = std::strtoll(item.c_str(), &stop, 10);
            if (*stop != '\0' || errno != 0) throw InputError("'" + item + "' is not a token id");
            if (v < 0 || static_cast<unsigned long long>(v) >= n_vocab) {
                throw InputError("token id " + item + " is out of range (the vocabulary has " +
                                 std::to_string(n_vocab) + " tokens)");
            }
            ids.push_back(static_cast<TokenId>(v));
            pos = end;
        }
    }
    return ids;
}

int run_detokenize(std::vector<std::string> argv) {
    Args args(std::move(argv));
    const auto model = args.value("-m", "--model");
    const bool no_special = args.flag("--no-special");
    const auto words = args.positionals();
    args.finish();
    if (!model) throw UsageError("-m MODEL.gguf is required");

    auto gguf = GgufFile::open(*model);
    if (!gguf) throw InputError(gguf.message());
    auto tok = Tokenizer::from_gguf(**gguf);
    if (!tok) throw InputError(tok.message());
    for (const std::string& w : tok->warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());

    const auto ids = parse_ids(words, tok->n_tokens());
    DetokenizeOptions opts;
    opts.render_special = !no_special;
    write_stdout(tok->detokenize(ids, opts));
    return 0;
}

const Command kDetokenize("detokenize", "print the text of token ids", "-m MODEL.gguf ID... [--no-special]",
                          run_detokenize);

}  // namespace
}  // namespace arbor::cli
