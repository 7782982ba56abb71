// Build-time compiled Hyperscan databases (issue 19: small-input fixed cost).
//
// The detection and log pattern databases are compiled while the project is built
// (engine/internal/hs_db_gen.cc writes them, engine/hs_databases.S embeds them) and handed to
// the compressors once, before first use, by whoever links them in (the Engine constructor).
// CompileMultiCached (compressors/internal/hs_cache.h) then looks a pattern set up there
// first, by the same key as its disk cache — the SHA-256 of the Hyperscan version, the host
// platform and the patterns — so an embedded database is only used on a CPU that Hyperscan
// describes exactly as the build machine; anything else falls back to the disk cache or a
// compile, with the same result. Binaries that never register (the generator itself, unit
// tests of single compressors) simply compile or use the disk cache.
//
// Blob layout, repeated: 32 ASCII hex key bytes, a little-endian uint64 length, then that many
// bytes: either in the disk cache's file format (magic, SHA-256 of the payload, payload), or an
// image: the database already deserialised, which a blob lying at a multiple of 64 bytes (as
// engine/hs_databases.S places it) lends in place, with no copy, zero-filling or fresh pages
// (issue 19: ≈ 0.6 ms of every small run for the detection database on a virtual machine
// whose first touch of a page costs 6–50 µs). Layout of an image in compressors/internal/hs_cache.cc.
//
// Thread-safety: RegisterEmbeddedPatternDatabases may be called from several threads (every
// call passes the same bytes); the bytes must live as long as the process.
#ifndef CAVEMAN_COMPRESSORS_PATTERN_DATABASES_H_
#define CAVEMAN_COMPRESSORS_PATTERN_DATABASES_H_

#include <string>
#include <string_view>

namespace caveman {

void RegisterEmbeddedPatternDatabases(std::string_view blob);

// Appends one blob entry (the layout above) to `blob`. REQUIRES: key.size() == 32.
void AppendPatternDatabaseEntry(std::string_view key, std::string_view file_bytes, std::string* blob);

// Appends the database of `file_bytes` (the disk cache's file format) to `blob` as an image
// entry and returns true; returns false and appends nothing when the bytes are not a database
// for this Hyperscan and platform, or when this Hyperscan's deserialised databases are not the
// same bytes at every 64-byte aligned address (then the file entry is the one to append).
// REQUIRES: key.size() == 32.
bool AppendPatternDatabaseImage(std::string_view key, std::string_view file_bytes, std::string* blob);

// Compiles every Hyperscan pattern database the compressors use (through CompileMultiCached,
// so into the disk cache directory when one is set). For the build-time generator.
void CompileAllPatternDatabases();

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_PATTERN_DATABASES_H_
