// A recovery store opened on a thread of its own (issue 19). Opening the SQLite store (the
// connection, SQLite's built-in functions, the schema and layout checks, the companions'
// ownership) costs ≈ 1.9 ms of a 4 KiB `compress` of ≈ 14 ms, and nothing in it depends on
// the input; so `compress` starts it first and reads, detects and compresses meanwhile.
//
// A record begun before the open has ended is framed as usual (SHA-256 and zstd need no
// connection: FramedRecordWriter) and handed to the opened store at Commit, which waits for
// the open. Every other call waits for the open, then goes to the store. If the open failed,
// every call returns its error (as the CLI's UnavailableStore does; a record begun after the
// failure is refused at once): a lossy result then passes through with cave_ccr_unavailable
// because its Commit fails, as when the open failed before the run. If no thread can be
// started, the open runs at once, in the caller.
//
// HowTo:
//   auto store = OpenRecoveryStoreInBackground(options);   // returns at once
//   Engine engine(EngineOptions{.store = store.get()});   // records begin before the open ends
//   ... engine.Compress(...) ...
//   if (RecoveryStore* opened = store->Wait()) ...         // the store itself, or nullptr
//
// Thread-safety: as RecoveryStore (one caller thread at a time); the opening thread touches
// nothing but its own result until Wait() has joined it.
#ifndef CAVEMAN_STORE_BACKGROUND_STORE_H_
#define CAVEMAN_STORE_BACKGROUND_STORE_H_

#include <functional>
#include <memory>

#include "caveman/store/store.h"

namespace caveman {

class OpeningStore : public RecoveryStore {
 public:
  // Waits for the open to end: the opened store (OpenRecoveryStore's), or nullptr if it failed
  // (open_status() then says why). Idempotent.
  virtual RecoveryStore* Wait() = 0;
  // REQUIRES: Wait() has returned.
  virtual const Status& open_status() const = 0;
};

// Starts OpenRecoveryStore(options) on a new thread.
std::unique_ptr<OpeningStore> OpenRecoveryStoreInBackground(StoreOptions options);

// TEST ONLY: `hook` runs on the opening thread before each open (empty: none). Not
// thread-safe against a running open.
void SetBackgroundOpenHookForTest(std::function<void()> hook);

}  // namespace caveman

#endif  // CAVEMAN_STORE_BACKGROUND_STORE_H_
