// The consumer's OWN stream/status.h: an application header whose path is as generic as one
// of caveman's public headers. It is first on own_headers.cc's include path, so if a
// caveman header still included "stream/status.h" it would get this file, caveman::Status
// would be undefined and the consumer would not compile (tests/install/consumer_test.sh).
#ifndef APP_STREAM_STATUS_H_
#define APP_STREAM_STATUS_H_

namespace app {

// The application's own status of a stream it processes.
enum class StreamStatus { kIdle, kCompressed, kPassedThrough };

inline const char* StreamStatusName(StreamStatus s) {
  switch (s) {
    case StreamStatus::kIdle: return "idle";
    case StreamStatus::kCompressed: return "compressed";
    case StreamStatus::kPassedThrough: return "passed-through";
  }
  return "?";
}

}  // namespace app

#endif  // APP_STREAM_STATUS_H_
