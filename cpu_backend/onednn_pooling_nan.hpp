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

namespace tessera::onednn {

// True when some element of `x` (a plain strided f32, f16 or bf16 tensor) is a NaN.
bool holds_nan(const dnnl::memory& x);

// y = max pooling of x under p's NaN rule (alpha 1, beta 0: the caller blends). x and y are plain
// strided tensors of p.x's and p.y's dims, in any of f32, f16, bf16.
void max_pool_forward_nan_aware(const tsrpPoolingProblem& p, const dnnl::memory& x, const dnnl::memory& y);

// dx = the max pooling gradient of dy under the rule above (alpha 1, beta 0: the caller blends).
// Each dx element sums the dy of the windows it wins, in double, and is written once.
void max_pool_backward_nan_aware(const tsrpPoolingProblem& p, const dnnl::memory& x, const dnnl::memory& dy,
                                 const dnnl::memory& dx);

}  // namespace tessera::onednn
