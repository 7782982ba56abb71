// Regressions: (1) 10,000-deep JSON (legal, the §10 limit) crashed toon, toolschema,
// toolschema-annotations and a11y with `ulimit -s 2048` and on small-stack threads, because
// their walks recurse per level; in-memory transforms now run on a stack sized for the input
// (compressors/internal/large_stack). (2) 400,000 nested <div> (4 MB) took 451 s in gumbo and
// then overflowed the default 8 MiB stack in gumbo_destroy_output; such markup is now declined
// before parsing (the estimate follows element names, so stray end tags do not hide depth).
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "compressors/compressor.h"
#include "compressors/large_stack.h"
#include "compressors/registry.h"

namespace caveman {
namespace {

// Runs `fn` on a thread with a 256 KiB stack, the size of many thread pools' workers.
void OnSmallStack(const std::function<void()>& fn) { internal::RunWithStack(256 * 1024, fn); }

TEST(DeepNestingSmallStack, TenThousandLevelsOfJsonInEveryJsonCompressor) {
  const int depth = 10000;
  const std::string arrays = std::string(depth, '[') + std::string(depth, ']');
  std::string objects;
  for (int i = 0; i < depth; ++i) objects += "{\"a\":";
  objects += "1" + std::string(depth, '}');
  Registry registry;
  for (const char* type : {"json", "toon", "toolschema", "toolschema-annotations", "a11y"}) {
    const Compressor* c = registry.Find(type);
    ASSERT_NE(c, nullptr) << type;
    for (const std::string* in : std::initializer_list<const std::string*>{&arrays, &objects}) {
      bool finished = false;
      OnSmallStack([&] {
        (void)RunOnString(*c, *in);  // any outcome is fine; returning at all is the test
        finished = true;
      });
      EXPECT_TRUE(finished) << type;
    }
  }
}

TEST(DeepNestingSmallStack, PathologicallyNestedHtmlIsDeclinedBeforeParsing) {
  const int depth = 400000;
  std::string in = "<html><body>";
  for (int i = 0; i < depth; ++i) in += "<div>";
  in += "x";
  for (int i = 0; i < depth; ++i) in += "</div>";
  in += "</body></html>";
  Registry registry;
  const Compressor* html = registry.Find("html");
  ASSERT_NE(html, nullptr);
  EXPECT_FALSE(RunOnString(*html, in).has_value());
  // Stray end tags close nothing in the parser, so they must not hide the nesting from the
  // estimate either (50,000 × `<div></b>` took 7 s in gumbo before the estimate tracked names).
  std::string stray = "<html><body>";
  for (int i = 0; i < 50000; ++i) stray += "<div></b>";
  stray += "x</body></html>";
  EXPECT_FALSE(RunOnString(*html, stray).has_value());
}

TEST(DeepNestingSmallStack, OrdinaryNestingStillCompresses) {
  // 200 levels plus many unclosed <li>/<p> (optional end tags do not count as nesting).
  std::string in = "<html><head><title>t</title><script>if (a<b) { x = '<div><div><div>'; }</script></head><body>";
  for (int i = 0; i < 200; ++i) in += "<div class=\"wrap\">";
  in += "<ul>";
  for (int i = 0; i < 3000; ++i) in += "<li>item number " + std::to_string(i) + " of the list <p>para";
  in += "</ul>";
  for (int i = 0; i < 200; ++i) in += "</div>";
  in += "</body></html>";
  Registry registry;
  auto out = RunOnString(*registry.Find("html"), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("item number 2999"), std::string::npos);
}

TEST(LargeStack, SizeGrowsWithInputAndIsCapped) {
  EXPECT_EQ(internal::StackBytesForInput(0), size_t{64} << 20);
  EXPECT_EQ(internal::StackBytesForInput(1 << 20), (size_t{64} << 20) + (size_t{32} << 20));
  EXPECT_EQ(internal::StackBytesForInput(SIZE_MAX / 2), size_t{8} << 30);
  int ran = 0;
  internal::RunWithStack(internal::StackBytesForInput(100), [&] { ++ran; });
  EXPECT_EQ(ran, 1);
}

// Uses about depth KiB of stack; the volatile buffer keeps each frame's kilobyte.
int Recurse(int depth) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth);
  if (depth == 0) return frame[0];
  return Recurse(depth - 1) + frame[0];
}

TEST(LargeStack, RunsOnTheCallingThreadOnAStackOfTheRequestedSize) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id inner;
  int sum = -1;
  // 32 MiB of frames inside a 256 KiB stack's task: only the inner 64 MiB stack holds them.
  OnSmallStack([&] {
    internal::RunWithStack(size_t{64} << 20, [&] {
      inner = std::this_thread::get_id();
      sum = Recurse(32 * 1024);
    });
  });
  EXPECT_EQ(inner, caller);
  int expected = 0;
  for (int d = 32 * 1024; d >= 0; --d) expected += static_cast<char>(d);
  EXPECT_EQ(sum, expected);
}

TEST(LargeStack, AnExceptionComesBackThroughNestedStacks) {
  bool after = false;
  try {
    internal::RunWithStack(1 << 20, [&] {
      internal::RunWithStack(1 << 20, [] { throw std::runtime_error("from the inner stack"); });
      after = true;
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "from the inner stack");
  }
  EXPECT_FALSE(after);
  // The thread goes on normally afterwards, a second run included.
  int ran = 0;
  internal::RunWithStack(1 << 20, [&] { ++ran; });
  EXPECT_EQ(ran, 1);
}

}  // namespace
}  // namespace caveman
