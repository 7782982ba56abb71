#include "cli/internal/store_command.h"

#include <cstdio>

#include "caveman/store/store.h"
#include "store/store_check.h"

namespace caveman::internal {
namespace {

void AppendString(std::string_view s, std::string& out) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void AppendList(const std::vector<std::string>& items, std::string& out) {
  out += '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    AppendString(items[i], out);
  }
  out += ']';
}

// The members shared by check and salvage, without the braces.
std::string CheckMembers(const StoreCheckReport& r) {
  std::string out = "\"integrity\":";
  if (r.integrity_ok()) {
    out += "\"ok\"";
  } else {
    AppendList(r.integrity, out);
  }
  out += ",\"records\":" + std::to_string(r.records) + ",\"ok\":" + std::to_string(r.ok) + ",\"corrupt\":";
  AppendList(r.corrupt, out);
  out += ",\"partials\":" + std::to_string(r.partials) + ",\"partials_ok\":" + std::to_string(r.partials_ok) +
         ",\"corrupt_partials\":";
  AppendList(r.corrupt_partials, out);
  out += ",\"unreadable_rows\":" + std::to_string(r.unreadable_rows);
  return out;
}

// Usage errors exit 2, as for every subcommand (docs/DECISIONS.md "store check / store salvage").
StoreCommandOutcome Usage(const char* usage) { return {.exit_code = 2, .out = {}, .error = usage}; }

}  // namespace

StoreCommandOutcome RunStoreCheck(const std::vector<std::string>& args, const std::string& db_path) {
  if (!args.empty()) return Usage("usage: caveman-engine store check");
  auto r = CheckStore(db_path);
  if (!r.ok()) return {.exit_code = 1, .out = {}, .error = "store check: " + r.status().message()};
  return {.exit_code = r->damaged() ? kExitStoreDamaged : 0, .out = "{" + CheckMembers(*r) + "}\n", .error = {}};
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
  std::string out = "{" + CheckMembers(r->check) + ",\"copied\":" + std::to_string(r->copied) +
                    ",\"partials_copied\":" + std::to_string(r->partials_copied) + ",\"partial_ids\":{";
  for (size_t i = 0; i < r->partial_ids.size(); ++i) {
    if (i > 0) out += ',';
    AppendString(r->partial_ids[i].first, out);
    out += ':';
    AppendString(r->partial_ids[i].second, out);
  }
  out += "},\"lost\":";
  AppendList(r->lost, out);
  out += "}\n";
  bool damaged = r->check.damaged() || !r->lost.empty();
  return {.exit_code = damaged ? kExitStoreDamaged : 0, .out = std::move(out), .error = {}};
}

}  // namespace caveman::internal
