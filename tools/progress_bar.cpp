#include "progress_bar.hpp"

#include <unistd.h>

#include <cstdio>

namespace tessera::tools {
namespace {

constexpr int bar_width = 30;
// Off a terminal every line stays in the log: one every few seconds is enough to follow.
constexpr double plain_line_interval_s = 5.0;

double seconds_between(std::chrono::steady_clock::time_point a,
                       std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

progress_bar::progress_bar(size_t total, std::string what, bool enabled)
    : total_(total),
      what_(std::move(what)),
      enabled_(enabled && total > 0),
      terminal_(stderr_is_terminal()),
      start_(std::chrono::steady_clock::now()),
      last_line_(start_) {}

std::string progress_bar::format_duration(double seconds) {
  const long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else if (s >= 60)
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%lds", s);
  return text;
}

std::string progress_bar::line(size_t done) const {
  const size_t filled = total_ ? done * bar_width / total_ : 0;
  std::string bar(filled, '=');
  if (filled < bar_width) bar += '>' + std::string(bar_width - filled - 1, ' ');
  const double elapsed = seconds_between(start_, std::chrono::steady_clock::now());
  // The pace so far predicts the rest: problems of a suite are alike enough for a guide.
  const std::string left =
      done == 0 ? "estimating" : format_duration(elapsed / done * (total_ - done)) + " left";
  return "[" + bar + "] " + std::to_string(done) + "/" + std::to_string(total_) + " " + what_ +
         "  " + left;
}

void progress_bar::update(size_t done) {
  if (!enabled_) return;
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s", line(done).c_str());
    drawn_ = true;
  } else {
    // The first and the last line always; in between, one per interval.
    const auto now = std::chrono::steady_clock::now();
    if (lines_written_ > 0 && done < total_ &&
        seconds_between(last_line_, now) < plain_line_interval_s)
      return;
    last_line_ = now;
    ++lines_written_;
    std::fprintf(stderr, "%s\n", line(done).c_str());
  }
  std::fflush(stderr);
}

void progress_bar::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace tessera::tools
