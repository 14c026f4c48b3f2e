// One generate call of a Session collected for the tests: the text, the token ids and the stop
// reason (shared by the session API and continuation suites).
#pragma once

#include <arbor/session.hpp>

#include <QtTest>

#include <string>
#include <vector>

namespace arbor::test {

struct Generated {
    std::string text;
    std::vector<TokenId> ids;
    StopReason reason = StopReason::Length;
    bool ok = false;
};

inline Generated generate(Session& s, Sampler& sampler, int64_t n, bool resumable = false,
                          const std::vector<std::string>& stops = {}) {
    Generated g;
    GenerateOptions go;
    go.max_tokens = n;
    go.stop = stops;
    go.resumable = resumable;
    auto r = s.generate(sampler, go, TokenCallback([&](const TokenEvent& e) {
        g.text += e.text;
        if (e.token != kNoToken) g.ids.push_back(e.token);
        return true;
    }));
    g.ok = r.ok();
    if (r) g.reason = r.value();
    else qWarning("generate: %s", r.message().c_str());
    return g;
}

}  // namespace arbor::test
