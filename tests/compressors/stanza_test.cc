// deb822 / RFC 822 stanzas in the config compressor (issue 16): real tool output from
// fixtures/stanzas/ (commands in its README).
#include "compressors/internal/stanza.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compressors/compressor.h"
#include "compressors/config.h"
#include "compressors/detect.h"
#include "compressors/lines.h"
#include "tests/testing/test_util.h"

namespace caveman {
namespace {

std::string Fixture(const std::string& name) { return testing::ReadFile("fixtures/stanzas/" + name); }

TEST(Stanzas, RealToolOutputIsRecognised) {
  for (const char* f : {"apt-cache-show.txt", "dpkg-s.txt", "dpkg-status-60.txt"}) {
    EXPECT_TRUE(internal::LooksLikeStanzas(Fixture(f))) << f;
    EXPECT_EQ(DetectBody(Fixture(f)), "config") << f;
  }
}

TEST(Stanzas, OtherShapesAreNot) {
  EXPECT_FALSE(
      internal::LooksLikeStanzas("Package: one\nVersion: 1\nArchitecture: all\nDepends: x\n"
                                 "Section: a\nPriority: b\nMaintainer: c\nHomepage: d\n"));  // 1 stanza
  std::string prose;
  for (int i = 0; i < 10; ++i) prose += "Note: this is item " + std::to_string(i) + "\nand more prose here\n\n";
  EXPECT_FALSE(internal::LooksLikeStanzas(prose));
  std::string gitlog;
  for (int i = 0; i < 10; ++i) {
    gitlog += "commit " + std::string(40, 'a') + "\nAuthor: A <a@b>\nDate:   Mon\n\n    subject " + std::to_string(i) +
              "\n\n";
  }
  EXPECT_FALSE(internal::LooksLikeStanzas(gitlog));
}

TEST(Stanzas, PlanKeepsIdentityAndVaryingFieldsDropsConstantsHashesSizes) {
  const std::string in = Fixture("apt-cache-show.txt");
  internal::SplitResult split = internal::SplitLines(in);
  internal::StanzaPlan plan = internal::PlanStanzas(split.lines);
  size_t packages = 0;
  for (std::string_view l : split.lines) packages += l.starts_with("Package: ");
  EXPECT_EQ(plan.stanzas, packages);  // apt-cache show prints every available version
  for (size_t i = 0; i < split.lines.size(); ++i) {
    std::string_view l = split.lines[i];
    if (l.starts_with("Package: ") || l.starts_with("Version: ") || l.starts_with("Depends: ")) {
      EXPECT_TRUE(plan.keep[i]) << l;
    }
    if (l.starts_with("SHA256: ") || l.starts_with("MD5sum: ") || l.starts_with("Size: ") ||
        l.starts_with("Description-md5: ") || l.starts_with(" ")) {
      EXPECT_FALSE(plan.keep[i]) << l;
    }
  }
  EXPECT_NE(plan.note.find(std::to_string(packages) + " stanzas"), std::string::npos) << plan.note;
  EXPECT_NE(plan.note.find("ranges: "), std::string::npos) << plan.note;
  EXPECT_NE(plan.note.find("Architecture: amd64"), std::string::npos) << plan.note;
}

TEST(Stanzas, ConfigViewKeepsEveryPackageAndAddsUp) {
  auto c = NewConfigCompressor();
  for (const char* f : {"apt-cache-show.txt", "dpkg-s.txt", "dpkg-status-60.txt"}) {
    const std::string in = Fixture(f);
    auto out = RunOnString(*c, in);
    ASSERT_TRUE(out.has_value()) << f;
    EXPECT_LT(out->size(), in.size()) << f;
    // Hash lines (40-64 hex digits) are longer than a marker: none survives.
    EXPECT_EQ(out->find("SHA256: "), std::string::npos) << f;
    EXPECT_EQ(out->find("MD5sum: "), std::string::npos) << f;
    // Every Package line survives, in order; counts add up.
    size_t packages_in = 0, packages_out = 0, kept = 0, elided = 0;
    for (std::string_view l : internal::SplitLines(in).lines) packages_in += l.starts_with("Package: ");
    for (std::string_view l : internal::SplitLines(*out).lines) {
      if (l.starts_with("# caveman: ")) continue;
      if (l.starts_with("# \xE2\x80\xA6 ")) {
        elided += std::stoul(std::string(l.substr(l.find(' ', 2) + 1)));
        continue;
      }
      packages_out += l.starts_with("Package: ");
      ++kept;
    }
    EXPECT_EQ(packages_out, packages_in) << f;
    EXPECT_EQ(kept + elided, internal::SplitLines(in).lines.size()) << f;
  }
}

}  // namespace
}  // namespace caveman
