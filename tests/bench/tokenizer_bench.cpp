// Tokenizer speed: MB/s tokenizing English text on one core.
//
//   tokenizer_bench VOCAB.gguf [TEXT_FILE] [MB]
//
// Without TEXT_FILE the text is generated: English-like prose (a fixed word list with
// punctuation, numbers and newlines, from a fixed seed), repeated up to MB megabytes (10).
// Prints tokens, seconds and MB/s for the best of three runs, by wall clock and by the thread's
// CPU time (which is what one core delivers when the machine is shared).
#include <arbor/gguf.hpp>
#include <arbor/tokenizer.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <time.h>

namespace {

std::string english(size_t bytes) {
    static const char* kWords[] = {
        "the", "of", "and", "to", "in", "a", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on",
        "not", "he", "I", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they",
        "you", "were", "their", "one", "all", "we", "can", "her", "has", "there", "been", "if", "more", "when",
        "will", "would", "who", "so", "no", "tokenizer", "language", "model", "running", "quickly", "between",
        "government", "people", "through", "should", "because", "however", "children", "important", "different",
        "following", "something", "understand", "information", "development", "It's", "don't", "we're", "London",
        "Monday", "December", "Professor", "Arbor", "engine", "probability", "distribution", "experiment"};
    std::mt19937 rng(12345);
    std::string s;
    s.reserve(bytes + 64);
    size_t sentence = 0;
    while (s.size() < bytes) {
        const char* w = kWords[rng() % (sizeof kWords / sizeof *kWords)];
        std::string word = w;
        if (sentence == 0) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
        s += word;
        ++sentence;
        const unsigned r = rng() % 100;
        if (r < 3) {
            s += ' ';
            s += std::to_string(rng() % 10000);
        }
        if (sentence > 6 && r < 12) {
            s += r < 9 ? ". " : (r < 11 ? "? " : ".\n\n");
            sentence = 0;
        } else if (r < 20) {
            s += ", ";
        } else {
            s += ' ';
        }
    }
    s.resize(bytes);
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: tokenizer_bench VOCAB.gguf [TEXT_FILE] [MB]\n");
        return 1;
    }
    auto g = arbor::GgufFile::open(argv[1]);
    if (!g) {
        std::fprintf(stderr, "error: %s\n", g.message().c_str());
        return 1;
    }
    auto tok = arbor::Tokenizer::from_gguf(**g);
    if (!tok) {
        std::fprintf(stderr, "error: %s\n", tok.message().c_str());
        return 1;
    }
    const size_t bytes = static_cast<size_t>((argc > 3 ? std::atof(argv[3]) : 10.0) * 1e6);
    std::string text;
    if (argc > 2 && std::string(argv[2]) != "-") {
        std::ifstream f(argv[2], std::ios::binary);
        std::ostringstream ss;
        ss << f.rdbuf();
        const std::string src = ss.str();
        if (src.empty()) {
            std::fprintf(stderr, "error: %s is empty or unreadable\n", argv[2]);
            return 1;
        }
        while (text.size() < bytes) text += src;
        text.resize(bytes);
    } else {
        text = english(bytes);
    }
    auto cpu_now = [] {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
    };
    double best = 1e30, best_cpu = 1e30;
    size_t n = 0;
    for (int run = 0; run < 3; ++run) {
        const double c0 = cpu_now();
        const auto t0 = std::chrono::steady_clock::now();
        const auto ids = tok->tokenize(text);
        const auto t1 = std::chrono::steady_clock::now();
        const double c1 = cpu_now();
        n = ids.size();
        best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
        best_cpu = std::min(best_cpu, c1 - c0);
    }
    const double mb = static_cast<double>(text.size()) / 1e6;
    std::printf("%s: %zu bytes -> %zu tokens; wall %.3f s = %.1f MB/s; thread CPU %.3f s = %.1f MB/s\n", argv[1],
                text.size(), n, best, mb / best, best_cpu, mb / best_cpu);
    return 0;
}
