// Max pooling under the API's NaN rules, for the calls oneDNN cannot be trusted with.
//
// oneDNN's max pooling does not define what a NaN input does (its kernels compare with the ISA's
// max, whose NaN behaviour depends on operand order; here all-NaN windows came out as the lowest
// float and TSRP_PROPAGATE_NAN was not honoured). The API's rule (tessera_pooling.h, the
// reference in tests/reference/reference_pooling.hpp):
//   forward: with TSRP_PROPAGATE_NAN a window holding a NaN gives NaN; with
//            TSRP_NOT_PROPAGATE_NAN NaNs are skipped and only a window of NaNs gives NaN;
//   backward: each window's gradient goes to the first of its largest non-NaN elements in window
//            order; a window of NaNs passes no gradient.
// pool_fwd / pool_bwd scan x first (one read of x, bits only) and, when it holds a NaN, compute
// the whole result in the plain loops below instead of the primitive. NaN-free calls, the usual
// case, pay the scan only.
#pragma once

#include <tessera/plugin_abi.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>

namespace tessera::onednn {

// A plain strided tensor as the loops below walk it (N, C, then the spatial dims).
struct strided_view {
  char* data = nullptr;
  int32_t data_type = 0;
  int ndims = 0;
  int64_t dims[TSRP_MAX_DIMS] = {};
  int64_t strides[TSRP_MAX_DIMS] = {};
};

// How to scan one layout of x for NaN, worked out once per plan so that the per-call path is the
// scan alone: the layout, its element count, and whether it is one dense run of elements.
struct nan_scan {
  strided_view layout;  // data unset
  int64_t count = 0;
  bool dense = false;
};
nan_scan nan_scan_of(const dnnl::memory::desc& x);

// True when some element of x (laid out as `scan` says: plain strided f32, f16 or bf16) is a NaN.
bool holds_nan(const nan_scan& scan, const void* x);

// y = max pooling of x under p's NaN rule (alpha 1, beta 0: the caller blends). x and y are plain
// strided tensors of p.x's and p.y's dims, in any of f32, f16, bf16.
void max_pool_forward_nan_aware(const tsrpPoolingProblem& p, const dnnl::memory& x, const dnnl::memory& y);

// dx = the max pooling gradient of dy under the rule above (alpha 1, beta 0: the caller blends).
// Each dx element sums the dy of the windows it wins, in double, and is written once.
void max_pool_backward_nan_aware(const tsrpPoolingProblem& p, const dnnl::memory& x, const dnnl::memory& dy,
                                 const dnnl::memory& dx);

}  // namespace tessera::onednn
