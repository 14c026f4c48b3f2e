// The two sides of the logits exactness suite: a backend spec ("gpu", "cpu:threads=1",
// "cpu:threads=2,scalar=0") and, per model, a pool that makes each (spec, max_batch_tokens)
// backend once and hands it out for every case that needs that pass size.
#pragma once

#include <arbor/backend.hpp>
#include <arbor/model.hpp>
#include <arbor/result.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace arbor::exact {

// name[:key=value,...] with keys threads (0: all hardware threads) and scalar (0 or 1).
// max_batch_tokens is not part of a spec: each case picks it per backend instance.
struct BackendSpec {
    std::string text;  // as given, for messages
    std::string name;  // the make_backend name: "cpu", "gpu"
    int threads = 0;
    bool scalar = false;

    BackendOptions options(int64_t max_batch_tokens) const;
};

Result<BackendSpec> parse_backend_spec(std::string_view text);

class BackendPool {
public:
    BackendPool(BackendSpec spec, std::shared_ptr<const Model> model) : spec_(std::move(spec)), model_(std::move(model)) {}

    const BackendSpec& spec() const { return spec_; }
    const std::shared_ptr<const Model>& model() const { return model_; }
    // The backend with this max_batch_tokens, made on first use (an error names the spec).
    Result<Backend*> get(int64_t max_batch_tokens);

private:
    BackendSpec spec_;
    std::shared_ptr<const Model> model_;
    std::map<int64_t, std::unique_ptr<Backend>> made_;
};

}  // namespace arbor::exact
