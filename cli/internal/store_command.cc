#include "cli/internal/store_command.h"

#include <string>
#include <vector>

#include "caveman/store/store.h"
#include "store/store_check.h"
#include "stream/json_writer.h"

namespace caveman::internal {
namespace {

void WriteList(const std::vector<std::string>& items, JsonWriter& w) {
  w.BeginArray();
  for (const std::string& item : items) w.String(item);
  w.EndArray();
}

// The members shared by check and salvage.
void WriteCheckMembers(const StoreCheckReport& r, JsonWriter& w) {
  w.Key("integrity");
  if (r.integrity_ok()) {
    w.String("ok");
  } else {
    WriteList(r.integrity, w);
  }
  w.Key("records").Uint(r.records).Key("ok").Uint(r.ok).Key("corrupt");
  WriteList(r.corrupt, w);
  w.Key("partials").Uint(r.partials).Key("partials_ok").Uint(r.partials_ok).Key("corrupt_partials");
  WriteList(r.corrupt_partials, w);
  w.Key("unreadable_rows").Uint(r.unreadable_rows);
}

// Usage errors exit 2, as for every subcommand (docs/DECISIONS.md "store check / store salvage").
StoreCommandOutcome Usage(const char* usage) { return {.exit_code = 2, .out = {}, .error = usage}; }

}  // namespace

StoreCommandOutcome RunStoreCheck(const std::vector<std::string>& args, const std::string& db_path) {
  if (!args.empty()) return Usage("usage: caveman-engine store check");
  auto r = CheckStore(db_path);
  if (!r.ok()) return {.exit_code = 1, .out = {}, .error = "store check: " + r.status().message()};
  JsonWriter w;
  w.BeginObject();
  WriteCheckMembers(*r, w);
  w.EndObject();
  return {.exit_code = r->damaged() ? kExitStoreDamaged : 0, .out = w.Take() + "\n", .error = {}};
}

StoreCommandOutcome RunStoreSalvage(const std::vector<std::string>& args, const std::string& db_path) {
  constexpr const char* kUsage = "usage: caveman-engine store salvage --to PATH";
  std::string to;
  if (args.size() == 2 && args[0] == "--to") {
    to = args[1];
  } else if (args.size() == 1 && args[0].starts_with("--to=")) {
    to = args[0].substr(5);
  } else {
    return Usage(kUsage);
  }
  if (to.empty()) return Usage(kUsage);
  StoreOptions target;
  if (auto env = StoreOptions::FromEnv(); env.ok()) {
    target = *env;  // capacity and zstd level of the environment
  }
  target.path = to;
  auto r = SalvageStore(db_path, target);
  if (!r.ok()) return {.exit_code = 1, .out = {}, .error = "store salvage: " + r.status().message()};
  JsonWriter w;
  w.BeginObject();
  WriteCheckMembers(r->check, w);
  w.Key("copied").Uint(r->copied).Key("partials_copied").Uint(r->partials_copied).Key("partial_ids").BeginObject();
  for (const auto& [old_id, new_id] : r->partial_ids) w.Key(old_id).String(new_id);
  w.EndObject().Key("lost");
  WriteList(r->lost, w);
  w.EndObject();
  std::string out = w.Take() + "\n";
  bool damaged = r->check.damaged() || !r->lost.empty();
  return {.exit_code = damaged ? kExitStoreDamaged : 0, .out = std::move(out), .error = {}};
}

}  // namespace caveman::internal
