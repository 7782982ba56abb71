// test-report compressor (§5.3): JUnit XML, pytest-json-report and Jest JSON reports become
// exact pass/fail/error/skip counts plus every failure with its message and a trimmed stack.
//
// Thread-safety: stateless; the factory's compressor may be used from any thread.
#ifndef CAVEMAN_COMPRESSORS_TEST_REPORT_H_
#define CAVEMAN_COMPRESSORS_TEST_REPORT_H_

#include <memory>
#include <string_view>

#include "compressors/compressor.h"

namespace caveman {

// True iff the §5.3 parser accepts `body` (valid UTF-8, JUnit XML / pytest-json-report / Jest
// JSON selected by the first non-space byte) and it holds at least one counted test. Used by
// detection (§3.3) so that "detects as test-report" and "test-report accepts" agree.
bool ParsesAsTestReport(std::string_view body);

std::unique_ptr<Compressor> NewTestReportCompressor();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_TEST_REPORT_H_
