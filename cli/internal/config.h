// The configuration file (issue 17): $XDG_CONFIG_HOME/caveman/config.toml, else
// ~/.config/caveman/config.toml. A missing file is an empty configuration.
//
//   [store]
//   path = "~/caveman/ccr.db"     # database file          (env CAVEMAN_CCR_DB / CAVEMAN_HOME win)
//   max_bytes = 1073741824        # capacity, stored bytes  (env CAVEMAN_CCR_MAX_BYTES wins)
//   url = "postgresql://..."      # PostgreSQL store        (env CAVEMAN_CCR_URL wins)
//   [compress]                    # compress and run
//   min_savings = 0.2             # share of tokens a view must save, 0 <= x < 1
//   never = ["diff", "json"]      # content types never compressed ("*" = all)
//   [run.make]                    # `run` of a program (the command's basename after wrappers)
//   type = "log"                  # as --type (the flag wins)
//   query = "error"               # as --query: what query-aware compressors keep (the flag wins)
//   never = true                  # pass this command's output through
//
// Precedence: flag > environment > file > default. The store settings reach the store through
// their environment variables (ApplyStoreEnvironment sets those not already set), so every
// subcommand that opens the store honours them the same way.
#ifndef CAVEMAN_CLI_INTERNAL_CONFIG_H_
#define CAVEMAN_CLI_INTERNAL_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "caveman/engine/engine.h"
#include "caveman/stream/status.h"

namespace caveman::internal {

// Exit status for a configuration file that cannot be read or parsed: a usage error, like a
// bad flag (docs/DECISIONS.md, "Configuration file").
inline constexpr int kExitBadConfig = 2;

struct RunCommandConfig {
  std::optional<std::string> type;
  std::optional<std::string> query;
  bool never = false;
};

struct Config {
  std::string file;                       // the file read; empty when there was none
  std::optional<std::string> store_path;  // "~/" expanded
  std::optional<uint64_t> store_max_bytes;
  std::optional<std::string> store_url;
  std::optional<double> min_savings;
  std::vector<std::string> never_types;
  std::map<std::string, RunCommandConfig> run;  // by program name
};

// The file's path from XDG_CONFIG_HOME / HOME; empty when neither is set.
std::string ConfigPath();

// Reads and checks ConfigPath(). Errors (kInvalidArgument), one line naming the file and the
// line: "config FILE:LINE:COL: MESSAGE" (TOML syntax, unknown key, wrong type, bad value), or
// "config FILE: E" when it cannot be read.
Result<Config> LoadConfig();
// Parses `text` as the file `name` (tests).
Result<Config> ParseConfig(const std::string& text, const std::string& name);

// Sets CAVEMAN_CCR_DB (unless CAVEMAN_CCR_DB or CAVEMAN_HOME is set), CAVEMAN_CCR_MAX_BYTES
// and CAVEMAN_CCR_URL (each unless set) from the file.
void ApplyStoreEnvironment(const Config& config);

// The options of every Engine the CLI makes: `store` (not owned) and, from the environment,
// the JSON best-of selector (CAVE_ENGINE_TOON=best-of, ASCII case-insensitive). The library
// reads no environment variable itself (issue 17).
EngineOptions CliEngineOptions(RecoveryStore* store);

// Process-wide allocator tuning, done once by main() (a library must not change it for its
// host program, issue 17): glibc's mmap threshold fixed at its default.
void TuneProcessAllocator();

}  // namespace caveman::internal

#endif  // CAVEMAN_CLI_INTERNAL_CONFIG_H_
