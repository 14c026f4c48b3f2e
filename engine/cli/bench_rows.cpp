// Parsing of `arbor-cli bench` row names (see bench_rows.hpp).
#include "bench_rows.hpp"

#include <cerrno>
#include <cstdlib>
#include <utility>

namespace arbor::cli::bench {
namespace {

std::vector<std::string_view> split_commas(std::string_view s) {
    std::vector<std::string_view> out;
    size_t at = 0;
    for (;;) {
        const size_t comma = s.find(',', at);
        out.push_back(s.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at));
        if (comma == std::string_view::npos) return out;
        at = comma + 1;
    }
}

// A decimal integer in [lo, hi] spanning all of `s`.
Result<int64_t> parse_count(std::string_view s, int64_t lo, int64_t hi, std::string_view what, std::string_view item) {
    const std::string text(s);
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        return make_error(std::string(what) + " in '" + std::string(item) + "' must be a whole number, got '" + text + "'");
    errno = 0;
    const long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (errno != 0 || v < lo || v > hi)
        return make_error(std::string(what) + " in '" + std::string(item) + "' is " + text + ", outside " +
                          std::to_string(lo) + ".." + std::to_string(hi));
    return int64_t(v);
}

constexpr const char* kRowList =
    "(rows: decode, decode@D, prefillN@D, readN@D, readNxK@D, park@D, wake@D, reprefill@D)";

// Rows of a whole context at depth D, by name.
constexpr std::pair<std::string_view, RowKind> kContextRows[] = {
    {"park", RowKind::Park}, {"wake", RowKind::Wake}, {"reprefill", RowKind::Reprefill}};

}  // namespace

std::vector<int64_t> default_decode_depths() { return {229, 4096, 16384, 31900}; }

std::string default_rows() { return "decode,prefill256@16384,read50@16384,read50x4@16384,read50x8@16384"; }

Result<std::vector<int64_t>> parse_depths(std::string_view list) {
    std::vector<int64_t> out;
    for (std::string_view item : split_commas(list)) {
        auto d = parse_count(item, 0, kMaxDepth, "the depth", item);
        if (!d) return d.error();
        out.push_back(*d);
    }
    return out;
}

Result<std::vector<RowSpec>> parse_rows(std::string_view list, const std::vector<int64_t>& decode_depths,
                                        bool* used_depths) {
    std::vector<RowSpec> out;
    auto add = [&](RowSpec r) -> Status {
        for (const RowSpec& o : out)
            if (o.name == r.name) return make_error("row " + r.name + " is listed twice");
        out.push_back(std::move(r));
        return {};
    };
    if (used_depths) *used_depths = false;
    for (std::string_view item : split_commas(list)) {
        if (item == "decode") {
            if (used_depths) *used_depths = true;
            for (int64_t d : decode_depths)
                if (auto s = add({"decode@" + std::to_string(d), RowKind::Decode, d, kDecodeSteps, 1}); !s) return s.error();
            continue;
        }
        const size_t at = item.find('@');
        if (at == std::string_view::npos) return make_error("unknown row '" + std::string(item) + "' " + kRowList);
        const std::string_view head = item.substr(0, at);
        const RowKind* context_kind = nullptr;
        for (const auto& [name, kind] : kContextRows)
            if (head == name) context_kind = &kind;
        // A park file or a re-prefill of no cells measures nothing.
        auto depth = parse_count(item.substr(at + 1), context_kind ? 1 : 0, kMaxDepth, "the depth", item);
        if (!depth) return depth.error();
        RowSpec r;
        r.depth = *depth;
        if (context_kind) {
            r.kind = *context_kind;
            r.tokens = 0;
            r.name = std::string(head) + "@" + std::to_string(r.depth);
        } else if (head == "decode") {
            r.kind = RowKind::Decode;
            r.tokens = kDecodeSteps;
            r.name = "decode@" + std::to_string(r.depth);
        } else {
            std::string_view kind;
            for (std::string_view k : {std::string_view("prefill"), std::string_view("read")})
                if (head.substr(0, k.size()) == k) kind = k;
            if (kind.empty()) return make_error("unknown row '" + std::string(item) + "' " + kRowList);
            std::string_view n = head.substr(kind.size()), k;
            if (const size_t x = n.find('x'); x != std::string_view::npos) {
                k = n.substr(x + 1);
                n = n.substr(0, x);
            }
            auto tokens = parse_count(n, 1, kMaxAppendTokens, "the token count", item);
            if (!tokens) return tokens.error();
            r.kind = RowKind::Append;
            r.tokens = *tokens;
            if (!k.empty() || head.find('x') != std::string_view::npos) {
                auto contexts = parse_count(k, 1, kMaxContexts, "the context count", item);
                if (!contexts) return contexts.error();
                r.contexts = *contexts;
            }
            if (r.tokens * r.contexts > kMaxAppendTokens)
                return make_error("row '" + std::string(item) + "' appends " + std::to_string(r.tokens * r.contexts) +
                                  " tokens in one call, more than " + std::to_string(kMaxAppendTokens));
            r.name = std::string(kind) + std::to_string(r.tokens) +
                     (r.contexts > 1 || !k.empty() ? "x" + std::to_string(r.contexts) : "") + "@" +
                     std::to_string(r.depth);
        }
        if (auto s = add(std::move(r)); !s) return s.error();
    }
    if (out.empty()) return make_error("no rows to run");
    return out;
}

}  // namespace arbor::cli::bench
