#include "cli/internal/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

// toml++ 3.3.0 (Debian 12), compiled into this file in its header-only mode, asserts in
// parse_key a condition that malformed input such as "[[[" breaks, although its parser then
// reports that input as a parse error; with NDEBUG the same check becomes an optimiser
// assumption (__builtin_assume under clang). Neither may happen to a user's file: the
// assertion is a no-op, and NDEBUG is lifted while the library is read so that no check turns
// into an assumption (it only drops toml++'s pure/const attributes). Found by the ASan build
// (cli.config-help-ignores-bad-file aborted); cli.config-bad-syntax covers "[[[".
#ifdef NDEBUG
#define CAVEMAN_CONFIG_HAD_NDEBUG
#undef NDEBUG
#endif
#define TOML_HEADER_ONLY 1  // instead of libtomlplusplus.so (cli/CMakeLists.txt)
#define TOML_ASSERT(expr) static_cast<void>(0)
#include <toml++/toml.h>
#ifdef CAVEMAN_CONFIG_HAD_NDEBUG
#define NDEBUG
#undef CAVEMAN_CONFIG_HAD_NDEBUG
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace caveman::internal {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

Status ErrorAt(const std::string& file, const toml::source_region& where, const std::string& message) {
  return Status::InvalidArgument("config " + file + ":" + std::to_string(where.begin.line) + ":" +
                                 std::to_string(where.begin.column) + ": " + message);
}

std::string ExpandHome(std::string_view path) {
  if (path == "~" || path.starts_with("~/")) return Env("HOME").append(path.substr(1));
  return std::string(path);
}

Result<std::string> String(const std::string& file, const std::string& key, const toml::node& node) {
  if (const toml::value<std::string>* v = node.as_string()) return v->get();
  return ErrorAt(file, node.source(), key + ": expected a string");
}

Status ParseStore(const std::string& file, const toml::table& t, Config* c) {
  for (const auto& [k, node] : t) {
    const std::string key = "store." + std::string(k.str());
    if (k == "path") {
      CAVEMAN_ASSIGN_OR_RETURN(std::string v, String(file, key, node));
      if (v.empty()) return ErrorAt(file, node.source(), key + ": empty path");
      c->store_path = ExpandHome(v);
    } else if (k == "max_bytes") {
      auto v = node.value_exact<int64_t>();
      if (!v || *v <= 0) return ErrorAt(file, node.source(), key + ": expected a positive integer (bytes)");
      c->store_max_bytes = static_cast<uint64_t>(*v);
    } else if (k == "url") {
      CAVEMAN_ASSIGN_OR_RETURN(std::string v, String(file, key, node));
      c->store_url = v;
    } else {
      return ErrorAt(file, k.source(), "unknown key " + key + " (path, max_bytes, url)");
    }
  }
  return Status::OK();
}

Status ParseCompress(const std::string& file, const toml::table& t, Config* c) {
  for (const auto& [k, node] : t) {
    const std::string key = "compress." + std::string(k.str());
    if (k == "min_savings") {
      std::optional<double> v = node.value<double>();  // integers too (0)
      if (!v || !(*v >= 0 && *v < 1))
        return ErrorAt(file, node.source(), key + ": expected a number from 0 to below 1");
      c->min_savings = *v;
    } else if (k == "never") {
      const toml::array* a = node.as_array();
      if (a == nullptr) return ErrorAt(file, node.source(), key + ": expected an array of content types");
      for (const toml::node& e : *a) {
        CAVEMAN_ASSIGN_OR_RETURN(std::string v, String(file, key + "[]", e));
        c->never_types.push_back(v);
      }
    } else {
      return ErrorAt(file, k.source(), "unknown key " + key + " (min_savings, never)");
    }
  }
  return Status::OK();
}

Status ParseRun(const std::string& file, const toml::table& t, Config* c) {
  for (const auto& [program, node] : t) {
    const toml::table* pt = node.as_table();
    const std::string prefix = "run." + std::string(program.str());
    if (pt == nullptr) return ErrorAt(file, node.source(), prefix + ": expected a table ([" + prefix + "])");
    RunCommandConfig rc;
    for (const auto& [k, v] : *pt) {
      const std::string key = prefix + "." + std::string(k.str());
      if (k == "type") {
        CAVEMAN_ASSIGN_OR_RETURN(std::string s, String(file, key, v));
        rc.type = s;
      } else if (k == "query") {
        CAVEMAN_ASSIGN_OR_RETURN(std::string s, String(file, key, v));
        rc.query = s;
      } else if (k == "never") {
        auto b = v.value_exact<bool>();
        if (!b) return ErrorAt(file, v.source(), key + ": expected true or false");
        rc.never = *b;
      } else {
        return ErrorAt(file, k.source(), "unknown key " + key + " (type, query, never)");
      }
    }
    c->run[std::string(program.str())] = rc;
  }
  return Status::OK();
}

}  // namespace

std::string ConfigPath() {
  std::string xdg = Env("XDG_CONFIG_HOME");
  // The XDG Base Directory specification ignores a relative value.
  if (!xdg.empty() && xdg.front() == '/') return xdg + "/caveman/config.toml";
  std::string home = Env("HOME");
  if (home.empty()) return "";
  return home + "/.config/caveman/config.toml";
}

Result<Config> ParseConfig(const std::string& text, const std::string& name) {
  Config c;
  c.file = name;
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    return ErrorAt(name, e.source(), std::string(e.description()));
  }
  for (const auto& [k, node] : root) {
    const toml::table* t = node.as_table();
    if (t == nullptr || (k != "store" && k != "compress" && k != "run")) {
      return ErrorAt(name, k.source(),
                     "unknown key " + std::string(k.str()) + " (tables: [store], [compress], [run.PROGRAM])");
    }
    if (k == "store") CAVEMAN_RETURN_IF_ERROR(ParseStore(name, *t, &c));
    if (k == "compress") CAVEMAN_RETURN_IF_ERROR(ParseCompress(name, *t, &c));
    if (k == "run") CAVEMAN_RETURN_IF_ERROR(ParseRun(name, *t, &c));
  }
  return c;
}

Result<Config> LoadConfig() {
  const std::string path = ConfigPath();
  if (path.empty()) return Config{};
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT || errno == ENOTDIR) return Config{};
    return Status::InvalidArgument("config " + path + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::InvalidArgument("config " + path + ": read error");
  return ParseConfig(text.str(), path);
}

void ApplyStoreEnvironment(const Config& config) {
  auto set_default = [](const char* name, const std::string& value) {
    if (std::getenv(name) == nullptr) setenv(name, value.c_str(), 0);
  };
  if (config.store_path && std::getenv("CAVEMAN_HOME") == nullptr) set_default("CAVEMAN_CCR_DB", *config.store_path);
  if (config.store_max_bytes) set_default("CAVEMAN_CCR_MAX_BYTES", std::to_string(*config.store_max_bytes));
  if (config.store_url) set_default("CAVEMAN_CCR_URL", *config.store_url);
}

EngineOptions CliEngineOptions(RecoveryStore* store) {
  EngineOptions o;
  o.store = store;
  const char* v = std::getenv("CAVE_ENGINE_TOON");
  std::string lower = v != nullptr ? v : "";
  for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  o.json_best_of = lower == "best-of";
  return o;
}

void TuneProcessAllocator() {
#if defined(__GLIBC__)
  // glibc raises its mmap threshold each time a large block is freed, after which the
  // pipeline's 64 KiB-4 MiB buffers (chunks, spool memory, token-count carries) come from the
  // heap, fragment it and stay resident: 64 MiB CI log peak RSS 50 MiB instead of 43 MiB,
  // and RSS that seems to grow with the input. Fixing the threshold at glibc's default
  // (128 KiB) keeps large blocks in mmap, returned on free; no measurable CPU cost.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

}  // namespace caveman::internal
