#include "stream/spool.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

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

TEST(Spool, UnwritableTempDirFallsBackInsteadOfFailing) {
  // Issue 15: was kIoError; now /tmp, a memfd or memory take over.
  Spool s(SpoolOptions{.memory_limit = 1, .temp_dir = "/nonexistent/dir"});
  ASSERT_TRUE(s.Write("too big").ok());
  auto all = s.ReadAllToString();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, "too big");
}

// ReadFrom reads straight into the memory of an in-memory spool while the bytes fit under its
// limit, and hands the caller back to its own buffer (nullopt) otherwise: either way, with
// reads of every size, the content is the source's bytes in order.
TEST(Spool, ReadFromFillsMemoryInPlaceThenHandsBackToWrite) {
  const std::string data = Pattern(300000);
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}, size_t{65536}}) {
    SCOPED_TRACE(chunk);
    auto src = NewChunkedSource(data, 1, 5000);
    Spool s(SpoolOptions{.memory_limit = 100000});
    std::vector<char> buf(chunk);
    size_t direct = 0, buffered = 0;
    for (;;) {
      auto r = s.ReadFrom(*src, chunk);
      ASSERT_TRUE(r.ok());
      if (r->has_value()) {
        if ((*r)->empty()) break;
        ++direct;
        continue;
      }
      auto n = src->Read(buf.data(), buf.size());
      ASSERT_TRUE(n.ok());
      if (*n == 0) break;
      ++buffered;
      ASSERT_TRUE(s.Write(std::string_view(buf.data(), *n)).ok());
    }
    EXPECT_GT(direct, 0u);
    EXPECT_GT(buffered, 0u);  // past 100,000 bytes: the buffer and Write (which spills)
    EXPECT_FALSE(s.in_memory());
    auto all = s.ReadAllToString();
    ASSERT_TRUE(all.ok());
    EXPECT_TRUE(*all == data);
  }
  // Within the limit the bytes stay in memory, read in place.
  auto src = NewChunkedSource(data, 1, 5000);
  Spool s(SpoolOptions{.memory_limit = data.size() + 65536});
  for (;;) {
    auto r = s.ReadFrom(*src, 65536);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->has_value());
    if ((*r)->empty()) break;
  }
  ASSERT_TRUE(s.in_memory());
  EXPECT_TRUE(s.memory_view() == data);
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

namespace caveman {
namespace {

// Issue 15 item 4: a spool that cannot spill degrades to memory, never to an error.
std::string SpoolContent(const Spool& s) {
  auto r = s.ReadAllToString();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::string();
}

TEST(SpoolFaults, NoSpillFileKeepsEverythingInMemory) {
  const std::string data = Pattern(3 << 20);
  for (const char* dir : {"/nonexistent-caveman-dir", "/dev/null", ""}) {
    if (*dir == '\0') SetSpoolSpillFailureForTest(true);  // no /tmp, no memfd either
    Spool s(SpoolOptions{.memory_limit = 4096, .temp_dir = dir});
    for (std::string_view piece : testing::RandomSplit(data, 7, 65536)) {
      ASSERT_TRUE(s.Write(piece).ok()) << dir;
    }
    SetSpoolSpillFailureForTest(false);
    EXPECT_EQ(s.size(), data.size());
    EXPECT_TRUE(SpoolContent(s) == data) << dir;
  }
}

TEST(SpoolFaults, NoSpillFileAtAllStaysInMemory) {
  SetSpoolSpillFailureForTest(true);
  Spool s(SpoolOptions{.memory_limit = 100});
  const std::string data = Pattern(100000);
  ASSERT_TRUE(s.Write(data).ok());
  SetSpoolSpillFailureForTest(false);
  EXPECT_TRUE(s.in_memory());
  EXPECT_TRUE(SpoolContent(s) == data);
}

TEST(SpoolFaults, DiskFullMidSpoolTakesTheContentBack) {
  Spool s(SpoolOptions{.memory_limit = 1000});
  const std::string data = Pattern(200000);
  ASSERT_TRUE(s.Write(std::string_view(data).substr(0, 5000)).ok());
  ASSERT_FALSE(s.in_memory());
  SetSpoolDiskFullForTest(true);
  ASSERT_TRUE(s.Write(std::string_view(data).substr(5000)).ok());
  SetSpoolDiskFullForTest(false);
  EXPECT_TRUE(s.in_memory());
  EXPECT_TRUE(SpoolContent(s) == data);
}

// Issue 19: a raised limit keeps the content in memory (grown by mremap past 256 KiB, so
// through both growth paths), with spare bytes a parser may read (memory_padding); a spool
// that cannot grow its memory spills instead of failing (issue 15).
TEST(Spool, RaisedLimitStaysInMemoryAndGrowthFailureSpills) {
  const std::string data = Pattern(3 << 20);
  for (bool fail : {false, true}) {
    if (fail) SetSpoolMemoryFailureForTest(1 << 20);
    Spool s(SpoolOptions{.memory_limit = 4096});
    s.RaiseMemoryLimit(size_t{1} << 30);
    for (std::string_view piece : testing::RandomSplit(data, fail ? 3 : 4, 65536)) {
      ASSERT_TRUE(s.Write(piece).ok()) << fail;
    }
    SetSpoolMemoryFailureForTest(0);
    EXPECT_EQ(s.in_memory(), !fail);
    if (!fail) {
      EXPECT_GE(s.memory_padding(), Body::kViewPadding);
      EXPECT_EQ(Body::FromSpool(s).view_padding(), s.memory_padding());
    }
    EXPECT_TRUE(SpoolContent(s) == data) << fail;
    std::string mid;
    ASSERT_TRUE(s.ReadRange(1000000, 70000, &mid).ok());
    EXPECT_TRUE(mid == data.substr(1000000, 70000));
    // Raising the limit after a spill changes nothing.
    s.RaiseMemoryLimit(size_t{2} << 30);
    ASSERT_TRUE(s.Write("tail").ok());
    EXPECT_EQ(s.in_memory(), !fail);
    EXPECT_TRUE(SpoolContent(s) == data + "tail");
  }
}

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

// SpoolMemory from kMapBytes (256 KiB) on: the block starts and ends on 2 MiB boundaries
// whether it grew in place or had to move (a page mapped right after it forces the move every
// few appends), and keeps every byte across both. (Kernels from 6.7 on align large anonymous mappings
// themselves; on older ones, Debian 12's 6.1 among them, only the spool's own alignment does.)
// The VmFlags of the mapping that holds `p`, from /proc/self/smaps ("" if none holds it).
std::string VmFlagsOf(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-' && line.find(':') > line.find(' ')) {
      inside = at >= begin && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8) + " ";
    }
  }
  return "";
}

// A mapped block is advised for huge pages (issue 19: 2 MiB of fresh 4 KiB pages cost 5–6 ms
// on a VM, one huge page ≈ 0.2 ms): from kMapBytes on, grown or not, its mapping carries
// MADV_HUGEPAGE ("hg" in VmFlags), whatever the system's THP mode.
TEST(SpoolMemory, MappedBlocksAreAdvisedForHugePages) {
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled")) GTEST_SKIP() << "no THP in this kernel";
  internal::SpoolMemory m;
  m.Append(std::string(internal::SpoolMemory::kMapBytes, 'x'));
  ASSERT_GE(m.capacity(), internal::SpoolMemory::kMapBytes);
  EXPECT_NE(VmFlagsOf(m.view().data()).find(" hg "), std::string::npos) << VmFlagsOf(m.view().data());
  m.Append(std::string(5u << 20, 'y'));
  EXPECT_NE(VmFlagsOf(m.view().data()).find(" hg "), std::string::npos) << VmFlagsOf(m.view().data());
  EXPECT_EQ(m.view().substr(0, 3), "xxx");
  EXPECT_EQ(m.view().substr(m.size() - 3), "yyy");
}

TEST(SpoolMemory, GrowsInPlaceOrMovesAlignedKeepingEveryByte) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  internal::SpoolMemory m;
  std::string expected;
  std::mt19937 rng(19);
  std::vector<void*> blockers;
  int moved_or_blocked = 0;
  while (expected.size() < (24u << 20)) {
    std::string chunk(1 + rng() % 400000, '\0');
    for (char& c : chunk) c = static_cast<char>('a' + rng() % 26);
    m.Append(chunk);
    expected += chunk;
    ASSERT_GE(m.capacity(), m.size());
    if (m.capacity() >= internal::SpoolMemory::kMapBytes) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(m.view().data()) % kHuge, 0u) << m.size();
      EXPECT_EQ(m.capacity() % kHuge, 0u) << m.size();
    }
    if (rng() % 3 == 0) {
      void* after = const_cast<char*>(m.view().data()) + m.capacity();
      void* b = ::mmap(after, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (b == after) {
        blockers.push_back(b);
        ++moved_or_blocked;
      } else if (b != MAP_FAILED) {
        ::munmap(b, 4096);  // an old kernel took it as a hint only
      }
    }
  }
  EXPECT_GT(moved_or_blocked, 0);
  EXPECT_TRUE(m.view() == expected);
  m.Release();
  for (void* b : blockers) ::munmap(b, 4096);
}

}  // namespace
}  // namespace caveman
