// arbor-cli's command contract, shared by every subcommand.
//
// - exit 0 on success, 1 on bad usage or bad input, 2 on a runtime failure;
// - errors reach stderr as one line "error: ..." that names what was wrong;
// - machine-readable output goes to stdout with nothing else mixed in.
//
// A subcommand registers itself with a static `Command` object in its own cmd_*.cpp file,
// and signals failure by throwing UsageError, InputError or RuntimeFailure; main() turns
// those (and anything else) into the one-line error and the exit code.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace arbor::cli {

// Bad usage: unknown flag, missing value (exit 1).
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// Bad input: a file that does not parse, a value out of range (exit 1).
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The machine failed us: no GPU, out of memory, I/O error (exit 2).
struct RuntimeFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

using CommandFn = std::function<int(std::vector<std::string> args)>;

struct Command {
    Command(const char* name, const char* summary, const char* usage, CommandFn fn);
};

// Minimal flag reader over a subcommand's arguments. Flags are consumed as they are read;
// finish() rejects whatever is left, so a typo is an error and never silently ignored.
class Args {
public:
    explicit Args(std::vector<std::string> args) : args_(std::move(args)) {}

    bool flag(const std::string& name);                                   // --x
    std::optional<std::string> value(const std::string& name);            // --x V (last wins)
    std::optional<std::string> value(const std::string& a, const std::string& b);  // -m|--model
    std::vector<std::string> values(const std::string& name);             // repeated --x V
    std::optional<double> number(const std::string& name);
    std::optional<int64_t> integer(const std::string& name);
    std::optional<int64_t> integer(const std::string& a, const std::string& b);
    std::vector<std::string> positionals();                               // the rest, no dashes
    void finish();                                                        // reject leftovers

private:
    std::vector<std::string> args_;
};

// Writes bytes to stdout exactly (binary-safe, no newline translation).
void write_stdout(const std::string& bytes);

}  // namespace arbor::cli
