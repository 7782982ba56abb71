#include "compressors/pattern_databases.h"

#include <string_view>
#include <vector>

#include "compressors/internal/detect_scan.h"
#include "compressors/log_rules.h"

namespace caveman {

// Each database is built on first use, so one use of each builds them all. A new
// CompileMultiCached caller belongs here too; tests/cli/embedded_databases.sh checks that the
// executable, which registers the generated blob, compiles nothing.
void CompileAllPatternDatabases() {
  constexpr std::string_view kLine = "x\n";
  (void)internal::ScanDetectPatterns(kLine, std::vector<size_t>{0});
  internal::KeepMatcher keep;
  keep.ScanBlock(kLine);
}

}  // namespace caveman
