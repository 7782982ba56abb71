// Golden fixtures of the line compressors: fixtures/<type>/<case>.in (+ optional .query) against
// <case>.expected. A decline is recorded as .expected == .in (the engine forwards the original).
// CAVEMAN_UPDATE_GOLDEN=1 rewrites the .expected files (review them before committing).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "compressors/compressor.h"
#include "compressors/config.h"
#include "compressors/diff.h"
#include "compressors/log.h"
#include "compressors/search_result.h"
#include "compressors/tabular.h"
#include "compressors/terminal.h"
#include "compressors/text.h"
#include "stream/spool.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

namespace fs = std::filesystem;

struct Kind {
  const char* dir;
  std::unique_ptr<Compressor> (*make)();
};

std::unique_ptr<Compressor> MakeLog() { return NewLogCompressor(); }
std::unique_ptr<Compressor> MakeTerminal() { return NewTerminalCompressor(); }
std::unique_ptr<Compressor> MakeTabular() { return NewTabularCompressor(); }
std::unique_ptr<Compressor> MakeText() { return NewTextCompressor(); }

const Kind kKinds[] = {
    {"log", MakeLog},
    {"terminal", MakeTerminal},
    {"diff", NewDiffCompressor},
    {"search-result", NewSearchResultCompressor},
    {"config", NewConfigCompressor},
    {"tabular", MakeTabular},
    {"text", MakeText},
};

std::string Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Runs through a Spool-backed body fed in random pieces, as the engine would.
std::string RunSpooled(const Compressor& c, const std::string& in, const std::string& query) {
  Spool spool(SpoolOptions{/*memory_limit=*/4096, ""});
  for (std::string_view piece : testing::RandomSplit(in, 99, 777)) {
    EXPECT_TRUE(spool.Write(piece).ok());
  }
  StringSink sink;
  TransformMeta meta;
  const std::string q = c.query_aware() ? query : std::string();
  auto r = c.Transform(Body::FromSpool(spool), q, sink, &meta);
  EXPECT_TRUE(r.ok());
  if (!r.ok() || *r != TransformOutcome::kAccepted) return in;
  return sink.data();
}

TEST(LinesGolden, EveryFixtureMatchesExpected) {
  const bool update = std::getenv("CAVEMAN_UPDATE_GOLDEN") != nullptr;
  size_t cases = 0;
  for (const Kind& kind : kKinds) {
    const fs::path dir = fs::path(testing::SourceDir()) / "fixtures" / kind.dir;
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    std::vector<fs::path> inputs;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".in") inputs.push_back(e.path());
    }
    std::sort(inputs.begin(), inputs.end());
    auto c = kind.make();
    for (const fs::path& in_path : inputs) {
      ++cases;
      fs::path base = in_path;
      base.replace_extension();
      const std::string in = Slurp(in_path);
      const fs::path query_path = base.string() + ".query";
      const std::string query = fs::exists(query_path) ? Slurp(query_path) : std::string();
      const std::string out = RunSpooled(*c, in, query);
      const fs::path expected_path = base.string() + ".expected";
      if (update) {
        std::ofstream(expected_path, std::ios::binary) << out;
        continue;
      }
      ASSERT_TRUE(fs::exists(expected_path)) << expected_path;
      EXPECT_EQ(out, Slurp(expected_path)) << in_path;
      // Compressing the output again passes through (declines or returns identical bytes).
      EXPECT_EQ(RunSpooled(*c, out, query), out) << "not idempotent: " << in_path;
    }
  }
  EXPECT_GE(cases, 30u);
}

}  // namespace
}  // namespace caveman
