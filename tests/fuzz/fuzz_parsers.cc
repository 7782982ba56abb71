// libFuzzer target for the line/record parsers that detection relies on: the table parser of
// §5.9 (TableRowCount), the CSV reader (record ranges are increasing and inside the body), the
// config parser of §5.10 and the test-report parser of §5.3. Byte 0 picks the parser so one
// target covers them all within the CI budget.
#include <cstdint>
#include <string_view>

#include "compressors/config.h"
#include "compressors/internal/csv.h"
#include "compressors/tabular.h"
#include "compressors/test_report.h"
#include "tests/fuzz/fuzz_util.h"

// Lazily built databases are built here, outside libFuzzer's per-input timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)caveman::TableRowCount("a,b\n1,2\n");
  (void)caveman::IsConfig("a: 1\n");
  (void)caveman::ParsesAsTestReport("<testsuite/>");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace caveman;
  std::string_view in = fuzz::AsView(data, size);
  const uint8_t which = fuzz::TakeByte(&in);
  switch (which % 4) {
    case 0: {
      auto rows = TableRowCount(in);
      if (rows) FUZZ_CHECK(*rows >= 1, "table with %zu rows", *rows);
      break;
    }
    case 1: {
      auto recs = internal::ReadDelimitedRecords(in);
      if (recs) {
        FUZZ_CHECK(recs->record_ends.size() >= 2, "fewer than 2 records accepted");
        size_t prev = 0;
        for (size_t end : recs->record_ends) {
          FUZZ_CHECK(end > prev && end <= in.size(), "record end %zu after %zu (size %zu)", end, prev, in.size());
          prev = end;
        }
        FUZZ_CHECK(recs->delimiter == ',' || recs->delimiter == '\t', "bad delimiter");
      }
      break;
    }
    case 2: (void)IsConfig(in); break;
    case 3: (void)ParsesAsTestReport(in); break;
  }
  return 0;
}
