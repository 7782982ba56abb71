// Who writes a partial record, and whether that writer still runs: "host:pid:start", where
// start is the process start time in clock ticks since boot (/proc/<pid>/stat field 22), so a
// recycled pid is not mistaken for the writer. No SQLite here.
#ifndef CAVEMAN_STORE_INTERNAL_WRITER_IDENTITY_H_
#define CAVEMAN_STORE_INTERNAL_WRITER_IDENTITY_H_

#include <string>
#include <string_view>

namespace caveman::internal {

// This process's identity.
std::string CurrentWriterIdentity();

// True if `identity` names a process on this host that is still running (same pid and start
// time). False for other hosts (unknown), malformed identities, and exited processes.
bool WriterAlive(std::string_view identity);

// True if `identity` was written by a process on this host (a shared PostgreSQL store holds
// partial records of other hosts, whose liveness cannot be checked from here).
bool WriterOnThisHost(std::string_view identity);

// "host:pid" for display.
std::string WriterDisplay(std::string_view identity);

// A fresh partial record id: "part_" + 32 lowercase hex digits from the kernel's random source.
std::string NewPartialId();

}  // namespace caveman::internal

#endif  // CAVEMAN_STORE_INTERNAL_WRITER_IDENTITY_H_
