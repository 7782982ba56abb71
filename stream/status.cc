// Status and Result helpers that are not inline (caveman/stream/status.h), and the failure
// path of CAVEMAN_DCHECK (stream/check.h). A file of its own so that every target using Status
// (o200k_tables_gen included) links them without byte_io.

#include "caveman/stream/status.h"
#include "stream/check.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace caveman {

void AbortOnContractViolation(const char* what, const Status& status) {
  std::fprintf(stderr, "caveman: %s: %s\n", what, status.ToString().c_str());
  std::abort();
}

namespace internal {

// Declared in stream/check.h (CAVEMAN_DCHECK); defined even when the checks are compiled out,
// so objects built either way link.
void DcheckFailed(const char* condition, const char* file, int line) {
  AbortOnContractViolation("CAVEMAN_DCHECK failed",
                           Status::Internal(std::string(file) + ":" + std::to_string(line) + ": " + condition));
}

}  // namespace internal

std::string Status::ToString() const {
  static const char* kNames[] = {"OK",      "InvalidArgument",   "NotSupported", "Corruption",
                                 "IoError", "ResourceExhausted", "Internal",     "NotFound"};
  if (ok()) return "OK";
  return std::string(kNames[static_cast<int>(code_)]) + ": " + message_;
}

}  // namespace caveman
