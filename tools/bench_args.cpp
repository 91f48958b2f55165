#include "bench_args.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <sstream>

#include <tessera/tessera.h>
#include <tessera_common/shape_inference.hpp>

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;

// Batch files may include batch files; a cycle would otherwise recurse forever.
constexpr int max_batch_depth = 16;

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool parse_double(const std::string& text, double* value) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') return false;
  *value = v;
  return true;
}

// Relative paths: the including file's folder, the working directory, then the suites that
// come with Tessera (installed, then in the source tree), so `--batch=default.txt` just works.
std::string resolve_batch_path(const std::string& path, const std::string& base_dir) {
  const fs::path p(path);
  if (p.is_absolute()) return path;
  std::vector<fs::path> candidates;
  if (!base_dir.empty()) candidates.push_back(fs::path(base_dir) / p);
  candidates.push_back(p);
#ifdef TESSERA_SUITES_INSTALL_DIR
  candidates.push_back(fs::path(TESSERA_SUITES_INSTALL_DIR) / p);
#endif
#ifdef TESSERA_SUITES_SOURCE_DIR
  candidates.push_back(fs::path(TESSERA_SUITES_SOURCE_DIR) / p);
#endif
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c.string();
  }
  return path;  // not found: opening it reports the error with the name the user gave
}

// Splits a batch line into arguments; '#' starts a comment.
std::vector<std::string> split_line(const std::string& line) {
  std::istringstream words(line.substr(0, line.find('#')));
  std::vector<std::string> args;
  for (std::string w; words >> w;) args.push_back(w);
  return args;
}

class argument_reader {
 public:
  explicit argument_reader(std::vector<bench_problem>* problems) : problems_(problems) {}

  bool read(const std::vector<std::string>& args, const std::string& origin,
            const std::string& base_dir, bench_settings& s, int depth, std::string* error) {
    for (const std::string& arg : args)
      if (!read_one(arg, origin, base_dir, s, depth, error)) return false;
    return true;
  }

 private:
  bool read_one(const std::string& arg, const std::string& origin, const std::string& base_dir,
                bench_settings& s, int depth, std::string* error) {
    auto bad = [&](const std::string& why) {
      return fail(error, origin + ": " + why + " in '" + arg + "'");
    };
    const size_t eq = arg.find('=');
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);

    bench_driver named = bench_driver::none;
    for (int d = 1; d <= static_cast<int>(bench_driver::rnn); ++d)
      if (arg == std::string("--") + driver_name(static_cast<bench_driver>(d)))
        named = static_cast<bench_driver>(d);
    if (named != bench_driver::none) {
      if (named != s.driver) s.alg_given = false;  // each driver has its own default algorithm
      s.driver = named;
    } else if (arg == "--reset") {
      // benchdnn's --reset keeps the driver; the run-wide choices (backend, mode, iterations)
      // are kept too, so `--backend=NAME --batch=suite.txt` pins every problem of a suite.
      bench_settings fresh;
      fresh.driver = s.driver;
      fresh.backend = s.backend;
      fresh.impl = s.impl;
      fresh.mode = s.mode;
      fresh.iterations = s.iterations;
      fresh.back_to_back = s.back_to_back;
      fresh.tuning = s.tuning;
      fresh.rotate_mb = s.rotate_mb;
      s = fresh;
    } else if (starts_with(arg, "--dt=")) {
      if (!common::parse_data_type(value, &s.data_type))
        return bad("unknown data type '" + value + "' (expected f32, f16, bf16, s8 or s32)");
    } else if (starts_with(arg, "--tag=")) {
      const std::string tag = lower(value);
      // Any rank's spelling of the two families, and oneDNN's abx/axb.
      if (tag == "nchw" || tag == "ncw" || tag == "ncdhw" || tag == "nc" || tag == "abx")
        s.channels_last = false;
      else if (tag == "nhwc" || tag == "nwc" || tag == "ndhwc" || tag == "axb")
        s.channels_last = true;
      else
        return bad("unknown tag '" + value + "' (expected nchw or nhwc)");
    } else if (starts_with(arg, "--dir=")) {
      const std::string dir = lower(value);
      if (dir == "fwd" || dir == "fwd_d" || dir == "fwd_i" || dir == "fwd_b")
        s.backward = false;
      else if (dir == "bwd" || dir == "bwd_d" || dir == "bwd_w" || dir == "bwd_wb" ||
               dir == "bwd_dw")
        s.backward = true;
      else
        return bad("unknown direction '" + value +
                   "' (expected fwd, FWD_D, FWD_B, FWD_I, bwd, BWD_D, BWD_W, BWD_WB or BWD_DW)");
      s.dir = dir == "fwd" ? "fwd_d" : dir == "bwd" ? "bwd_d" : dir;
    } else if (starts_with(arg, "--prop=")) {
      const std::string prop = lower(value);
      if (prop != "fwd_i" && prop != "fwd_d" && prop != "bwd_dw")
        return bad("unknown propagation (expected FWD_I, FWD_D or BWD_DW)");
      s.dir = prop;
      s.backward = prop == "bwd_dw";
    } else if (starts_with(arg, "--cell=")) {
      const std::string c = lower(value);
      if (c != "vanilla_rnn" && c != "vanilla_lstm" && c != "vanilla_gru")
        return bad("unknown cell (expected vanilla_rnn, vanilla_lstm or vanilla_gru)");
      s.cell = c;
    } else if (starts_with(arg, "--activation=")) {
      const std::string a = lower(value);
      if (a != "relu" && a != "tanh") return bad("rnn activation must be relu or tanh");
      s.rnn_activation = a;
    } else if (starts_with(arg, "--direction=")) {
      const std::string d = lower(value);
      if (d != "left2right" && d != "concat" && d != "right2left" && d != "sum")
        return bad("unknown direction (left2right, right2left, concat or sum)");
      s.rnn_direction = d;
    } else if (starts_with(arg, "--flags=")) {
      for (char c : value)
        if (!std::strchr("GCHR", c)) return bad("unknown flag (expected G, C, H or R)");
      s.flags = value;
    } else if (starts_with(arg, "--attr-post-ops=")) {
      s.post_ops = lower(value);
    } else if (starts_with(arg, "--axis=")) {
      char* end = nullptr;
      const long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 0 || n > 7) return bad("axis must be 0 to 7");
      s.axis = static_cast<int>(n);
    } else if (starts_with(arg, "--sm-mode=")) {
      if (value == "instance") s.instance = true;
      else if (value == "channel") s.instance = false;
      else return bad("unknown softmax mode (expected channel or instance)");
    } else if (starts_with(arg, "--k=")) {
      if (!parse_double(value, &s.k)) return bad("'" + value + "' is not a number");
    } else if (starts_with(arg, "--stag=")) {
      s.stag = lower(value);
    } else if (starts_with(arg, "--dtag=")) {
      s.dtag = lower(value);
    } else if (starts_with(arg, "--dst-dt=")) {
      tsrpDataType_t t;
      if (!common::parse_data_type(value, &t)) return bad("unknown data type '" + value + "'");
      s.dst_dt = t;
    } else if (starts_with(arg, "--sdt=") || starts_with(arg, "--ddt=")) {
      tsrpDataType_t t;
      if (!common::parse_data_type(value, &t)) return bad("unknown data type '" + value + "'");
      (starts_with(arg, "--sdt=") ? s.sdt : s.ddt) = t;
    } else if (starts_with(arg, "--bia-dt=")) {
      if (value == "undef") s.matmul_bias = false;
      else if (value == "f32") s.matmul_bias = true;
      else return bad("bias data type must be f32 or undef");
    } else if (starts_with(arg, "--transpose-a=") || starts_with(arg, "--transpose-b=")) {
      const bool t = value == "true" || value == "1";
      if (!t && value != "false" && value != "0") return bad("expected true or false");
      (arg[12] == 'a' ? s.transpose_a : s.transpose_b) = t;
    } else if (starts_with(arg, "--alg=")) {
      if (value.empty()) return bad("empty algorithm");
      s.algorithm = lower(value);  // checked with alpha and beta when a problem uses it
      s.alg_given = true;
    } else if (starts_with(arg, "--alpha=")) {
      if (!parse_double(value, &s.alpha)) return bad("'" + value + "' is not a number");
    } else if (starts_with(arg, "--beta=")) {
      if (!parse_double(value, &s.beta)) return bad("'" + value + "' is not a number");
    } else if (starts_with(arg, "--conv-mode=")) {
      const std::string m = lower(value);
      if (m == "cross-correlation" || m == "cross_correlation" || m == "xcorr")
        s.conv_mode = TSRP_CROSS_CORRELATION;
      else if (m == "convolution" || m == "conv")
        s.conv_mode = TSRP_CONVOLUTION;
      else
        return bad("unknown convolution mode '" + value +
                   "' (expected cross-correlation or convolution)");
    } else if (starts_with(arg, "--backend=")) {
      s.backend = value;
    } else if (starts_with(arg, "--impl=")) {
      s.impl = value;  // benchdnn's --impl: run only kernels whose name contains this text
    } else if (starts_with(arg, "--mode=")) {
      const std::string m = lower(value);
      if (m == "r")
        s.mode = mode_run;
      else if (m == "c")
        s.mode = mode_correctness;
      else if (m == "p")
        s.mode = mode_performance;
      else if (m == "cp" || m == "pc")
        s.mode = mode_correctness | mode_performance;
      else
        return bad("unknown mode '" + value + "' (expected C, P, CP or R)");
    } else if (starts_with(arg, "--iters=")) {
      char* end = nullptr;
      const long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 1 || n > 1000000)
        return bad("iterations must be an integer from 1 to 1000000");
      s.iterations = static_cast<int>(n);
    } else if (starts_with(arg, "--timing=")) {
      if (value == "per-call")
        s.back_to_back = false;
      else if (value == "back-to-back")
        s.back_to_back = true;
      else
        return bad("unknown timing '" + value + "' (expected per-call or back-to-back)");
    } else if (starts_with(arg, "--attr-fpmath=")) {
      // benchdnn's name; per problem like the other attributes (--reset clears it).
      if (value == "strict") s.math_mode = TSR_MATH_DEFAULT;
      else if (value == "tf32") s.math_mode = TSR_MATH_ALLOW_TF32;
      else return bad("unknown fpmath mode (expected strict or tf32)");
    } else if (starts_with(arg, "--tuning=")) {
      const std::string t = lower(value);
      if (t == "heuristic") s.tuning = TSR_TUNING_HEURISTIC;
      else if (t == "database") s.tuning = TSR_TUNING_DATABASE;
      else if (t == "tune") s.tuning = TSR_TUNING_DATABASE_OR_TUNE;
      else if (t == "always") s.tuning = TSR_TUNING_ALWAYS;
      else return bad("unknown tuning mode (expected heuristic, database, tune or always)");
    } else if (starts_with(arg, "--rotate-mb=")) {
      if (!parse_double(value, &s.rotate_mb) || s.rotate_mb < 0)
        return bad("--rotate-mb takes a size in MB, 0 for no rotation");
    } else if (starts_with(arg, "--batch=")) {
      // A suite is what the command line names: batch files it includes belong to it.
      const std::string including_suite = suite_;
      if (depth == 0) suite_ = value;
      const bool ok = read_batch(resolve_batch_path(value, base_dir), origin, s, depth, error);
      suite_ = including_suite;
      return ok;
    } else if (starts_with(arg, "-")) {
      return fail(error, origin + ": unknown option '" + arg + "' (try --help)");
    } else {
      if (s.driver == bench_driver::none)
        return fail(error, origin + ": problem '" + arg + "' comes before a driver (--conv, --pool, ...)");
      problems_->push_back({s, arg, origin, suite_.empty() ? "command line" : suite_});
    }
    return true;
  }

  bool read_batch(const std::string& path, const std::string& origin, const bench_settings& s,
                  int depth, std::string* error) {
    if (depth >= max_batch_depth)
      return fail(error, origin + ": batch files nested more than " +
                             std::to_string(max_batch_depth) + " deep at '" + path + "'");
    std::ifstream file(path);
    if (!file) return fail(error, origin + ": cannot read batch file '" + path + "'");
    const std::string dir = fs::path(path).parent_path().string();
    bench_settings local = s;  // the file's changes stay in the file
    std::string line;
    for (int number = 1; std::getline(file, line); ++number)
      if (!read(split_line(line), path + ":" + std::to_string(number), dir, local, depth + 1,
                error))
        return false;
    return true;
  }

  std::vector<bench_problem>* problems_;
  std::string suite_;  // the command line's --batch being read; empty outside one
};

}  // namespace

const char* driver_name(bench_driver driver) {
  static const char* const names[] = {"none",    "conv",      "eltwise", "pool",     "bnorm",
                                      "lnorm",   "rmsnorm",   "softmax", "lrn",      "binary",
                                      "reorder", "reduction", "matmul",  "rnn"};
  return names[static_cast<int>(driver)];
}

bool parse_bench_arguments(const std::vector<std::string>& args, const std::string& origin,
                           const std::string& base_dir, bench_settings& settings,
                           std::vector<bench_problem>* problems, std::string* error) {
  argument_reader reader(problems);
  return reader.read(args, origin, base_dir, settings, 0, error);
}

const char* bench_usage() {
  return R"(usage: tessera-bench [modifiers and problems, left to right]

Drivers (pick how the problems after them are read):
  --conv                 convolution forward; problems are benchdnn descriptors,
                         e.g. mb2ic16ih7oc16oh7kh3ph1 (g, mb, ic, id/ih/iw, oc, od/oh/ow,
                         kd/kh/kw, sd/sh/sw, pd/ph/pw, dd/dh/dw; dilation 0 = none)
  --eltwise              activation; problems are dims, e.g. 2x16x7x7
  --pool                 pooling, e.g. mb2ic16ih14oh7kh3sh2ph1 (--alg=max|avg_p|avg_np,
                         --dir=FWD_D|BWD_D; id/od/kd.. for 3-D)
  --rnn                  l2t5mb3sic4slc3dhc4dic4 (--cell=vanilla_rnn|vanilla_lstm|vanilla_gru,
                         --activation=relu|tanh, --direction=left2right|concat,
                         --prop=FWD_I|FWD_D|BWD_DW; Tessera needs sic = dhc = dic)
  --bnorm                batch norm, e.g. mb2ic16ih7 (--dir=FWD_D training|FWD_I|BWD_DW;
                         --flags= G global stats (inference), C scale, H shift, R fused relu;
                         Tessera always takes scale and shift: C/H are accepted, not needed)
  --lnorm, --rmsnorm     layer / RMS norm over the last dim, e.g. 2x7x768 (--dir=FWD_D|BWD_DW)
  --softmax              dims, e.g. 2x16x7x7 (--alg=softmax|logsoftmax, --dir, --axis=1
                         only: over channels; --sm-mode=instance: over all of C x spatial)
  --lrn                  across-channel LRN, e.g. mb2ic16ih7ls5 (--alg=across, --alpha --beta
                         --k, --dir)
  --binary               tsrOpTensor, e.g. 2x16x7x7:1x16x1x1 (--alg=add|mul|min|max; Tessera's
                         unary sqrt|not take one dims list)
  --reorder              tsrTransformTensor, dims (--sdt= --ddt= --stag=nchw|nhwc --dtag=)
  --reduction            tsrReduceTensor, src:dst dims 2x16x7x7:2x16x1x1
                         (--alg=sum|mul|min|max|amax|mean; norm1/norm2 are skipped: no kernel)
  --conv --dir=          FWD_D, FWD_B (bias + --attr-post-ops=relu..), BWD_D, BWD_W, BWD_WB;
                         --dt=s8 forward with --dst-dt=s32 (default)|f32|s8
  --matmul               2x3x5:2x5x8 (A:B) or m10n20k30 (--bia-dt=f32, --attr-post-ops=relu,
                         --transpose-a=true --transpose-b=true, or --stag=ba / --dtag=ba)
Modifiers (apply to the problems that follow):
  --dt=f32|f16|bf16      data type (default f32)
  --tag=nchw|nhwc        packed layout, channels second or last (default nchw)
  --dir=fwd|bwd|FWD_D|.. direction (default fwd), as each driver reads it
  --alg=NAME             eltwise algorithm: relu logistic tanh linear elu gelu_erf gelu_tanh
                         swish clip, or identity sigmoid leaky_relu clipped_relu (default relu)
  --alpha=X --beta=Y     eltwise parameters, as benchdnn's (relu alpha: negative slope;
                         clip: alpha 0, beta the upper bound; linear: alpha 1, beta 0)
  --conv-mode=MODE       cross-correlation (default) or convolution (flipped filter)
  --backend=NAME         run on this backend's kernels and device (default: CUDA device 0
                         when present, else the CPU, kernels chosen by the library)
  --backend=A,B,..       side by side: each problem runs on every backend listed, each on its
                         own handle (a name listed twice gets two), and prints one row:
                         "<status> <problem> | <kernel> <time> <rate> | ... ratio R", where
                         R = this backend's time / the FIRST backend's time (> 1: the first
                         is faster); a backend that cannot run a problem shows SKIPPED and its
                         reason in its cell. Rates in TFLOP/s (conv, matmul, rnn) or TB/s.
                         At the end, per suite (--batch file named on the command line, or
                         "command line"), the geometric mean of each ratio over the problems
                         both backends ran: "geomean SUITE: B/A time ratio G over N problems"
  --impl=TEXT            only kernels whose name contains TEXT (benchdnn's --impl), e.g.
                         --impl=igemm_sm90_128x64 to time one tile configuration
  --mode=C|P|CP|R        correctness, performance, both (default CP), or run once only
  --iters=N              timed runs for performance, median reported (default 20): each timed
                         by events on the handle's stream (CUDA events on a GPU) after 3
                         warm-up runs
  --timing=HOW           per-call (default): each timed run alone between its events, its
                         launch included, as the anchor (torch_anchors.py) times; back-to-back:
                         memory-bound problems' --iters runs queued between one pair of events,
                         the mean reported: the kernels' own rate, launch gaps hidden
  --rotate-mb=MB         timed runs of conv, matmul and memory-bound problems rotate among
                         copies of their inputs until the copies reach MB in all (default 200,
                         over 3x an H200's 60 MB L2), so that no run finds its inputs in the
                         cache left by the one before; 0: one copy
  --attr-fpmath=MODE     strict (default): fp32 exact; tf32: the handles' math mode is
                         TSR_MATH_ALLOW_TF32, so fp32 may run on TF32 tensor cores (time it
                         with --mode=P: the correctness check holds fp32 tolerances)
  --tuning=MODE          the handles' tuning mode (tsrSetTuningMode): heuristic, database,
                         tune or always; other than heuristic, the library chooses each
                         kernel (shown as "auto") among every backend of the device, and
                         tune/always measure and store winners in the tuning database
                         (TESSERA_TUNING_DB). Default: the library's (TESSERA_TUNING)
  --batch=FILE           read FILE: one problem set per line, '#' comments; relative to
                         the including file, the working directory, then Tessera's suites
  --reset                back to the default modifiers (the driver, --backend, --impl,
                         --mode, --iters, --timing, --rotate-mb and --tuning are kept)
For the whole run (anywhere on the command line):
  --json=PATH            write every row, the geometric means and a header (date, command,
                         Tessera version, devices, plugins, machine) as JSON (tools/perf-report)
  --csv=PATH             write every row as CSV: problem, driver, dtype, layout, and per
                         backend its status, kernel, time_ms, rate, unit and ratio
  --progress             a progress bar with the time left on stderr also when stderr is not a
                         terminal (on a terminal it is always drawn; never on stdout)
Output: one line per problem, "<status> <backend>/<kernel> <problem> <time> <rate>" (side by
side: as above), the geometric means, then "tests:N passed:N skipped:N failed:N" counting each
backend's run. Exit code 1 when any problem failed, 2 on bad usage.
)";
}

}  // namespace tessera::tools
