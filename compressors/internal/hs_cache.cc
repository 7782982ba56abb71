#include "compressors/internal/hs_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "caveman/stream/byte_io.h"
#include "compressors/pattern_databases.h"
#include "stream/bits.h"
#include "stream/huge_pages.h"
#include "stream/sha256.h"

namespace caveman::internal {
namespace {

constexpr char kMagic[8] = {'C', 'V', 'H', 'S', 'D', 'B', '1', '\n'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 32;
constexpr off_t kMaxFileBytes = 64 << 20;
constexpr size_t kEmbeddedKeyBytes = 32;  // CacheKey: 16 bytes of SHA-256 in hex

// Hyperscan's database allocator: malloc, but a block of kPopulateBytes or more (a
// database deserialised from the disk cache or a file entry, or just compiled; the build-time
// image entries are used in place and allocate nothing) has its pages made present and
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

// An image entry (compressors/pattern_databases.h): kImageMagic, the image's ImageChecksum
// (8 bytes, little-endian), zero bytes up to the next multiple of kImageAlign from the start of
// the blob, then the database as hs_deserialize_database_at wrote it at an address that is a
// multiple of kImageAlign. Hyperscan places the bytecode by the database's address modulo 64
// and holds no pointers (its deserialisation is a header copy and a memcpy), so the image is
// a valid database wherever it lies at such an address: in the executable's read-only image,
// it is used in place. hs_db_gen checks the premise for the library it links (two addresses,
// the same bytes) and writes the serialised form otherwise.
constexpr char kImageMagic[8] = {'C', 'V', 'H', 'S', 'I', 'M', 'G', '1'};
constexpr size_t kImageAlign = 64;
constexpr size_t kImageHeaderBytes = sizeof(kImageMagic) + 8;
// Shorter than any database (Hyperscan's header alone is about 100 bytes): refused before
// hs_database_size reads the header.
constexpr size_t kMinImageBytes = 256;

uint64_t MixWord(uint64_t h, uint64_t w) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;  // odd: every step is a bijection of h
  h = (h ^ w) * kMul;
  return (h << 29) | (h >> 35);
}

// A checksum against accidental damage of an image (Hyperscan's own CRC-32C runs only when a
// scratch is allocated, where a failure would silently disable the patterns). Four lanes of
// 8-byte words, each step a bijection of the lane, so a change confined to one word always
// changes the result; about 0.03 ms for the 212 KB detection database, where SHA-256 took 0.2.
uint64_t ImageChecksum(std::string_view bytes) {
  uint64_t h[4] = {1, 2, 3, 4};
  const char* p = bytes.data();
  size_t n = bytes.size();
  auto block = [&h](const char* b) {
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, b + 8 * k, 8);
      h[k] = MixWord(h[k], w);
    }
  };
  for (; n >= 32; p += 32, n -= 32) block(p);
  if (n > 0) {
    char tail[32] = {};
    std::memcpy(tail, p, n);
    block(tail);
  }
  uint64_t r = bytes.size();
  for (uint64_t lane : h) r = MixWord(r, lane);
  return r;
}

size_t ImagePadding(size_t header_end) { return (kImageAlign - header_end % kImageAlign) % kImageAlign; }

// The database of an image entry `entry` that starts `offset` bytes into the blob, or nullptr
// if it is damaged. In place when it lies at a multiple of kImageAlign (the embedded blob),
// otherwise copied to memory that does (a blob registered from elsewhere).
const hs_database_t* FromImageEntry(std::string_view entry, size_t offset) {
  if (entry.size() < kImageHeaderBytes) return nullptr;
  const size_t pad = ImagePadding(offset + kImageHeaderBytes);
  if (entry.size() < kImageHeaderBytes + pad + kMinImageBytes) return nullptr;
  const std::string_view image = entry.substr(kImageHeaderBytes + pad);
  if (ImageChecksum(image) != LoadLe64(entry.data() + sizeof(kImageMagic))) return nullptr;
  const hs_database_t* db = reinterpret_cast<const hs_database_t*>(image.data());
  hs_database_t* copy = nullptr;
  if (reinterpret_cast<uintptr_t>(image.data()) % kImageAlign != 0) {
    void* p = std::aligned_alloc(kImageAlign, (image.size() + kImageAlign - 1) / kImageAlign * kImageAlign);
    if (p == nullptr) return nullptr;
    std::memcpy(p, image.data(), image.size());
    db = copy = static_cast<hs_database_t*>(p);  // freed through hs_free_database: std::free
  }
  size_t size = 0;
  if (hs_database_size(db, &size) != HS_SUCCESS || size != image.size()) {
    std::free(copy);
    return nullptr;
  }
  return db;
}

// The databases lent in place from a registered blob, which FreeCachedDatabase leaves alone
// (whatever blob is registered by then).
std::mutex lent_mu;
std::vector<const void*>* LentDatabases() {
  static auto* lent = new std::vector<const void*>();  // never destroyed: used at exit
  return lent;
}

const hs_database_t* LoadEmbedded(const std::string& key) {
  const char* p = embedded_begin.load(std::memory_order_acquire);
  if (p == nullptr || key.size() != kEmbeddedKeyBytes) return nullptr;
  const std::string_view blob(p, embedded_size.load(std::memory_order_acquire));
  std::string_view rest = blob;
  while (rest.size() >= kEmbeddedKeyBytes + 8) {
    const uint64_t n = LoadLe64(rest.data() + kEmbeddedKeyBytes);
    const std::string_view entry_key = rest.substr(0, kEmbeddedKeyBytes);
    rest.remove_prefix(kEmbeddedKeyBytes + 8);
    if (n > rest.size()) return nullptr;  // malformed: ignore the rest
    if (entry_key == key) {
      const std::string_view entry = rest.substr(0, n);
      if (entry.size() >= sizeof(kImageMagic) && std::memcmp(entry.data(), kImageMagic, sizeof(kImageMagic)) == 0) {
        const hs_database_t* db = FromImageEntry(entry, static_cast<size_t>(entry.data() - blob.data()));
        if (db != nullptr && reinterpret_cast<const char*>(db) >= entry.data() &&
            reinterpret_cast<const char*>(db) < entry.data() + entry.size()) {
          std::lock_guard<std::mutex> lock(lent_mu);
          LentDatabases()->push_back(db);
        }
        return db;
      }
      return FromFileBytes(entry, /*check_digest=*/false);
    }
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

const hs_database_t* CompileMultiCached(const char* const* expressions, const unsigned* flags, const unsigned* ids,
                                        unsigned count, std::string* error) {
  const std::string key = CacheKey(expressions, flags, ids, count);
  if (!key.empty()) {
    if (const hs_database_t* db = LoadEmbedded(key)) return db;
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

void FreeCachedDatabase(const hs_database_t* db) {
  if (db == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(lent_mu);
    std::vector<const void*>& lent = *LentDatabases();
    const auto it = std::find(lent.begin(), lent.end(), db);
    if (it != lent.end()) {  // in place: nothing to free
      lent.erase(it);
      return;
    }
  }
  hs_free_database(const_cast<hs_database_t*>(db));
}

}  // namespace caveman::internal

namespace caveman {

void AppendPatternDatabaseEntry(std::string_view key, std::string_view file_bytes, std::string* blob) {
  blob->append(key);
  internal::AppendLe64(file_bytes.size(), blob);
  blob->append(file_bytes);
}

bool AppendPatternDatabaseImage(std::string_view key, std::string_view file_bytes, std::string* blob) {
  using internal::kImageAlign;
  if (file_bytes.size() <= internal::kHeaderBytes ||
      std::memcmp(file_bytes.data(), internal::kMagic, sizeof(internal::kMagic)) != 0) {
    return false;
  }
  const std::string_view payload = file_bytes.substr(internal::kHeaderBytes);
  size_t size = 0;
  if (hs_serialized_database_size(payload.data(), payload.size(), &size) != HS_SUCCESS) return false;
  // Deserialised at two addresses that are multiples of kImageAlign but differ modulo every
  // larger power of two up to a page (one page aligned, the other 3 * kImageAlign past a page),
  // the bytes must be the same: the premise of using the image in place anywhere at such an
  // address.
  constexpr size_t kPage = 4096;
  std::string space(size + 2 * kPage, '\0');
  std::string other(size + 2 * kPage, '\0');
  auto aligned = [](std::string& s, size_t extra) {
    const auto at = reinterpret_cast<uintptr_t>(s.data());
    return s.data() + ((kPage - at % kPage) % kPage) + extra;
  };
  char* a = aligned(space, 0);
  char* b = aligned(other, 3 * kImageAlign);
  if (hs_deserialize_database_at(payload.data(), payload.size(), reinterpret_cast<hs_database_t*>(a)) != HS_SUCCESS ||
      hs_deserialize_database_at(payload.data(), payload.size(), reinterpret_cast<hs_database_t*>(b)) != HS_SUCCESS ||
      std::memcmp(a, b, size) != 0) {
    return false;
  }
  const std::string_view image(a, size);
  std::string entry(internal::kImageMagic, sizeof(internal::kImageMagic));
  internal::AppendLe64(internal::ImageChecksum(image), &entry);
  // The entry starts after the key and the length.
  entry.append(internal::ImagePadding(blob->size() + internal::kEmbeddedKeyBytes + 8 + internal::kImageHeaderBytes),
               '\0');
  entry.append(image);
  AppendPatternDatabaseEntry(key, entry, blob);
  return true;
}

void RegisterEmbeddedPatternDatabases(std::string_view blob) {
  internal::embedded_size.store(blob.size(), std::memory_order_release);
  internal::embedded_begin.store(blob.data(), std::memory_order_release);
}

}  // namespace caveman
