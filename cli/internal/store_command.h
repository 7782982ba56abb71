// `caveman-engine store check` and `store salvage --to PATH` (issue 15 item 9): argument
// handling and the JSON summary; the work is store/store_check.h.
#ifndef CAVEMAN_CLI_INTERNAL_STORE_COMMAND_H_
#define CAVEMAN_CLI_INTERNAL_STORE_COMMAND_H_

#include <string>
#include <vector>

namespace caveman::internal {

// Exit status of check and salvage when damage was found (a record or partial record that
// does not verify, an unreadable row, or integrity_check not "ok"); salvage still wrote
// every intact record. 0: nothing damaged; 1: bad arguments, store cannot be opened, target
// exists or cannot be created, stdout not writable.
inline constexpr int kExitStoreDamaged = 4;

struct StoreCommandOutcome {
  int exit_code = 0;
  std::string out;    // one JSON object and LF, for stdout
  std::string error;  // for stderr when exit_code is neither 0 nor kExitStoreDamaged
};

// `args`: the words after "check" / "salvage"; `db_path`: the store's database.
StoreCommandOutcome RunStoreCheck(const std::vector<std::string>& args, const std::string& db_path);
StoreCommandOutcome RunStoreSalvage(const std::vector<std::string>& args, const std::string& db_path);

}  // namespace caveman::internal

#endif  // CAVEMAN_CLI_INTERNAL_STORE_COMMAND_H_
