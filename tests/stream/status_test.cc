// Result<T>: value access on an error aborts with the status instead of throwing (issue 17:
// no exception crosses the library API; a broken REQUIRES is a bug, reported loudly).
#include "caveman/stream/status.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace caveman
