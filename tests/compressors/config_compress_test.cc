#include <gtest/gtest.h>

#include <string>

#include "compressors/compressor.h"
#include "compressors/config.h"

namespace caveman {
namespace {

std::string YamlServices(int count) {
  std::string s = "service:\n  name: checkout\n  owner: payments\n";
  for (int i = 0; i < count; ++i) {
    s += "  feature_" + std::to_string(i) + ":\n    enabled: true\n    rollout: " + std::to_string(i) + "\n";
  }
  s += "incident:\n  status: ERROR\n  action: rollback\n";
  return s;
}

TEST(ConfigCompressor, YamlKeepsParentsAndRelevantBlock) {
  auto out = RunOnString(*NewConfigCompressor(), YamlServices(30), "feature_17 rollout");
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("service:\n"), std::string::npos);
  EXPECT_NE(out->find("  feature_17:\n    enabled: true\n    rollout: 17\n"), std::string::npos) << *out;
  EXPECT_NE(out->find("  status: ERROR\n"), std::string::npos);
  EXPECT_NE(out->find("# \xE2\x80\xA6 "), std::string::npos);
  EXPECT_TRUE(IsConfig(*out) || out->size() < 300);
  auto again = RunOnString(*NewConfigCompressor(), *out, "feature_17 rollout");
  EXPECT_FALSE(again.has_value());  // contains the marker text: declines
}

TEST(ConfigCompressor, IniKeepsSectionHeaders) {
  std::string in;
  for (int s = 0; s < 6; ++s) {
    in += "[section_" + std::to_string(s) + "]\n";
    for (int k = 0; k < 12; ++k) in += "key_" + std::to_string(k) + " = value " + std::to_string(k) + "\n";
  }
  in += "[danger]\npassword = hunter2\nmode = strict\nlevel = 3\n";
  auto out = RunOnString(*NewConfigCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("[danger]\npassword = hunter2\n"), std::string::npos) << *out;
  EXPECT_NE(out->find("config lines elided (caveman)"), std::string::npos);
}

TEST(ConfigCompressor, DeclinesBelowFourteenLines) {
  EXPECT_FALSE(RunOnString(*NewConfigCompressor(), YamlServices(2)).has_value());  // 12 lines
  EXPECT_FALSE(RunOnString(*NewConfigCompressor(), "not config at all\n").has_value());
}

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

TEST(ConfigCompressor, MysqlStyleBareKeysAreIni) {
  std::string in = "!includedir /etc/mysql/conf.d/\n[client]\nport = 3306\nsocket = /run/mysqld.sock\n\n[mysqld]\n";
  in += "quick\nskip-external-locking\n";
  for (int i = 0; i < 30; ++i) in += "option_" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  in += "[mysqldump]\nquick\nmax_allowed_packet = 16M\n";
  EXPECT_TRUE(IsConfig(in));
  auto out = RunOnString(*NewConfigCompressor(), in);
  ASSERT_TRUE(out.has_value());
  EXPECT_NE(out->find("[mysqld]\nquick\nskip-external-locking\n"), std::string::npos) << *out;
  EXPECT_NE(out->find("config lines elided (caveman)"), std::string::npos);
}

}  // namespace
}  // namespace caveman
