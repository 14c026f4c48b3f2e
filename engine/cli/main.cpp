// arbor-cli entry point: dispatches to the registered subcommands and enforces the contract
// in cli.hpp (exit codes, one-line errors, never a signal or an abort).
#include "cli.hpp"

#include <arbor/version.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <new>

namespace arbor::cli {
namespace {

struct Entry {
    std::string summary;
    std::string usage;
    CommandFn fn;
};

std::map<std::string, Entry>& registry() {
    static std::map<std::string, Entry> r;
    return r;
}

void print_help(std::FILE* to) {
    std::fprintf(to,
                 "arbor-cli %s: the Arbor engine from the command line\n\n"
                 "usage: arbor-cli COMMAND [ARGS]\n"
                 "       arbor-cli COMMAND --help\n\n"
                 "commands:\n",
                 ARBOR_VERSION_STRING);
    for (const auto& [name, e] : registry()) std::fprintf(to, "  %-12s %s\n", name.c_str(), e.summary.c_str());
    std::fprintf(to,
                 "\nexit status: 0 success, 1 bad usage or bad input, 2 runtime failure.\n"
                 "errors are printed to stderr as one line starting with 'error: '.\n");
}

int fail(int code, const std::string& what) {
    std::fflush(stdout);
    std::string line = what;
    for (char& c : line)
        if (c == '\n') c = ' ';
    std::fprintf(stderr, "error: %s\n", line.c_str());
    return code;
}

}  // namespace

Command::Command(const char* name, const char* summary, const char* usage, CommandFn fn) {
    registry()[name] = Entry{summary, usage, std::move(fn)};
}

void write_stdout(const std::string& bytes) {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size())
        throw RuntimeFailure(std::string("cannot write to stdout: ") + std::strerror(errno));
}

int run_main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_help(stderr);
        return 1;
    }
    const std::string cmd = args[0];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        print_help(stdout);
        return 0;
    }
    if (cmd == "--version" || cmd == "-V" || cmd == "version") {
        std::printf("arbor-cli %s\n", ARBOR_VERSION_STRING);
        return 0;
    }
    auto it = registry().find(cmd);
    if (it == registry().end()) return fail(1, "unknown command '" + cmd + "' (see arbor-cli --help)");
    args.erase(args.begin());
    for (const auto& a : args) {
        if (a == "--help" || a == "-h") {
            std::printf("usage: arbor-cli %s %s\n\n%s\n", cmd.c_str(), it->second.usage.c_str(),
                        it->second.summary.c_str());
            return 0;
        }
    }
    try {
        int rc = it->second.fn(std::move(args));
        if (std::fflush(stdout) != 0) return fail(2, "cannot write to stdout");
        return rc;
    } catch (const UsageError& e) {
        return fail(1, std::string(e.what()) + " (usage: arbor-cli " + cmd + " " + it->second.usage + ")");
    } catch (const InputError& e) {
        return fail(1, e.what());
    } catch (const RuntimeFailure& e) {
        return fail(2, e.what());
    } catch (const std::bad_alloc&) {
        return fail(2, "out of memory");
    } catch (const std::exception& e) {
        return fail(2, e.what());
    } catch (...) {
        return fail(2, "unknown failure");
    }
}

}  // namespace arbor::cli

int main(int argc, char** argv) {
    try {
        return arbor::cli::run_main(argc, argv);
    } catch (...) {
        std::fputs("error: unexpected failure\n", stderr);
        return 2;
    }
}
