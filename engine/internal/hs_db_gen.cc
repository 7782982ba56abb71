// Build-time generator of the embedded Hyperscan databases (compressors/pattern_databases.h):
//   hs_db_gen OUT
// compiles every pattern database into an empty private cache directory of its own (the
// compressors' disk cache format), then writes each file as one blob entry: 32 hex key bytes,
// a little-endian uint64 length, the database as an image used in place at run time, or the
// file's bytes where an image cannot be made. Exit 0 and an empty OUT if Hyperscan cannot
// compile on this machine (the binaries then compile at run time, as without this step).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "compressors/pattern_databases.h"

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "hs_db_gen: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return Fail("usage: hs_db_gen OUT");
  std::string tmpl = "/tmp/caveman-hs-db-gen-XXXXXX";
  if (const char* t = std::getenv("TMPDIR"); t != nullptr && t[0] == '/') {
    tmpl = std::string(t) + "/caveman-hs-db-gen-XXXXXX";
  }
  if (mkdtemp(tmpl.data()) == nullptr) return Fail("cannot create a temporary directory");
  const std::string dir = tmpl;
  setenv("CAVEMAN_CACHE_DIR", dir.c_str(), 1);
  caveman::CompileAllPatternDatabases();

  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      // hs-<32 hex>.db
      if (name.size() == 3 + 32 + 3 && name.compare(0, 3, "hs-") == 0 && name.compare(35, 3, ".db") == 0) {
        names.push_back(name);
      }
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());  // the same bytes for the same databases
  std::string blob;
  size_t images = 0;
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    unlink(path.c_str());
    if (!in.good() && !in.eof()) return Fail("cannot read " + path);
    const std::string_view key = std::string_view(name).substr(3, 32);
    if (caveman::AppendPatternDatabaseImage(key, bytes, &blob)) {
      ++images;
    } else {
      caveman::AppendPatternDatabaseEntry(key, bytes, &blob);
    }
  }
  rmdir(dir.c_str());
  const std::string out = argv[1];
  const std::string tmp_out = out + ".tmp";
  {
    std::ofstream o(tmp_out, std::ios::binary | std::ios::trunc);
    o.write(blob.data(), static_cast<std::streamsize>(blob.size()));
    if (!o.good()) return Fail("cannot write " + tmp_out);
  }
  if (std::rename(tmp_out.c_str(), out.c_str()) != 0) return Fail("cannot rename to " + out);
  std::printf("hs_db_gen: %zu databases (%zu as images used in place), %zu bytes\n", names.size(), images, blob.size());
  return 0;
}
