// Online stages: the line types (log incl. JSON Lines, terminal, repetition) as push filters
// for follow mode (`compress --follow`, `run`), beside their batch Transform. A stage is fed
// complete lines as they arrive and writes each kept line at once; dropped lines are held as
// a run that becomes its marker when the next kept line arrives, on an idle Tick(), or at
// Finish(). Keep rules, markers, invariant summaries and templates are the batch compressors'
// own (compressors/internal/log_rules, terminal's pattern and cleanup), so the two modes
// cannot drift; what follow mode cannot know in advance (the tail, global BM25 statistics,
// seed sampling) is decided online instead (docs/DECISIONS.md, "Follow mode").
//
// HowTo:
//   auto stage = NewOnlineStage("log", query);
//   stage->PushLines(block_of_whole_lines, offset_of_block, sink);   // as lines arrive
//   stage->Tick(sink);                                                // after 1 s without input
//   stage->Finish(last_unterminated_line, its_offset, false, sink);   // end of input
// Every OnlineEvent says which input bytes it stands for; an event with `lossy` set must not
// be written before those bytes are in the recovery store (the engine's follow driver does
// that). Output does not depend on how lines are grouped into blocks; only Tick() calls (idle
// time) can split a run into two markers.
//
// Memory: the current run's accumulators (bounded, §4.4), ≤ 3 held tail lines, ≤ 2 verbatim
// lines of a short run, ≤ 192 guard classes, ≤ 512 templates, the last kept line: flat in the
// number of lines; lines themselves are bounded by the caller (the follow driver streams lines
// over 1 MiB through verbatim after Barrier()).
//
// Thread-safety: a stage belongs to one stream.
#ifndef CAVEMAN_COMPRESSORS_ONLINE_H_
#define CAVEMAN_COMPRESSORS_ONLINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace caveman {

struct OnlineEvent {
  std::string bytes;         // output line(s), line endings included
  uint64_t input_begin = 0;  // the input bytes this event stands for: [input_begin, input_end)
  uint64_t input_end = 0;
  uint64_t lines = 0;  // input lines it stands for (0 for the contract note)
  bool lossy = false;  // bytes differ from that input: store the original first
};

class OnlineSink {
 public:
  virtual ~OnlineSink() = default;
  virtual void Emit(OnlineEvent&& event) = 0;
};

class OnlineStage {
 public:
  virtual ~OnlineStage() = default;
  // `block`: one or more complete lines, each ending with LF; `offset`: input offset of
  // block[0].
  virtual void PushLines(std::string_view block, uint64_t offset, OnlineSink& out) = 0;
  // Idle input: writes pending markers that are due (runs that already make a marker,
  // identical-line runs); lines that only the end of input can decide stay held.
  virtual void Tick(OnlineSink& out) = 0;
  // Writes everything pending, held tail lines included, as if the input had a break here;
  // the caller then writes `lines` lines itself (a huge line passed through verbatim).
  virtual void Barrier(uint64_t lines, OnlineSink& out) = 0;
  // End of input. `last`: the bytes after the last LF (possibly empty), at `offset`.
  // `output_open`: the caller's last written byte was not an LF (a huge unterminated line).
  virtual void Finish(std::string_view last, uint64_t offset, bool output_open, OnlineSink& out) = 0;
  // Whether any marker (or rewritten line) was emitted.
  virtual bool lossy() const = 0;
};

// log (JSON Lines included), terminal, repetition.
bool IsOnlineContentType(std::string_view content_type);
// nullptr unless IsOnlineContentType(content_type). `query` applies to log (lines containing a
// query term are kept).
std::unique_ptr<OnlineStage> NewOnlineStage(std::string_view content_type, std::string_view query);

}  // namespace caveman

#endif  // CAVEMAN_COMPRESSORS_ONLINE_H_
