#include "compressors/internal/hs_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "caveman/stream/byte_io.h"
#include "compressors/pattern_databases.h"
#include "stream/huge_pages.h"
#include "stream/sha256.h"

namespace caveman::internal {
namespace {

constexpr char kMagic[8] = {'C', 'V', 'H', 'S', 'D', 'B', '1', '\n'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 32;
constexpr off_t kMaxFileBytes = 64 << 20;
constexpr size_t kEmbeddedKeyBytes = 32;  // CacheKey: 16 bytes of SHA-256 in hex

// Hyperscan's database allocator: malloc, but a block of kPopulateBytes or more (a
// deserialised database: the detection database is ≈ 240 KB) has its pages made present and
// writable in one madvise(MADV_POPULATE_WRITE) before Hyperscan zero-fills and copies into it,
// instead of one page fault per 4 KiB page (≈ 60 faults, a few µs each in a virtual machine:
// ≈ 0.3 ms of every small `compress`, issue 19). Best effort: without the call (kernels before
// 5.14) the pages fault in as before. Installed before main, so every database, compiled or
// deserialised, comes from it and goes back through free.
constexpr size_t kPopulateBytes = 64 << 10;

void* AllocateDatabase(size_t bytes) {
  void* p = std::malloc(bytes);
  if (p != nullptr && bytes >= kPopulateBytes) {
    AdviseWholePages(p, bytes, static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)), MADV_POPULATE_WRITE);
  }
  return p;
}

void FreeDatabase(void* p) { std::free(p); }

[[maybe_unused]] const bool kDatabaseAllocatorSet =
    hs_set_database_allocator(AllocateDatabase, FreeDatabase) == HS_SUCCESS;

// Owned by us and writable by nobody else.
bool Private(const struct stat& st) { return st.st_uid == geteuid() && (st.st_mode & 022) == 0; }

// The directory exists (created 0700 if missing, parents included) and is private.
bool EnsurePrivateDirectory(const std::string& dir) {
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode) && Private(st);
  if (errno != ENOENT) return false;
  const size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    const std::string parent = dir.substr(0, slash);
    struct stat pst;
    if (stat(parent.c_str(), &pst) != 0) {
      if (errno != ENOENT || mkdir(parent.c_str(), 0700) != 0) return false;
    }
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && Private(st);
}

std::string CacheKey(const char* const* expressions, const unsigned* flags, const unsigned* ids, unsigned count) {
  Sha256 h;
  h.Update(hs_version());
  hs_platform_info_t platform;
  std::memset(&platform, 0, sizeof(platform));
  if (hs_populate_platform(&platform) != HS_SUCCESS) return "";
  h.Update(std::string_view(reinterpret_cast<const char*>(&platform), sizeof(platform)));
  const unsigned header[2] = {HS_MODE_BLOCK, count};
  h.Update(std::string_view(reinterpret_cast<const char*>(header), sizeof(header)));
  for (unsigned i = 0; i < count; ++i) {
    h.Update(std::string_view(expressions[i], std::strlen(expressions[i]) + 1));  // NUL included
    const unsigned fi[2] = {flags[i], ids[i]};
    h.Update(std::string_view(reinterpret_cast<const char*>(fi), sizeof(fi)));
  }
  return Sha256::Hex(h.Final(), 16);
}

// A database from the bytes of a cache file (magic, SHA-256 of the payload, payload), or
// nullptr if they are not one, damaged, or for another platform. `check_digest` = false
// skips the SHA-256 for the build-time databases, which are part of the executable's own
// read-only image (≈ 0.2 ms of every small run for the 198 KB detection database, issue 19);
// Hyperscan still checks its CRC-32C of the bytecode as it deserializes.
hs_database_t* FromFileBytes(std::string_view bytes, bool check_digest) {
  if (bytes.size() <= kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) return nullptr;
  const std::string_view payload = bytes.substr(kHeaderBytes);
  if (check_digest) {
    const std::array<uint8_t, 32> digest = Sha256::Digest(payload);
    if (std::memcmp(digest.data(), bytes.data() + sizeof(kMagic), digest.size()) != 0) return nullptr;
  }
  hs_database_t* db = nullptr;
  if (hs_deserialize_database(payload.data(), payload.size(), &db) != HS_SUCCESS) return nullptr;
  return db;
}

hs_database_t* Load(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  std::string bytes;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && Private(st) && st.st_size > static_cast<off_t>(kHeaderBytes) &&
      st.st_size <= kMaxFileBytes) {
    bytes.reserve(static_cast<size_t>(st.st_size));
    if (!ReadAll(*NewFdSource(fd), &bytes, static_cast<uint64_t>(kMaxFileBytes)).ok()) bytes.clear();
  }
  close(fd);
  return FromFileBytes(bytes, /*check_digest=*/true);
}

// The build-time databases (compressors/pattern_databases.h), empty until registered.
std::atomic<const char*> embedded_begin{nullptr};
std::atomic<size_t> embedded_size{0};

hs_database_t* LoadEmbedded(const std::string& key) {
  const char* p = embedded_begin.load(std::memory_order_acquire);
  if (p == nullptr || key.size() != kEmbeddedKeyBytes) return nullptr;
  std::string_view rest(p, embedded_size.load(std::memory_order_acquire));
  while (rest.size() >= kEmbeddedKeyBytes + 8) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(rest[kEmbeddedKeyBytes + i]);
    const std::string_view entry_key = rest.substr(0, kEmbeddedKeyBytes);
    rest.remove_prefix(kEmbeddedKeyBytes + 8);
    if (n > rest.size()) return nullptr;  // malformed: ignore the rest
    if (entry_key == key) return FromFileBytes(rest.substr(0, n), /*check_digest=*/false);
    rest.remove_prefix(n);
  }
  return nullptr;
}

void Store(const std::string& dir, const std::string& path, const hs_database_t* db) {
  char* serialized = nullptr;
  size_t length = 0;
  if (hs_serialize_database(db, &serialized, &length) != HS_SUCCESS) return;
  const std::string_view payload(serialized, length);
  const std::array<uint8_t, 32> digest = Sha256::Digest(payload);
  std::string file(kMagic, sizeof(kMagic));
  file.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  file.append(payload);
  std::free(serialized);  // Hyperscan's default misc allocator is malloc
  std::string tmp = dir + "/.hs-XXXXXX";
  const int fd = mkostemp(tmp.data(), O_CLOEXEC);  // mode 0600
  if (fd < 0) return;
  bool ok = false;
  {
    std::unique_ptr<ByteSink> sink = NewFdSink(fd);
    ok = sink->Write(file).ok() && sink->Flush().ok();
  }
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) unlink(tmp.c_str());
}

}  // namespace

std::string HsCacheDirectory() {
  if (const char* c = std::getenv("CAVEMAN_CACHE_DIR")) return c;  // "" disables
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && x[0] == '/') {
    return std::string(x) + "/caveman-engine";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && h[0] == '/') {
    return std::string(h) + "/.cache/caveman-engine";
  }
  return "";
}

hs_database_t* CompileMultiCached(const char* const* expressions, const unsigned* flags, const unsigned* ids,
                                  unsigned count, std::string* error) {
  const std::string key = CacheKey(expressions, flags, ids, count);
  if (!key.empty()) {
    if (hs_database_t* db = LoadEmbedded(key)) return db;
  }
  const std::string dir = HsCacheDirectory();
  std::string path;
  if (!dir.empty() && !key.empty()) path = dir + "/hs-" + key + ".db";
  if (!path.empty()) {
    if (hs_database_t* db = Load(path)) return db;
  }
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_multi(expressions, flags, ids, count, HS_MODE_BLOCK, nullptr, &db, &err) != HS_SUCCESS) {
    if (error != nullptr) *error = err != nullptr ? err->message : "hs_compile_multi failed";
    hs_free_compile_error(err);
    return nullptr;
  }
  if (!path.empty() && EnsurePrivateDirectory(dir)) Store(dir, path, db);
  return db;
}

}  // namespace caveman::internal

namespace caveman {

void AppendPatternDatabaseEntry(std::string_view key, std::string_view file_bytes, std::string* blob) {
  blob->append(key);
  const uint64_t n = file_bytes.size();
  for (int i = 0; i < 8; ++i) blob->push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  blob->append(file_bytes);
}

void RegisterEmbeddedPatternDatabases(std::string_view blob) {
  internal::embedded_size.store(blob.size(), std::memory_order_release);
  internal::embedded_begin.store(blob.data(), std::memory_order_release);
}

}  // namespace caveman
