#include "stream/spool.h"

#include <gtest/gtest.h>

#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::string Pattern(size_t n) {
  std::string s;
  for (size_t i = 0; s.size() < n; ++i) s += "row " + std::to_string(i) + "\n";
  s.resize(n);
  return s;
}

TEST(Spool, StaysInMemoryBelowLimit) {
  Spool s(SpoolOptions{.memory_limit = 100});
  ASSERT_TRUE(s.Write("hello").ok());
  EXPECT_TRUE(s.in_memory());
  EXPECT_EQ(s.memory_view(), "hello");
}

TEST(Spool, SpillsAndReadsBackExactly) {
  std::string data = Pattern(1 << 20);
  Spool s(SpoolOptions{.memory_limit = 1000});
  for (auto piece : testing::RandomSplit(data, 3, 7000)) ASSERT_TRUE(s.Write(piece).ok());
  EXPECT_FALSE(s.in_memory());
  EXPECT_EQ(s.size(), data.size());
  auto all = s.ReadAllToString();
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(*all == data);
  std::string range;
  ASSERT_TRUE(s.ReadRange(5000, 123, &range).ok());
  EXPECT_EQ(range, data.substr(5000, 123));
  StringSink sink;
  ASSERT_TRUE(s.CopyTo(sink).ok());
  EXPECT_TRUE(sink.data() == data);
}

TEST(Spool, ReaderReturnsAllBytesThenZero) {
  std::string data = Pattern(50000);
  Spool s(SpoolOptions{.memory_limit = 10});
  ASSERT_TRUE(s.Write(data).ok());
  auto r = s.NewReader();
  std::string got;
  ASSERT_TRUE(ReadAll(*r, &got).ok());
  EXPECT_TRUE(got == data);
}

TEST(Spool, BodyViewOfSpilledSpool) {
  std::string data = Pattern(30000);
  Spool s(SpoolOptions{.memory_limit = 10});
  ASSERT_TRUE(s.Write(data).ok());
  Body b = Body::FromSpool(s);
  EXPECT_FALSE(b.contiguous());
  auto v = b.View();
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(*v == data);
  EXPECT_EQ(b.size(), data.size());
}

TEST(Spool, ClearAllowsReuse) {
  Spool s(SpoolOptions{.memory_limit = 4});
  ASSERT_TRUE(s.Write("0123456789").ok());
  s.Clear();
  EXPECT_EQ(s.size(), 0u);
  ASSERT_TRUE(s.Write("ab").ok());
  EXPECT_TRUE(s.in_memory());
  EXPECT_EQ(s.memory_view(), "ab");
}

TEST(Spool, UnwritableTempDirIsIoError) {
  Spool s(SpoolOptions{.memory_limit = 1, .temp_dir = "/nonexistent/dir"});
  Status st = s.Write("too big");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
}

TEST(ByteIo, ChunkedSourceDeliversEverything) {
  std::string data = Pattern(10000);
  auto src = NewChunkedSource(data, 9, 13);
  std::string got;
  ASSERT_TRUE(ReadAll(*src, &got).ok());
  EXPECT_EQ(got, data);
}

TEST(ByteIo, ReadAllLimit) {
  std::string data = Pattern(1000);
  auto src = NewStringSource(data);
  std::string got;
  Status st = ReadAll(*src, &got, 999);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(got.size(), 999u);
}

TEST(ByteIo, FileSourceMissingFileIsNotFound) {
  auto r = NewFileSource("/nonexistent/file");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace caveman
