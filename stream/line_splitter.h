// LineSplitter: turns a chunked byte stream into LF-separated pieces, whatever the chunk
// boundaries. Lines keep their CR (CRLF input yields pieces ending in CR); the LF itself is
// never part of a piece.
//
// Protocol:
//   LineSplitter s;
//   for each chunk: s.Push(chunk, on_piece);
//   s.Finish(on_piece);
// on_piece(std::string_view piece, bool terminated): every LF-terminated piece is delivered
// with terminated = true; Finish delivers the bytes after the last LF (possibly empty) with
// terminated = false, exactly once. So "a\nb" gives ("a",true),("b",false); "a\n" gives
// ("a",true),("",false); "" gives ("",false). The §4.1 split is: all terminated pieces, plus
// the final piece unless the input ended with LF (see SplitStats / LinesOf4_1 helpers of the
// compressors).
//
// Memory: the splitter holds only the unfinished last line (a line may span any number of
// chunks), so memory grows with the longest line, never with the number of lines. A piece
// view is valid only during the callback.
//
// Long lines: with max_line > 0, a line longer than max_line bytes is delivered in parts
// through the fragment API (PushFragments), so even a single 64 MiB line costs O(max_line).
#ifndef CAVEMAN_STREAM_LINE_SPLITTER_H_
#define CAVEMAN_STREAM_LINE_SPLITTER_H_

#include <cstring>
#include <string>
#include <string_view>

namespace caveman {

class LineSplitter {
 public:
  template <class Fn>
  void Push(std::string_view chunk, Fn&& fn) {
    while (!chunk.empty()) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data(), '\n', chunk.size()));
      if (nl == nullptr) {
        partial_.append(chunk);
        return;
      }
      size_t len = static_cast<size_t>(nl - chunk.data());
      if (partial_.empty()) {
        fn(chunk.substr(0, len), true);
      } else {
        partial_.append(chunk.data(), len);
        fn(std::string_view(partial_), true);
        partial_.clear();
      }
      chunk.remove_prefix(len + 1);
    }
  }

  template <class Fn>
  void Finish(Fn&& fn) {
    fn(std::string_view(partial_), false);
    partial_.clear();
  }

  // Fragment API. fn(std::string_view part, bool first, bool last, bool terminated):
  // parts of one line arrive in order, `first` on its first part, `last` on its final part
  // (terminated tells whether an LF ended it). Parts of a line longer than max_line are
  // flushed as soon as max_line bytes are buffered.
  template <class Fn>
  void PushFragments(std::string_view chunk, size_t max_line, Fn&& fn) {
    while (!chunk.empty()) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data(), '\n', chunk.size()));
      if (nl == nullptr) {
        partial_.append(chunk);
        if (partial_.size() >= max_line) {
          fn(std::string_view(partial_), !in_line_, false, false);
          in_line_ = true;
          partial_.clear();
        }
        return;
      }
      size_t len = static_cast<size_t>(nl - chunk.data());
      if (partial_.empty()) {
        fn(chunk.substr(0, len), !in_line_, true, true);
      } else {
        partial_.append(chunk.data(), len);
        fn(std::string_view(partial_), !in_line_, true, true);
        partial_.clear();
      }
      in_line_ = false;
      chunk.remove_prefix(len + 1);
    }
  }

  template <class Fn>
  void FinishFragments(Fn&& fn) {
    fn(std::string_view(partial_), !in_line_, true, false);
    partial_.clear();
    in_line_ = false;
  }

  // Bytes currently buffered (the unfinished line).
  size_t buffered() const { return partial_.size(); }

 private:
  std::string partial_;
  bool in_line_ = false;  // fragment API: a part of the current line was already delivered
};

}  // namespace caveman

#endif  // CAVEMAN_STREAM_LINE_SPLITTER_H_
