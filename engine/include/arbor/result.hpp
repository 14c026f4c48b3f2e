// Errors as values. Every engine call that can fail on input returns Result<T>;
// the message names what was wrong and where (file, field, byte offset, tensor).
// Nothing in the engine aborts the process or throws across its public API.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace arbor {

struct Error {
    std::string message;
};

inline Error make_error(std::string message) { return Error{std::move(message)}; }

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(v_); }
    const T& value() const& { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    T* operator->() { return &std::get<0>(v_); }
    const T* operator->() const { return &std::get<0>(v_); }
    T& operator*() & { return std::get<0>(v_); }
    const T& operator*() const& { return std::get<0>(v_); }

    const Error& error() const { return std::get<1>(v_); }
    const std::string& message() const { return std::get<1>(v_).message; }

private:
    std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : err_(std::move(error)), failed_(true) {}

    bool ok() const { return !failed_; }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return err_; }
    const std::string& message() const { return err_.message; }

private:
    Error err_;
    bool failed_ = false;
};

using Status = Result<void>;

}  // namespace arbor
