// A progress line on stderr for long runs (tessera-bench suites, tessera-tune):
//   [=========>          ] 12/57 problems  1m23s left
// On a terminal it is redrawn in place and wiped before anything is written to stdout, so that
// it never mixes with the rows; elsewhere (when asked for with --progress) it is written as
// plain lines, at most one every few seconds, for logs.
#ifndef TESSERA_TOOLS_PROGRESS_BAR_HPP
#define TESSERA_TOOLS_PROGRESS_BAR_HPP

#include <chrono>
#include <cstddef>
#include <string>

namespace tessera::tools {

// True when stderr is a terminal: the bar is then on by default.
bool stderr_is_terminal();

class progress_bar {
 public:
  // `what` names the units counted ("problems"). Draws nothing when not enabled.
  progress_bar(size_t total, std::string what, bool enabled);
  ~progress_bar() { clear(); }
  progress_bar(const progress_bar&) = delete;
  progress_bar& operator=(const progress_bar&) = delete;

  // `done` of the total are finished: redraws with the time left estimated from the pace so far.
  // Call it with the total at the end: a log then shows the run complete.
  void update(size_t done);
  // Wipes the bar from the terminal; call before writing to stdout (the next update redraws).
  void clear();

  // "1h02m", "3m07s", "12s".
  static std::string format_duration(double seconds);

 private:
  std::string line(size_t done) const;

  size_t total_;
  std::string what_;
  bool enabled_;
  bool terminal_;
  bool drawn_ = false;     // on a terminal: the bar is on the screen
  int lines_written_ = 0;  // elsewhere: lines written so far
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_line_;
};

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_PROGRESS_BAR_HPP
