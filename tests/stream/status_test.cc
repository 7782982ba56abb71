// Result<T>: value access on an error aborts with the status instead of throwing (issue 17:
// no exception crosses the library API; a broken REQUIRES is a bug, reported loudly).
#include "caveman/stream/status.h"

#include <gtest/gtest.h>

#include <string>

#include "stream/check.h"
#include "stream/json_writer.h"

namespace caveman {
namespace {

TEST(Result, ValueAndStatus) {
  Result<std::string> ok(std::string("view"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, "view");
  EXPECT_EQ(ok->size(), 4u);
  EXPECT_TRUE(ok.status().ok());
  Result<std::string> err(Status::NotFound("ccr: recovery handle not found"));
  EXPECT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), StatusCode::kNotFound);
}

TEST(ResultDeathTest, ValueOnAnErrorAbortsNamingTheStatus) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<int> err(Status::Corruption("ccr: corrupt recovery record"));
  EXPECT_DEATH((void)err.value(), "Result::value\\(\\) on an error: .*corrupt recovery record");
  const Result<std::string> cerr(Status::IoError("read stdin: Bad file descriptor"));
  EXPECT_DEATH((void)cerr->size(), "Bad file descriptor");
}

// CAVEMAN_DCHECK (stream/check.h): a REQUIRES contract broken by the caller aborts in a build
// with the checks on (developer mode, Debug); with them compiled out there is nothing to see.
TEST(DcheckDeathTest, BrokenContractAbortsNamingTheCondition) {
  if (!CAVEMAN_DCHECK_IS_ON) GTEST_SKIP() << "CAVEMAN_DCHECK is compiled out in this build (CAVEMAN_DCHECK=OFF)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // JsonWriter::EndObject REQUIRES an open container.
  EXPECT_DEATH(JsonWriter().EndObject(),
               "CAVEMAN_DCHECK failed: Internal: .*json_writer\\.cc:[0-9]+: !has_members_\\.empty\\(\\)");
  EXPECT_DEATH(CAVEMAN_DCHECK(1 + 1 == 3), "CAVEMAN_DCHECK failed: .*status_test\\.cc:[0-9]+: 1 \\+ 1 == 3");
}

TEST(Dcheck, ConditionIsEvaluatedOnlyWhenChecksAreOn) {
  int evaluated = 0;
  CAVEMAN_DCHECK(++evaluated == 1);
  EXPECT_EQ(evaluated, CAVEMAN_DCHECK_IS_ON ? 1 : 0);
  JsonWriter w;  // a contract kept: nothing happens either way
  w.BeginObject().Key("a").Uint(1).EndObject();
  EXPECT_EQ(w.str(), "{\"a\":1}");
}

}  // namespace
}  // namespace caveman
