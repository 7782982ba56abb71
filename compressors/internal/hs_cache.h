// Compiled Hyperscan databases cached on disk (issue 19: compiling the detection and log
// pattern databases was ~60 % of a small `compress`, 0.25 s of CPU for a 4 KiB input).
//
// CompileMultiCached() behaves as hs_compile_multi(…, HS_MODE_BLOCK, platform = host): on the
// first call for a pattern set it compiles and stores hs_serialize_database()'s bytes in the
// cache directory; later processes deserialise them instead (milliseconds). The cache file is
// named by the SHA-256 of the Hyperscan version, the host platform, the mode and every
// expression, flag and id, and carries the SHA-256 of its payload, so a stale, foreign or
// damaged file is never used. Before the disk, the databases compiled at build time are looked
// up by the same key (compressors/pattern_databases.h), once the Engine registered them. Directory: $CAVEMAN_CACHE_DIR, else $XDG_CACHE_HOME/caveman-engine,
// else $HOME/.cache/caveman-engine; `CAVEMAN_CACHE_DIR=` (empty) disables the cache. The
// directory must be owned by the effective user and not writable by group or others, and so
// must each file; anything else is ignored (compiled in memory instead). Every cache failure
// degrades to compiling: the result is the same database either way.
//
// Thread-safety: safe to call concurrently (writes go to a temporary file renamed into place).
#ifndef CAVEMAN_COMPRESSORS_INTERNAL_HS_CACHE_H_
#define CAVEMAN_COMPRESSORS_INTERNAL_HS_CACHE_H_

#include <hs/hs.h>

#include <string>

namespace caveman::internal {

// hs_compile_multi in block mode for the host platform, through the cache. On failure returns
// nullptr and, if `error` is non-null, the compiler's message. The database may be the
// registered blob's own bytes, used in place (read-only): release it with FreeCachedDatabase,
// never hs_free_database.
const hs_database_t* CompileMultiCached(const char* const* expressions, const unsigned* flags, const unsigned* ids,
                                        unsigned count, std::string* error);

// Frees a database from CompileMultiCached, unless it was lent in place from a registered blob
// (then only forgets it, whichever blob is registered by now). nullptr is ignored.
void FreeCachedDatabase(const hs_database_t* db);

// The cache directory CompileMultiCached uses ("" when disabled). Exposed for tests.
std::string HsCacheDirectory();

}  // namespace caveman::internal

#endif  // CAVEMAN_COMPRESSORS_INTERNAL_HS_CACHE_H_
