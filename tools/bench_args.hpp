// tessera-bench's command line, read as benchdnn reads its own: left to right, modifiers
// (--dt=, --tag=, ...) change the settings for the problems that follow them, a driver switch
// (--conv, --eltwise) picks how later problems are read, and --batch=file splices in a file of
// the same (one problem set per line, '#' starts a comment).
#ifndef TESSERA_TOOLS_BENCH_ARGS_HPP
#define TESSERA_TOOLS_BENCH_ARGS_HPP

#include <tessera/plugin_abi.h>

#include <string>
#include <vector>

namespace tessera::tools {

enum class bench_driver {
  none, conv, eltwise, pool, bnorm, lnorm, rmsnorm, softmax, lrn, binary, reorder, reduction,
  matmul, rnn
};
// The driver's switch without dashes: "conv", "pool", ...
const char* driver_name(bench_driver driver);

// Bit flags: what to do with each problem. None of them (benchdnn's --mode=R) runs it once,
// unchecked and untimed: what tessera-tune needs, whose measurement happens inside that call.
enum bench_mode : int { mode_run = 0, mode_correctness = 1, mode_performance = 2 };

// --tuning=: the handle's tsrTuningMode_t, or the library's default (TESSERA_TUNING).
constexpr int tuning_default = -1;

struct bench_settings {
  bench_driver driver = bench_driver::none;
  tsrpDataType_t data_type = TSRP_DATA_FLOAT;            // --dt
  bool channels_last = false;                            // --tag=nchw|nhwc
  bool backward = false;                                 // --dir=fwd|bwd (eltwise)
  std::string algorithm = "relu";                        // --alg (eltwise)
  double alpha = 0.0;                                    // --alpha (eltwise)
  double beta = 0.0;                                     // --beta (eltwise)
  tsrpConvolutionMode_t conv_mode = TSRP_CROSS_CORRELATION;  // --conv-mode (conv)
  std::string dir = "fwd_d";                             // --dir, lower case as given
  std::string flags;                                     // --flags (bnorm: G C H R)
  std::string post_ops;                                  // --attr-post-ops (matmul): relu...
  int axis = 1;                                          // --axis (softmax)
  bool instance = false;                                 // --sm-mode=instance (softmax)
  double k = 1.0;                                        // --k (lrn)
  bool alg_given = false;                                // --alg seen since the last --reset
  std::string stag, dtag;                                // --stag/--dtag (reorder, matmul)
  tsrpDataType_t sdt = TSRP_DATA_FLOAT, ddt = TSRP_DATA_FLOAT;  // --sdt/--ddt (reorder)
  bool transpose_a = false, transpose_b = false;         // --transpose-a/-b (matmul)
  std::string cell = "vanilla_rnn";                       // --cell (rnn)
  std::string rnn_activation = "relu";                   // --activation (rnn, vanilla_rnn)
  std::string rnn_direction = "left2right";              // --direction (rnn)
  int dst_dt = -1;                                       // --dst-dt (s8 conv/matmul); -1: default
  bool matmul_bias = false;                              // --bia-dt=f32 (matmul)
  std::string backend;                                   // --backend; empty: the default device;
                                                         // "a,b": side by side (bench_comparison)
  std::string impl;                                      // --impl: only kernels whose name holds it
  int mode = mode_correctness | mode_performance;        // --mode=C|P|CP
  int iterations = 20;                                   // --iters
  bool back_to_back = false;                             // --timing=back-to-back (memory-bound)
  int tuning = tuning_default;                           // --tuning: tsrTuningMode_t
  int math_mode = TSRP_MATH_DEFAULT;                     // --attr-fpmath: tsrMathMode_t (same values)
  double rotate_mb = 200.0;                              // --rotate-mb (bench_rotation.hpp)
};

// One problem to run, with the settings in force where it appeared.
struct bench_problem {
  bench_settings settings;
  std::string text;    // the descriptor: "mb2ic16ih7oc16oh7kh3ph1" or "2x16x7x7"
  std::string origin;  // where it came from, for messages: "command line" or "file:line"
  std::string suite;   // the --batch file named on the command line, or "command line"
};

// Reads `args` left to right into `problems`, starting from (and updating) `settings`.
// `origin` names the source in messages; `base_dir` is where relative --batch paths are looked
// up first (then the working directory, then the installed and source suites folders).
// A batch file starts from the settings in force at --batch, and what it changes stays inside
// it: a suite cannot leak its --dt into the problems after it.
// Returns false with a message naming the argument and its origin for an unknown option, a bad
// value, a problem before any driver, or a batch file that cannot be read.
bool parse_bench_arguments(const std::vector<std::string>& args, const std::string& origin,
                           const std::string& base_dir, bench_settings& settings,
                           std::vector<bench_problem>* problems, std::string* error);

// The usage text for --help.
const char* bench_usage();

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_BENCH_ARGS_HPP
