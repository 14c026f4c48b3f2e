// Backend specs and the per-model backend pool of the logits exactness suite.
#include "logits_exact_backends.hpp"

#include <charconv>

namespace arbor::exact {

BackendOptions BackendSpec::options(int64_t max_batch_tokens) const {
    BackendOptions o;
    o.threads = threads;
    o.scalar = scalar;
    o.max_batch_tokens = max_batch_tokens;
    return o;
}

namespace {

Result<int> parse_int(std::string_view spec, std::string_view key, std::string_view v, int lo, int hi) {
    int n = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < lo || n > hi)
        return make_error("backend spec '" + std::string(spec) + "': " + std::string(key) + "=" + std::string(v) +
                          " is not a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
    return n;
}

}  // namespace

Result<BackendSpec> parse_backend_spec(std::string_view text) {
    BackendSpec s;
    s.text = std::string(text);
    const size_t colon = text.find(':');
    s.name = std::string(text.substr(0, colon));
    if (s.name.empty()) return make_error("backend spec '" + s.text + "' has no backend name (cpu, gpu)");
    if (colon == std::string_view::npos) return s;
    std::string_view rest = text.substr(colon + 1);
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        const size_t eq = item.find('=');
        const std::string_view key = item.substr(0, eq);
        const std::string_view val = eq == std::string_view::npos ? std::string_view("1") : item.substr(eq + 1);
        if (key == "threads") {
            auto n = parse_int(text, key, val, 0, 256);
            if (!n) return n.error();
            s.threads = *n;
        } else if (key == "scalar") {
            auto n = parse_int(text, key, val, 0, 1);
            if (!n) return n.error();
            s.scalar = *n == 1;
        } else {
            return make_error("backend spec '" + s.text + "': unknown option '" + std::string(key) +
                              "' (threads=N, scalar=0|1)");
        }
    }
    return s;
}

Result<Backend*> BackendPool::get(int64_t max_batch_tokens) {
    auto it = made_.find(max_batch_tokens);
    if (it != made_.end()) return it->second.get();
    auto be = make_backend(spec_.name, model_, spec_.options(max_batch_tokens));
    if (!be)
        return make_error("backend '" + spec_.text + "' (max_batch_tokens " + std::to_string(max_batch_tokens) +
                          "): " + be.message());
    Backend* raw = be.value().get();
    made_.emplace(max_batch_tokens, std::move(be.value()));
    return raw;
}

}  // namespace arbor::exact
