// Inputs shared by the benchmark binaries: generated deterministically, outside timed loops.
#ifndef CAVEMAN_BENCH_BENCH_UTIL_H_
#define CAVEMAN_BENCH_BENCH_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <unistd.h>

#ifndef CAVEMAN_SOURCE_DIR
#define CAVEMAN_SOURCE_DIR "."
#endif

namespace caveman::bench {

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The synthetic CI log of scripts/gen_ci_log.py (`mib` MiB, truncated to exactly that size),
// or "" when python3 is unavailable. $CAVEMAN_CI_LOG overrides the generator.
inline const std::string& GeneratedCiLog(int mib) {
  static std::map<int, std::string> cache;
  auto it = cache.find(mib);
  if (it != cache.end()) return it->second;
  std::string text;
  if (const char* path = std::getenv("CAVEMAN_CI_LOG")) {
    text = ReadWholeFile(path);
  } else {
    char tmpl[] = "/tmp/caveman_bench_XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd >= 0) {
      close(fd);
      std::string cmd = "python3 " CAVEMAN_SOURCE_DIR "/scripts/gen_ci_log.py " + std::to_string(mib) + " > " + tmpl;
      if (std::system(cmd.c_str()) == 0) text = ReadWholeFile(tmpl);
      std::remove(tmpl);
      if (text.size() > static_cast<size_t>(mib) * 1048576) text.resize(static_cast<size_t>(mib) * 1048576);
    }
  }
  return cache.emplace(mib, std::move(text)).first->second;
}

}  // namespace caveman::bench

#endif  // CAVEMAN_BENCH_BENCH_UTIL_H_
