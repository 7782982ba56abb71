// The on-disk cache of compiled Hyperscan databases (compressors/internal/hs_cache.h).
#include "compressors/internal/hs_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "compressors/pattern_databases.h"

namespace caveman {
namespace {

namespace fs = std::filesystem;

const char* const kExprs[] = {R"(\bERROR\b)", "caveman", R"(^\s+at\s)"};
const unsigned kFlags[] = {HS_FLAG_CASELESS, 0, HS_FLAG_MULTILINE};
const unsigned kIds[] = {7, 8, 9};

// Match ids found in `text`, in order.
std::vector<unsigned> Scan(const hs_database_t* db, const std::string& text) {
  hs_scratch_t* scratch = nullptr;
  EXPECT_EQ(hs_alloc_scratch(db, &scratch), HS_SUCCESS);
  std::vector<unsigned> ids;
  hs_scan(
      db, text.data(), static_cast<unsigned>(text.size()), 0, scratch,
      [](unsigned id, unsigned long long, unsigned long long, unsigned, void* ctx) {
        static_cast<std::vector<unsigned>*>(ctx)->push_back(id);
        return 0;
      },
      &ids);
  hs_free_scratch(scratch);
  return ids;
}

class HsCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hs_cache_test." + std::to_string(getpid()));
    fs::remove_all(dir_);
    setenv("CAVEMAN_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    unsetenv("CAVEMAN_CACHE_DIR");
    fs::remove_all(dir_);
  }
  const hs_database_t* Compile() {
    std::string error;
    const hs_database_t* db = internal::CompileMultiCached(kExprs, kFlags, kIds, 3, &error);
    EXPECT_NE(db, nullptr) << error;
    return db;
  }
  std::vector<fs::path> Files() {
    std::vector<fs::path> v;
    if (!fs::exists(dir_ / "cache")) return v;
    for (const auto& e : fs::directory_iterator(dir_ / "cache")) v.push_back(e.path());
    return v;
  }
  fs::path dir_;
  const std::string text_ = "ok\nerror: x\n   at f (a.js:1)\ncaveman\n";
  const std::vector<unsigned> want_ = {7, 9, 8};
};

TEST_F(HsCacheTest, FirstCallStoresLaterCallsLoadTheSameDatabase) {
  const hs_database_t* first = Compile();
  ASSERT_EQ(Files().size(), 1u);
  EXPECT_EQ(Scan(first, text_), want_);
  struct stat st;
  ASSERT_EQ(stat((dir_ / "cache").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(Files()[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const auto mtime = fs::last_write_time(Files()[0]);
  const hs_database_t* second = Compile();  // loaded: the file is not rewritten
  EXPECT_EQ(Scan(second, text_), want_);
  EXPECT_EQ(fs::last_write_time(Files()[0]), mtime);
  EXPECT_EQ(Files().size(), 1u);
  internal::FreeCachedDatabase(first);
  internal::FreeCachedDatabase(second);
  // A different pattern set gets its own file.
  const char* const other[] = {"WARN"};
  const unsigned f0[] = {0}, i0[] = {1};
  const hs_database_t* db = internal::CompileMultiCached(other, f0, i0, 1, nullptr);
  ASSERT_NE(db, nullptr);
  internal::FreeCachedDatabase(db);
  EXPECT_EQ(Files().size(), 2u);
}

TEST_F(HsCacheTest, DamagedOrForeignFilesAreNeverUsed) {
  internal::FreeCachedDatabase(Compile());
  ASSERT_EQ(Files().size(), 1u);
  const fs::path file = Files()[0];
  // Flip one payload byte: the checksum no longer matches, so it is recompiled and rewritten.
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  const hs_database_t* db = Compile();
  EXPECT_EQ(Scan(db, text_), want_);
  internal::FreeCachedDatabase(db);
  // Truncated to its header.
  fs::resize_file(file, 20);
  db = Compile();
  EXPECT_EQ(Scan(db, text_), want_);
  internal::FreeCachedDatabase(db);
  // A group-writable file is ignored (and not replaced through).
  fs::permissions(file, fs::perms::group_write, fs::perm_options::add);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "garbage";
  db = Compile();
  EXPECT_EQ(Scan(db, text_), want_);
  internal::FreeCachedDatabase(db);
}

TEST_F(HsCacheTest, SharedDirectoryOrEmptySettingMeansNoCache) {
  fs::create_directories(dir_ / "cache");
  fs::permissions(dir_ / "cache", fs::perms::all);  // 0777: others could plant files
  const hs_database_t* db = Compile();
  EXPECT_EQ(Scan(db, text_), want_);
  internal::FreeCachedDatabase(db);
  EXPECT_TRUE(Files().empty());
  setenv("CAVEMAN_CACHE_DIR", "", 1);
  EXPECT_EQ(internal::HsCacheDirectory(), "");
  db = Compile();
  EXPECT_EQ(Scan(db, text_), want_);
  internal::FreeCachedDatabase(db);
}

}  // namespace
}  // namespace caveman

namespace caveman {
namespace {

// One blob entry (compressors/pattern_databases.h) from a cache file.
std::string BlobEntry(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string name = file.filename().string();  // hs-<32 hex>.db
  std::string entry;
  AppendPatternDatabaseEntry(std::string_view(name).substr(3, 32), bytes, &entry);
  return entry;
}

// Build-time databases (issue 19): a registered blob is used before the disk cache (nothing is
// compiled or written), a damaged entry is ignored (compiled and cached instead), and a
// process-wide registration is undone by registering an empty blob.
TEST_F(HsCacheTest, RegisteredBlobIsUsedFirstAndADamagedEntryIgnored) {
  internal::FreeCachedDatabase(Compile());
  ASSERT_EQ(Files().size(), 1u);
  const fs::path file = Files()[0];
  static std::string blob;  // must outlive the registration
  const char* const other[] = {"WARN"};
  const unsigned f0[] = {0}, i0[] = {1};
  blob.clear();
  AppendPatternDatabaseEntry("0123456789abcdef0123456789abcdef", "", &blob);  // an empty entry first
  blob += BlobEntry(file);
  fs::remove(file);
  RegisterEmbeddedPatternDatabases(blob);

  const hs_database_t* db = Compile();
  EXPECT_EQ(Scan(db, text_), want_);
  internal::FreeCachedDatabase(db);
  EXPECT_TRUE(Files().empty()) << "the registered database was compiled again";
  // A pattern set that is not in the blob still compiles (and is cached).
  const hs_database_t* w = internal::CompileMultiCached(other, f0, i0, 1, nullptr);
  ASSERT_NE(w, nullptr);
  internal::FreeCachedDatabase(w);
  EXPECT_EQ(Files().size(), 1u);
  fs::remove_all(dir_ / "cache");

  // A damaged entry never yields wrong matches: the build-time databases skip the SHA-256
  // (they are part of the executable), and Hyperscan's own checks (header, CRC-32C of the
  // bytecode) refuse damage to the database, which is then compiled and cached instead. A
  // flip that neither refuses (our header's digest, alignment padding) must scan the same.
  const std::string intact = blob;
  const size_t file_start = 2 * (32 + 8);  // past the empty entry and this one's key and size
  size_t refused = 0, tried = 0;
  for (size_t at = file_start; at < intact.size(); at += 53) {
    fs::remove_all(dir_ / "cache");
    blob = intact;
    blob[at] ^= 0x01;
    RegisterEmbeddedPatternDatabases(blob);
    db = Compile();
    EXPECT_EQ(Scan(db, text_), want_) << "byte " << at;
    internal::FreeCachedDatabase(db);
    ++tried;
    refused += Files().size();  // compiled and cached: the entry was refused
  }
  blob = intact;
  blob[blob.size() - 200] ^= 0x01;  // inside the bytecode
  RegisterEmbeddedPatternDatabases(blob);
  fs::remove_all(dir_ / "cache");
  db = Compile();
  EXPECT_EQ(Scan(db, text_), want_);
  internal::FreeCachedDatabase(db);
  EXPECT_EQ(Files().size(), 1u) << "a damaged database must be ignored and the set compiled";
  EXPECT_GT(refused * 10, tried * 9) << refused << " of " << tried << " flips refused";

  RegisterEmbeddedPatternDatabases({});
}

// Image entries (issue 19): the database already deserialised. A blob at a multiple of 64
// bytes, as the executable embeds it, lends the database in place (no copy); elsewhere it is
// copied. Both scan as the compiled database, nothing is compiled, and a damaged image is
// refused and the set compiled instead.
TEST_F(HsCacheTest, ImageEntriesAreUsedInPlaceAndADamagedImageRefused) {
  internal::FreeCachedDatabase(Compile());
  ASSERT_EQ(Files().size(), 1u);
  const fs::path file = Files()[0];
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = file.filename().string().substr(3, 32);
  std::string built;
  AppendPatternDatabaseEntry("0123456789abcdef0123456789abcdef", "x", &built);  // an entry first
  ASSERT_TRUE(AppendPatternDatabaseImage(key, bytes, &built));
  EXPECT_FALSE(AppendPatternDatabaseImage(key, bytes.substr(0, bytes.size() / 2), &built));
  EXPECT_FALSE(AppendPatternDatabaseImage(key, "not a database", &built));
  fs::remove(file);

  // The blob at a multiple of 64, then 8 bytes past one.
  static std::string storage;  // must outlive the registrations
  storage.assign(built.size() + 128, '\0');
  const auto base = reinterpret_cast<uintptr_t>(storage.data());
  char* const aligned = storage.data() + (64 - base % 64) % 64;
  for (size_t shift : {size_t{0}, size_t{8}}) {
    SCOPED_TRACE(shift);
    char* const at = aligned + shift;
    std::memcpy(at, built.data(), built.size());
    const std::string_view blob(at, built.size());
    RegisterEmbeddedPatternDatabases(blob);
    fs::remove_all(dir_ / "cache");
    const hs_database_t* db = Compile();
    EXPECT_EQ(Scan(db, text_), want_);
    const auto p = reinterpret_cast<uintptr_t>(db);
    const bool in_place = p >= reinterpret_cast<uintptr_t>(at) && p < reinterpret_cast<uintptr_t>(at) + built.size();
    EXPECT_EQ(in_place, shift == 0);
    RegisterEmbeddedPatternDatabases({});  // a lent database is still released correctly
    internal::FreeCachedDatabase(db);
    EXPECT_TRUE(Files().empty()) << "the image was not used";

    // Every 97th byte flipped: the image's bytes are checked, so a flip there is refused; a
    // flip elsewhere (the other entry, the padding) must scan the same.
    const std::string intact(blob);
    const size_t image_start = built.size() - (bytes.size() - 40);  // never past the image's start
    size_t refused = 0, in_image = 0;
    for (size_t i = 0; i < built.size(); i += 97) {
      std::memcpy(at, intact.data(), intact.size());
      at[i] ^= 0x10;
      RegisterEmbeddedPatternDatabases(blob);
      fs::remove_all(dir_ / "cache");
      db = Compile();
      EXPECT_EQ(Scan(db, text_), want_) << "byte " << i;
      internal::FreeCachedDatabase(db);
      const bool compiled = !Files().empty();
      refused += compiled;
      if (i >= image_start) {
        ++in_image;
        EXPECT_TRUE(compiled) << "a flip of byte " << i << " inside the image was not refused";
      }
    }
    EXPECT_GT(in_image, 10u);
    EXPECT_GE(refused, in_image);
    std::memcpy(at, intact.data(), intact.size());
  }
  RegisterEmbeddedPatternDatabases({});
}

}  // namespace
}  // namespace caveman
