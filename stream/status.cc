// Status and Result helpers that are not inline (caveman/stream/status.h). A file of its own so
// that every target using Status (o200k_tables_gen included) links them without byte_io.

#include "caveman/stream/status.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace caveman {

void AbortOnContractViolation(const char* what, const Status& status) {
  std::fprintf(stderr, "caveman: %s: %s\n", what, status.ToString().c_str());
  std::abort();
}

std::string Status::ToString() const {
  static const char* kNames[] = {"OK", "InvalidArgument", "NotSupported", "Corruption",
                                 "IoError", "ResourceExhausted", "Internal", "NotFound"};
  if (ok()) return "OK";
  return std::string(kNames[static_cast<int>(code_)]) + ": " + message_;
}

}  // namespace caveman
