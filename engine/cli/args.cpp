// Flag parsing for arbor-cli subcommands (see cli.hpp).
#include "cli.hpp"

#include <cerrno>
#include <cstdlib>

namespace arbor::cli {

bool Args::flag(const std::string& name) {
    bool seen = false;
    for (auto it = args_.begin(); it != args_.end();) {
        if (*it == name) {
            seen = true;
            it = args_.erase(it);
        } else {
            ++it;
        }
    }
    return seen;
}

std::vector<std::string> Args::values(const std::string& name) {
    std::vector<std::string> out;
    for (size_t i = 0; i < args_.size();) {
        if (args_[i] == name) {
            if (i + 1 >= args_.size()) throw UsageError("flag " + name + " needs a value");
            out.push_back(args_[i + 1]);
            args_.erase(args_.begin() + static_cast<long>(i), args_.begin() + static_cast<long>(i) + 2);
        } else if (args_[i].size() > name.size() + 1 && args_[i].compare(0, name.size(), name) == 0 &&
                   args_[i][name.size()] == '=' && name.size() > 2) {
            out.push_back(args_[i].substr(name.size() + 1));
            args_.erase(args_.begin() + static_cast<long>(i));
        } else {
            ++i;
        }
    }
    return out;
}

std::optional<std::string> Args::value(const std::string& name) {
    auto v = values(name);
    if (v.empty()) return std::nullopt;
    return v.back();
}

std::optional<std::string> Args::value(const std::string& a, const std::string& b) {
    auto va = value(a);
    auto vb = value(b);
    return vb ? vb : va;
}

std::optional<double> Args::number(const std::string& name) {
    auto v = value(name);
    if (!v) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    double d = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0' || errno != 0) throw UsageError("flag " + name + " needs a number, got '" + *v + "'");
    return d;
}

static int64_t parse_int(const std::string& name, const std::string& v) {
    errno = 0;
    char* end = nullptr;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0) throw UsageError("flag " + name + " needs an integer, got '" + v + "'");
    return x;
}

std::optional<int64_t> Args::integer(const std::string& name) {
    auto v = value(name);
    if (!v) return std::nullopt;
    return parse_int(name, *v);
}

std::optional<int64_t> Args::integer(const std::string& a, const std::string& b) {
    auto v = value(a, b);
    if (!v) return std::nullopt;
    return parse_int(a, *v);
}

std::vector<std::string> Args::positionals() {
    std::vector<std::string> out;
    for (auto it = args_.begin(); it != args_.end();) {
        if (it->size() > 1 && (*it)[0] == '-') {
            ++it;
        } else {
            out.push_back(*it);
            it = args_.erase(it);
        }
    }
    return out;
}

void Args::finish() {
    if (!args_.empty()) throw UsageError("unexpected argument '" + args_.front() + "'");
}

}  // namespace arbor::cli
