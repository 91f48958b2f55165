// benchdnn's problem descriptors for the drivers beyond conv and eltwise (driver_pool.md,
// driver_bnorm.md, driver_lrn.md, driver_rnn.md, driver_matmul.md, driver_binary.md,
// driver_reduction.md), read and written for tessera-bench and its suites:
//   pool:       mb2ic16ih14oh7kh3sh2ph1        (mb, ic, id/ih/iw, od/oh/ow, kd/kh/kw, sd/sh/sw,
//                                               pd/ph/pw; 2-D or 3-D)
//   bnorm, lrn: mb2ic16ih7, mb2ic16ih7ls5      (mb, ic, id/ih/iw; lrn adds ls, the local size)
//   rnn:        l2t5mb3sic4slc3dhc4dic4        (layers, steps, minibatch, state, input,
//                                               hidden and output sizes)
//   matmul:     2x3x5:2x5x8 (A dims : B dims) or m10n20k30 (one 2-D problem)
//   binary, reduction: 2x16x7x7:1x16x1x1      (two dims lists, see parse_dims_pair)
// Every keyed descriptor takes '_' between entries and an optional name, `_n<name>` at the end
// (or `n<name>_` leading), as the convolution descriptor does. Errors name the entry: "unknown
// key 'xy' at position 5", "expected a number after 'ic' at position 2", "ic must be positive",
// "'mb' given twice at position 4".
#ifndef TESSERA_COMMON_OP_DESCRIPTORS_HPP
#define TESSERA_COMMON_OP_DESCRIPTORS_HPP

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::common {

// ---- pooling ----------------------------------------------------------------------------------

// Spatial arrays hold spatial_dims (2 or 3) values, d h w order. Rules as benchdnn's and the
// convolution parser's: any d key makes it 3-D; a missing w copies h, a missing h copies d;
// stride 1 and padding 0 by default; ic, the input size and the kernel are required; a missing
// output is computed with the right padding equal to the left; a given output sets the right
// padding that produces it (asymmetric padding).
struct pool_descriptor {
  int spatial_dims = 2;
  int64_t mb = 2;
  int64_t ic = 0;
  int64_t in[TSRP_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t out[TSRP_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t k[TSRP_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t stride[TSRP_MAX_SPATIAL_DIMS] = {1, 1, 1};
  int64_t pad_before[TSRP_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t pad_after[TSRP_MAX_SPATIAL_DIMS] = {0, 0, 0};
  std::string name;
};
bool operator==(const pool_descriptor& a, const pool_descriptor& b);
bool parse_pool_descriptor(std::string_view text, pool_descriptor* desc, std::string* error);
// Canonical: mb, ic, input, output, kernel, strides (when not 1), left paddings (when not 0);
// per-dim values only where dims differ. parse(format(d)) == d.
std::string format_pool_descriptor(const pool_descriptor& desc);
// x {mb, ic, in...} and y {mb, ic, out...}; returns the rank (4 or 5).
int pool_tensor_dims(const pool_descriptor& desc, int64_t x_dims[], int64_t y_dims[]);

// ---- batch normalization and LRN --------------------------------------------------------------

// mb2ic16ih7 (2-D), id for 3-D, iw for a rectangle; no spatial key at all means a 2-D tensor
// {mb, ic}. local_size (ls) is only read by the LRN parser (default 5).
struct norm_descriptor {
  int spatial_dims = 2;
  int64_t mb = 2;
  int64_t ic = 0;
  int64_t in[TSRP_MAX_SPATIAL_DIMS] = {1, 1, 1};
  int64_t local_size = 5;
  std::string name;
};
bool operator==(const norm_descriptor& a, const norm_descriptor& b);
bool parse_bnorm_descriptor(std::string_view text, norm_descriptor* desc, std::string* error);
bool parse_lrn_descriptor(std::string_view text, norm_descriptor* desc, std::string* error);
std::string format_bnorm_descriptor(const norm_descriptor& desc);
std::string format_lrn_descriptor(const norm_descriptor& desc);  // adds ls
std::vector<int64_t> norm_tensor_dims(const norm_descriptor& desc);

// ---- RNN --------------------------------------------------------------------------------------

// l (layers, 1), t (steps, 1), mb (2), sic (state), slc (input), dhc (hidden), dic (output):
// benchdnn's sizes. Missing sizes copy one another as benchdnn does: slc, dhc and dic default to
// sic (and sic to dhc, then slc, when missing); at least one must be given.
struct rnn_descriptor {
  int64_t layers = 1;
  int64_t steps = 1;
  int64_t mb = 2;
  int64_t sic = 0, slc = 0, dhc = 0, dic = 0;
  std::string name;
};
bool operator==(const rnn_descriptor& a, const rnn_descriptor& b);
bool parse_rnn_descriptor(std::string_view text, rnn_descriptor* desc, std::string* error);
std::string format_rnn_descriptor(const rnn_descriptor& desc);

// ---- two dims lists ---------------------------------------------------------------------------

// "2x16x7x7:1x16x1x1" -> {2,16,7,7}, {1,16,1,1}. With `second_optional`, a single list gives
// b = a (binary's same-shape case). Both lists must have the same rank when `same_rank`.
bool parse_dims_pair(std::string_view text, bool second_optional, bool same_rank,
                     std::vector<int64_t>* a, std::vector<int64_t>* b, std::string* error);
std::string format_dims_pair(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// ---- matmul -----------------------------------------------------------------------------------

// "2x3x5:2x5x8" (A [batch..., M, K] : B [batch..., K, N], ranks 2..8 and equal; a batch dim may
// be 1 on one side: broadcast) or "m10n20k30" (mb<batch> optional in front: mb2m10n20k30).
struct matmul_descriptor {
  std::vector<int64_t> a, b;  // as given (not transposed)
  std::string name;
};
bool parse_matmul_descriptor(std::string_view text, matmul_descriptor* desc, std::string* error);
std::string format_matmul_descriptor(const matmul_descriptor& desc);  // always the dims form
// C's dims (batch broadcast, M, N); false when K or a batch dim does not match.
bool matmul_output_dims(const matmul_descriptor& desc, std::vector<int64_t>* c, std::string* error);

}  // namespace tessera::common

#endif  // TESSERA_COMMON_OP_DESCRIPTORS_HPP
