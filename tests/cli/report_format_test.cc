// Tests of the CLI's readable report forms, the format choice and the help texts (issue 9).
#include "cli/internal/report_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "cli/internal/help_text.h"
#include "compressors/registry.h"

namespace caveman::internal {
namespace {

TEST(NumberFormatTest, GroupThousands) {
  EXPECT_EQ(GroupThousands(0), "0");
  EXPECT_EQ(GroupThousands(999), "999");
  EXPECT_EQ(GroupThousands(1000), "1,000");
  EXPECT_EQ(GroupThousands(8388608), "8,388,608");
  EXPECT_EQ(GroupThousands(18446744073709551615ull), "18,446,744,073,709,551,615");
}

TEST(NumberFormatTest, HumanBytes) {
  EXPECT_EQ(HumanBytes(0), "0 B");
  EXPECT_EQ(HumanBytes(1023), "1023 B");
  EXPECT_EQ(HumanBytes(1024), "1 KiB");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(536870912), "512 MiB");
  EXPECT_EQ(HumanBytes(3ull << 40), "3 TiB");
}

TEST(NumberFormatTest, Percent) {
  EXPECT_EQ(Percent(0), "0.0%");
  EXPECT_EQ(Percent(0.7446808510638298), "74.5%");
  EXPECT_EQ(Percent(1), "100.0%");
}

// The chosen format; a failure shows as a test failure and kJson.
ReportFormat Choose(const FormatSources& s) {
  auto r = ChooseReportFormat(s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : ReportFormat::kJson;
}

TEST(ChooseReportFormatTest, FlagBeatsEnvBeatsTerminal) {
  FormatSources s{.flag_name = "--report", .env_name = "CAVEMAN_REPORT", .pretty_name = "pretty"};
  s.is_terminal = true;
  EXPECT_EQ(Choose(s), ReportFormat::kPretty);
  s.is_terminal = false;
  EXPECT_EQ(Choose(s), ReportFormat::kJson);
  s.env = "pretty";
  EXPECT_EQ(Choose(s), ReportFormat::kPretty);
  s.is_terminal = true;
  s.env = "json";
  EXPECT_EQ(Choose(s), ReportFormat::kJson);
  s.flag = "pretty";
  EXPECT_EQ(Choose(s), ReportFormat::kPretty);
  s.env = "garbage";  // not consulted once the flag decides
  s.flag = "json";
  EXPECT_EQ(Choose(s), ReportFormat::kJson);
}

TEST(ChooseReportFormatTest, EmptyEnvIsUnset) {
  FormatSources s{
      .flag_name = "--report", .env_name = "CAVEMAN_REPORT", .env = "", .is_terminal = true, .pretty_name = "pretty"};
  EXPECT_EQ(Choose(s), ReportFormat::kPretty);
}

TEST(ChooseReportFormatTest, UnknownWordsNameTheirSource) {
  FormatSources s{.flag_name = "--report", .env_name = "CAVEMAN_REPORT", .env = "fancy", .pretty_name = "pretty"};
  auto r = ChooseReportFormat(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "CAVEMAN_REPORT: unknown format \"fancy\" (use json or pretty)");
  s.flag = "";
  r = ChooseReportFormat(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--report: missing format (use json or pretty)");
  // "pretty" is not a stats word.
  FormatSources stats{.flag_name = "--format", .flag = "pretty", .pretty_name = "table"};
  r = ChooseReportFormat(stats);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--format: unknown format \"pretty\" (use json or table)");
  stats.flag = "table";
  EXPECT_EQ(Choose(stats), ReportFormat::kPretty);
}

CompressResult Compressed() {
  CompressResult r;
  r.content_type = "json";
  r.tokens_before = 6995;
  r.tokens_after = 483;
  r.token_count_basis = "o200k_base";
  r.ratio = (6995.0 - 483.0) / 6995.0;
  r.recovery_handle = "ccr_9ffcb4b0e01e6d91a2527ea463750829";
  r.method = "elision";
  r.lossless_to_model = false;
  r.bytes_in = 21875;
  r.bytes_out = 1652;
  return r;
}

TEST(PrettyReportTest, CompressedShowsSavingsAndUndoCommand) {
  EXPECT_EQ(PrettyReport(Compressed()),
            "caveman-engine compress: json, compressed with elision (lossy)\n"
            "  tokens  6,995 -> 483, saved 6,512 (93.1%, o200k_base)\n"
            "  bytes   21,875 -> 1,652\n"
            "  undo    caveman-engine retrieve ccr_9ffcb4b0e01e6d91a2527ea463750829\n");
}

TEST(PrettyReportTest, NamesTheSubcommand) {
  EXPECT_EQ(PrettyReport(Compressed(), "run").rfind("caveman-engine run: json, compressed with elision", 0), 0u);
}

// Follow mode: lossy lines were written, then the record could not be finalised.
TEST(PrettyReportTest, UnfinalisedFollowRecordNamesThePartialRecord) {
  CompressResult r = Compressed();
  r.content_type = "log";
  r.method = "log";
  r.recovery_handle.clear();
  r.error = "cave_ccr_budget_exceeded";
  r.partial_record = "part_0123456789abcdef0123456789abcdef";
  EXPECT_EQ(PrettyReport(r),
            "caveman-engine compress: log, compressed with log as it arrived\n"
            "  error   record not finalised (cave_ccr_budget_exceeded)\n"
            "  partial caveman-engine retrieve part_0123456789abcdef0123456789abcdef (the original as far as it "
            "was stored)\n"
            "  bytes   21,875 -> 1,652\n");
}

TEST(PartialsTest, JsonLineMembersInOrder) {
  PartialInfo p{.id = "part_0123456789abcdef0123456789abcdef",
                .created_at = "2026-12-03T07:00:00Z",
                .updated_at = "2026-12-03T07:00:05Z",
                .original_bytes = 1048576,
                .stored_bytes = 4096,
                .command = "sh -c 'make -j2'",
                .writer = "build-host:4242",
                .writer_alive = true};
  EXPECT_EQ(PartialJson(p),
            "{\"id\":\"part_0123456789abcdef0123456789abcdef\",\"created_at\":\"2026-12-03T07:00:00Z\","
            "\"updated_at\":\"2026-12-03T07:00:05Z\",\"original_bytes\":1048576,\"stored_bytes\":4096,"
            "\"command\":\"sh -c 'make -j2'\",\"writer\":\"build-host:4242\",\"writer_alive\":true}");
  p.writer_alive = false;
  p.command = "say \"hi\"";
  EXPECT_NE(
      PartialJson(p).find("\"command\":\"say \\\"hi\\\"\",\"writer\":\"build-host:4242\",\"writer_alive\":false}"),
      std::string::npos)
      << PartialJson(p);
}

TEST(PartialsTest, Table) {
  EXPECT_EQ(PartialsTable({}), "no partial records\n");
  PartialInfo a{.id = "part_0123456789abcdef0123456789abcdef",
                .updated_at = "2026-12-03T07:00:05Z",
                .original_bytes = 1536,
                .stored_bytes = 512,
                .command = "make",
                .writer = "h:1",
                .writer_alive = true};
  PartialInfo b = a;
  b.id = "part_fedcba9876543210fedcba9876543210";
  b.original_bytes = 3u << 20;
  b.command = "kubectl logs -f api";
  b.writer = "h:22";
  b.writer_alive = false;
  EXPECT_EQ(
      PartialsTable({a, b}),
      "id                                     updated               original  stored  writer         command\n"
      "part_0123456789abcdef0123456789abcdef  2026-12-03T07:00:05Z   1.5 KiB   512 B  h:1 (running)  make\n"
      "part_fedcba9876543210fedcba9876543210  2026-12-03T07:00:05Z     3 MiB   512 B  h:22 (gone)    kubectl logs -f api\n");
}

TEST(PrettyReportTest, LosslessAndNoHandle) {
  CompressResult r = Compressed();
  r.method = "toon";
  r.lossless_to_model = true;
  r.recovery_handle.clear();
  std::string out = PrettyReport(r);
  EXPECT_NE(out.find("compressed with toon (lossless)\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("undo"), std::string::npos) << out;
}

CompressResult PassedThrough(std::string error) {
  CompressResult r;
  r.content_type = "repetition";
  r.tokens_before = r.tokens_after = 470;
  r.token_count_basis = "approx-chars/4";
  r.bytes_in = r.bytes_out = 2609;
  r.error = std::move(error);
  return r;
}

TEST(PrettyReportTest, PassThroughSaysSoAndWhy) {
  EXPECT_EQ(PrettyReport(PassedThrough("")),
            "caveman-engine compress: repetition, passed through (original written unchanged)\n"
            "  why     not smaller after compression, or no compressor applies to this input\n"
            "  tokens  470 (approx-chars/4)\n"
            "  bytes   2,609\n");
  CompressResult empty = PassedThrough("");
  empty.bytes_in = empty.bytes_out = empty.tokens_before = empty.tokens_after = 0;
  EXPECT_NE(PrettyReport(empty).find("  why     empty input\n"), std::string::npos);
  CompressResult not_smaller = PassedThrough("");
  not_smaller.pass_through_reason = PassThroughReason::kNotSmaller;
  EXPECT_NE(PrettyReport(not_smaller).find("  why     the view would not count fewer tokens\n"), std::string::npos);
}

TEST(PrettyReportTest, StoreFailuresAreErrors) {
  std::string unavailable = PrettyReport(PassedThrough("cave_ccr_unavailable"));
  EXPECT_NE(unavailable.find("  error   original passed through; recovery store unavailable (cave_ccr_unavailable)\n"),
            std::string::npos)
      << unavailable;
  EXPECT_EQ(unavailable.find("why"), std::string::npos);
  std::string full = PrettyReport(PassedThrough("cave_ccr_budget_exceeded"));
  EXPECT_NE(full.find("recovery store full (cave_ccr_budget_exceeded)"), std::string::npos) << full;
  EXPECT_NE(full.find("caveman-engine gc --older-than"), std::string::npos) << full;
}

TEST(PrettyReportTest, UnknownTypeSaysNoCompressor) {
  CompressResult r = PassedThrough("");
  r.content_type = "jsn";
  r.pass_through_reason = PassThroughReason::kNoCompressor;
  std::string out = PrettyReport(r);
  EXPECT_NE(out.find("  why     no compressor for content type \"jsn\""), std::string::npos) << out;
}

StoreStats TwoTypes() {
  StoreStats s;
  s.by_content_type["json"] = {.count = 1, .tokens_before = 6995, .tokens_after = 483};
  s.by_content_type["repetition"] = {.count = 12, .tokens_before = 470, .tokens_after = 120};
  s.totals = {.count = 13, .tokens_before = 7465, .tokens_after = 603};
  s.storage_bytes = 1536;
  s.max_storage_bytes = 536870912;
  return s;
}

TEST(StatsTableTest, RowsAlignedWithTotalsAndStoreUsage) {
  EXPECT_EQ(StatsTable(TwoTypes()),
            "type        count  tokens before  tokens after  saved\n"
            "json            1          6,995           483  93.1%\n"
            "repetition     12            470           120  74.5%\n"
            "total          13          7,465           603  91.9%\n"
            "\n"
            "store  1.5 KiB used of 512 MiB (0.0%)\n");
}

TEST(StatsTableTest, EmptyAndFullStore) {
  StoreStats empty;
  EXPECT_EQ(StatsTable(empty),
            "type   count  tokens before  tokens after  saved\n"
            "total      0              0             0   0.0%\n"
            "\n"
            "store  0 B used\n");
  StoreStats full = TwoTypes();
  full.storage_bytes = full.max_storage_bytes;
  std::string out = StatsTable(full);
  EXPECT_NE(out.find("store  512 MiB used of 512 MiB (100.0%)\nstore full:"), std::string::npos) << out;
}

TEST(StatsJsonTest, SpecMemberOrder) {
  StoreStats s;
  s.by_content_type["repetition"] = {.count = 1, .tokens_before = 470, .tokens_after = 120};
  s.totals = s.by_content_type["repetition"];
  s.storage_bytes = 1000;
  s.max_storage_bytes = 1000;
  EXPECT_EQ(StatsJson(s),
            "{\n"
            "  \"totals\": {\n    \"count\": 1,\n    \"tokens_before\": 470,\n    \"tokens_after\": 120,\n"
            "    \"ratio\": 0.7446808510638298\n  },\n"
            "  \"by_content_type\": {\n"
            "    \"repetition\": {\n      \"count\": 1,\n      \"tokens_before\": 470,\n"
            "      \"tokens_after\": 120,\n      \"ratio\": 0.7446808510638298\n    }\n  },\n"
            "  \"basis\": \"inferred\",\n  \"storage_bytes\": 1000,\n  \"max_storage_bytes\": 1000,\n"
            "  \"storage_full\": true\n}\n");
  EXPECT_EQ(StatsJson(StoreStats{}),
            "{\n  \"totals\": {\n    \"count\": 0,\n    \"tokens_before\": 0,\n    \"tokens_after\": 0,\n"
            "    \"ratio\": 0\n  },\n  \"by_content_type\": {},\n  \"basis\": \"inferred\"\n}\n");
}

TEST(HelpTextTest, TopLevelStartsWithTheSpecUsageLine) {
  std::string help = TopLevelHelp();
  // The §9 usage line with FILE (issue 17), then run (issue 13), mcp (issue 14), gain (issue 17).
  EXPECT_EQ(
      help.substr(0, help.find('\n')),
      "usage: caveman-engine compress [--type T|auto] [--query Q] [FILE] | detect [FILE] | retrieve <handle> [query] | "
      "stats | registry | toon encode|decode | version [--json] | gc [--older-than D] [--dry-run] | "
      "run [--type T] [--query Q] -- CMD... | mcp | gain [--since D] [--by type|command|day]");
  for (std::string_view option :
       {"-h, --help", "-V, --version", "config.toml", "Exit status: 0 success, 1 error, 2 usage"}) {
    EXPECT_NE(help.find(option), std::string::npos) << option;
  }
  for (const SubcommandInfo& s : Subcommands()) {
    EXPECT_NE(help.find("\n  " + std::string(s.name) + " "), std::string::npos) << s.name;
  }
}

TEST(HelpTextTest, EverySubcommandHasUsageSectionsAndShortLines) {
  ASSERT_EQ(Subcommands().size(), 12u);
  for (const SubcommandInfo& s : Subcommands()) {
    std::string help(s.help);
    EXPECT_EQ(help.rfind("usage: caveman-engine " + std::string(s.name), 0), 0u) << s.name;
    EXPECT_NE(help.find("\nOptions:\n"), std::string::npos) << s.name;
    EXPECT_NE(help.find("\nEnvironment:"), std::string::npos) << s.name;
    EXPECT_NE(help.find("\nExit status:\n"), std::string::npos) << s.name;
    EXPECT_NE(help.find("\n  2  bad arguments (usage error)"), std::string::npos) << s.name;
    EXPECT_NE(help.find("\nExample"), std::string::npos) << s.name;
    EXPECT_EQ(help.back(), '\n') << s.name;
    // Terminals and the man page's preformatted COMMANDS section: no line over 90 columns.
    std::istringstream lines(help);
    for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 90u) << s.name << ": " << line;
    EXPECT_EQ(FindSubcommand(s.name), &s);
  }
  EXPECT_EQ(FindSubcommand("pixel"), nullptr);
}

// cli/completion/caveman-engine.bash hard-codes the --type words; they must be the registry's
// content types plus "auto".
TEST(CompletionTest, TypeListMatchesTheRegistry) {
  const char* src = std::getenv("CAVEMAN_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  std::ifstream in(std::string(src) + "/cli/completion/caveman-engine.bash");
  ASSERT_TRUE(in.good());
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string kStart = "_caveman_engine_types=\"";
  size_t begin = file.find(kStart);
  ASSERT_NE(begin, std::string::npos);
  begin += kStart.size();
  std::istringstream words(file.substr(begin, file.find('"', begin) - begin));
  std::vector<std::string> offered{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
  std::vector<std::string> want;
  for (std::string_view t : Registry().content_types()) want.emplace_back(t);
  want.push_back("auto");
  std::sort(offered.begin(), offered.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(offered, want);
}

}  // namespace
}  // namespace caveman::internal
