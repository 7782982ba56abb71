// Status and Result<T>: how the library reports environment failures.
//
// Data outcomes (not JSON, not worth compressing) are values, never errors; Status is for
// I/O, storage, memory, corruption and bad configuration. No exceptions cross the library
// API. Thread-safety: plain values, copyable, no shared state.
#ifndef CAVEMAN_STREAM_STATUS_H_
#define CAVEMAN_STREAM_STATUS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include "caveman/stream/export.h"

namespace caveman {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument = 1,
  kNotSupported = 2,
  kCorruption = 3,
  kIoError = 4,
  kResourceExhausted = 5,  // store capacity, disk full, input over the limit
  kInternal = 6,
  kNotFound = 7,
};

class [[nodiscard]] CAVEMAN_EXPORT Status {
 public:
  Status() = default;
  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); }
  static Status NotSupported(std::string m) { return Status(StatusCode::kNotSupported, std::move(m)); }
  static Status Corruption(std::string m) { return Status(StatusCode::kCorruption, std::move(m)); }
  static Status IoError(std::string m) { return Status(StatusCode::kIoError, std::move(m)); }
  static Status ResourceExhausted(std::string m) { return Status(StatusCode::kResourceExhausted, std::move(m)); }
  static Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
  static Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  Status(StatusCode c, std::string m) : code_(c), message_(std::move(m)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Writes "caveman: <what>: <status>" to stderr and aborts: a broken REQUIRES contract is a
// bug in the caller, not an outcome (no exception crosses the API). Called by Result's
// accessors, which consumers instantiate, hence exported and outside caveman::internal.
[[noreturn]] CAVEMAN_EXPORT void AbortOnContractViolation(const char* what, const Status& status);

// Either a value or a non-OK Status. value(), operator* and operator-> REQUIRE ok(); on an
// error they abort with the status (they never throw).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: REQUIRES !status.ok()
  bool ok() const { return v_.index() == 0; }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<1>(v_);
  }
  T& value() & { return *Get(); }
  const T& value() const& { return *Get(); }
  T&& value() && { return std::move(*Get()); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return Get(); }
  const T* operator->() const { return Get(); }

 private:
  T* Get() {
    T* v = std::get_if<0>(&v_);
    if (v == nullptr) AbortOnContractViolation("Result::value() on an error", std::get<1>(v_));
    return v;
  }
  const T* Get() const { return const_cast<Result*>(this)->Get(); }

  std::variant<T, Status> v_;
};

#define CAVEMAN_CONCAT_INNER_(a, b) a##b
#define CAVEMAN_CONCAT_(a, b) CAVEMAN_CONCAT_INNER_(a, b)

#define CAVEMAN_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::caveman::Status caveman_status_ = (expr);        \
    if (!caveman_status_.ok()) return caveman_status_; \
  } while (0)

#define CAVEMAN_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#define CAVEMAN_ASSIGN_OR_RETURN(lhs, expr) \
  CAVEMAN_ASSIGN_OR_RETURN_IMPL_(CAVEMAN_CONCAT_(caveman_result_, __LINE__), lhs, expr)

}  // namespace caveman

#endif  // CAVEMAN_STREAM_STATUS_H_
