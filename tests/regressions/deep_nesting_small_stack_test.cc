// Regressions: (1) 10,000-deep JSON (legal, the §10 limit) crashed toon, toolschema,
// toolschema-annotations and a11y with `ulimit -s 2048` and on small-stack threads, because
// their walks recurse per level; in-memory transforms now run on a stack sized for the input
// (compressors/internal/large_stack). (2) 400,000 nested <div> (4 MB) took 451 s in gumbo and
// then overflowed the default 8 MiB stack in gumbo_destroy_output; such markup is now declined
// before parsing (the estimate follows element names, so stray end tags do not hide depth).
#include <functional>
#include <initializer_list>
#include <string>

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

}  // namespace
}  // namespace caveman
