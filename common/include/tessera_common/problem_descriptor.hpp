// benchdnn's problem-descriptor language, so that tessera-bench, the suites and the API trace
// speak what oneDNN users already read (tests/benchdnn/doc/driver_conv.md, driver_eltwise.md):
//   convolution: mb2ic16ih7oc16oh7kh3ph1   (g, mb, ic, id/ih/iw, oc, od/oh/ow, kd/kh/kw,
//                                           sd/sh/sw, pd/ph/pw, dd/dh/dw, n<name>)
//   eltwise:     2x16x7x7 with --alg=relu --alpha=.. --beta=..
// and the tessera-bench command line that replays a problem.
#ifndef TESSERA_COMMON_PROBLEM_DESCRIPTOR_HPP
#define TESSERA_COMMON_PROBLEM_DESCRIPTOR_HPP

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::common {

// ---- convolution ------------------------------------------------------------------------------

// A convolution problem without tensors' layouts or data type. Spatial arrays hold spatial_dims
// values in the tensors' order (d, h, w for 3-D; h, w for 2-D; w for 1-D); the rest are unused.
// Tessera's convention throughout: dilation 1 means none (benchdnn writes 0).
struct conv_descriptor {
  int spatial_dims = 2;
  int64_t mb = 2;
  int64_t g = 1;
  int64_t ic = 0;
  int64_t oc = 0;
  int64_t in[TSRP_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t out[TSRP_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t k[TSRP_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t stride[TSRP_MAX_SPATIAL_DIMS] = {1, 1, 1};
  int64_t pad_before[TSRP_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t pad_after[TSRP_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t dilation[TSRP_MAX_SPATIAL_DIMS] = {1, 1, 1};
  std::string name;
};

bool operator==(const conv_descriptor& a, const conv_descriptor& b);
inline bool operator!=(const conv_descriptor& a, const conv_descriptor& b) { return !(a == b); }

// Parses a benchdnn convolution descriptor. '_' is ignored between entries. Rules, as benchdnn's:
//  - any d key makes the problem 3-D; else any h key 2-D; else w keys alone 1-D;
//  - a missing w value copies the h value, and (3-D) a missing h value copies the d value;
//  - defaults: mb 2, g 1, stride 1, dilation 0 (none), padding 0; ic, oc, the input size and the
//    kernel size must be given;
//  - a missing output size is computed with the right padding equal to the left;
//  - a given output size sets the right padding to the value that produces it (asymmetric
//    padding). With a stride above 1 several values do; the one closest to the left padding is
//    taken, so symmetric problems stay symmetric. When the left padding is missing too it is
//    derived as benchdnn does: half the total padding the output needs, rounded down;
//  - the name is `n<name>`: leading, it ends at the next '_' (`nresnet:conv1_mb2...`);
//    elsewhere it runs to the end (benchdnn's canonical `..._nname`); `n"name"` is quoted.
// On failure returns false with a message naming the entry: "unknown key 'xy' at position 5",
// "expected a number after 'ic' at position 2", "ic must be positive", "oh: output would be
// empty: ...". `error` may be null.
bool parse_conv_descriptor(std::string_view text, conv_descriptor* desc, std::string* error);

// The canonical descriptor: g (when not 1), mb, ic, input dims, oc, output dims, kernel dims,
// strides (when any is not 1), left paddings (when any is not 0), dilations (when any is not
// none, in benchdnn's convention), then `_n<name>` when named. Spatial values are written once
// (h, or d for 3-D) when all dims agree, else per dim. parse(format(d)) gives d back, except a
// right padding beyond what the output needs (it never changes the result) is normalised.
std::string format_conv_descriptor(const conv_descriptor& desc);

// Reads the descriptor of a problem (dims of x, w and y; groups, padding, stride, dilation).
// False when the tensors' ranks do not match spatial_dims.
bool conv_descriptor_from_problem(const tsrpConvolutionProblem& problem, conv_descriptor* desc,
                                  std::string* error);

// Writes the convolution parameters (spatial_dims, groups, padding, stride, dilation; mode
// cross-correlation, compute type f32, default math) into `problem`; its tensors are untouched.
void conv_descriptor_to_problem(const conv_descriptor& desc, tsrpConvolutionProblem* problem);

// Dims of x (N, C, spatial), w (K, C/g, spatial) and y (N, K, spatial); returns their rank.
int conv_tensor_dims(const conv_descriptor& desc, int64_t x_dims[], int64_t w_dims[],
                     int64_t y_dims[]);

// ---- eltwise (activation) ---------------------------------------------------------------------

struct eltwise_descriptor {
  std::vector<int64_t> dims;
  tsrpActivationMode_t mode = TSRP_ACTIVATION_RELU;
  double coef = 0.0;
};

// "2x16x7x7" -> {2, 16, 7, 7}: 1..TSRP_MAX_DIMS positive dims separated by 'x'.
bool parse_dims(std::string_view text, std::vector<int64_t>* dims, std::string* error);
std::string format_dims(const int64_t dims[], int ndims);
std::string format_dims(const std::vector<int64_t>& dims);

// Tessera's name of a mode, e.g. "leaky_relu", "clipped_relu" (messages, tessera-info); "unknown"
// for other values (never null).
const char* activation_mode_name(int32_t mode);

// benchdnn's eltwise algorithm and its alpha/beta -> Tessera mode and coef:
//   relu (alpha 0) -> relu; relu (alpha a != 0) -> leaky_relu(a); logistic -> sigmoid; tanh;
//   linear (alpha 1, beta 0 only) -> identity; elu(alpha); gelu_erf; gelu_tanh; swish(alpha);
//   clip (alpha 0, beta b) -> clipped_relu(b).
// Tessera's own names are accepted too, with the coef taken from alpha: identity, sigmoid,
// leaky_relu, clipped_relu. Fails with a message for unknown names and unsupported alpha/beta.
bool parse_activation(std::string_view algorithm, double alpha, double beta,
                      tsrpActivationMode_t* mode, double* coef, std::string* error);

// The inverse: benchdnn's algorithm name with its alpha and beta.
void activation_to_benchdnn(tsrpActivationMode_t mode, double coef, std::string* algorithm,
                            double* alpha, double* beta);

// ---- replay command lines ---------------------------------------------------------------------

// "nchw" when packed channels-second, "nhwc" when packed channels-last (the rank decides the
// real letters: ncw, ncdhw, ...; the tag names the family), else "strided".
std::string layout_tag(const tsrpTensor& tensor);

// Shortest decimal text that reads back as the same double ("0.1", "6", "1e-05").
std::string format_number(double value);

// tessera-bench command lines, e.g.
//   tessera-bench --conv --dt=f16 --tag=nhwc --backend=cuda mb2ic16ih7oc16oh7kh3ph1
//   tessera-bench --eltwise --dir=bwd --alg=relu --dt=f32 --tag=nchw 2x16x7x7
// An empty backend is left out; so is a "strided" tag (strides cannot be given on the command
// line: the replay then runs packed NCHW).
std::string format_conv_bench_command(const conv_descriptor& desc, int32_t data_type,
                                      std::string_view tag, std::string_view backend);
std::string format_eltwise_bench_command(const eltwise_descriptor& desc, bool backward,
                                         int32_t data_type, std::string_view tag,
                                         std::string_view backend);

// The same, read from a problem as the host passes it to a kernel (data type and tag from x;
// a convolution in convolution mode adds --conv-mode=convolution).
std::string format_bench_command(const tsrpConvolutionProblem& problem, std::string_view backend);
std::string format_bench_command(const tsrpActivationProblem& problem, bool backward,
                                 std::string_view backend);

}  // namespace tessera::common

#endif  // TESSERA_COMMON_PROBLEM_DESCRIPTOR_HPP
