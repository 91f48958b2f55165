// Host side of the tensor-core (implicit GEMM) convolutions: a convolution problem seen as the
// 2-D NHWC / KRSC convolution that CUTLASS's sm90 kernels take, and the checks every direction
// (forward, backward data, backward filter) shares. 1-D problems run as 2-D ones with a height
// of 1, so that one CUTLASS instantiation serves both.
//
// What CUTLASS's sm90 implicit GEMM needs and why:
//  - x, w and y packed channels-last (NHWC, KRSC, NPQK): TMA reads channel rows, and the
//    kernels derive every other stride from the extents;
//  - C and K multiples of 8 (16-byte rows for fp16/bf16): the TMA alignment;
//  - one group, cross-correlation: what the kernels implement;
//  - extents that fit in int32 (CUTLASS's problem shape), and TMA's im2col limits, which depend
//    on the direction and are checked by each.
#pragma once

#include "element_types.cuh"
#include "tensor_layout.hpp"

#include <tessera/plugin_abi.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace tessera::cuda::igemm {

// The convolution fields of tsrpConvolutionProblem and tsrpConvolutionBiasActivationProblem,
// which share names but not a struct.
struct conv_view {
  const tsrpTensor* x;
  const tsrpTensor* w;
  const tsrpTensor* y;
  int32_t spatial_dims;
  int32_t mode;
  int32_t compute_type;
  int32_t math_mode;
  int64_t groups;
  const int64_t* pad_before;
  const int64_t* pad_after;
  const int64_t* stride;
  const int64_t* dilation;
};

template <typename Problem>
conv_view view_of(const Problem& p) {
  return {&p.x, &p.w, &p.y, p.spatial_dims, p.mode, p.compute_type, p.math_mode, p.groups,
          p.pad_before, p.pad_after, p.stride, p.dilation};
}

// Index 0 of the spatial arrays is height, 1 is width.
struct nhwc_geometry {
  int n, h, w, c;  // x: N, H, W, C
  int k, r, s;     // w: K, R, S (and C)
  int p, q;        // y: P, Q (and N, K)
  int pad_before[2], pad_after[2], stride[2], dilation[2];
};

// Where backward data writes dx: element strides of W, H and N (C contiguous). Packed NHWC unless
// dx is a view of a larger tensor (the strided dgrad writes each phase of dx through strides of
// s * C, s * W * C, H * W * C; conv_dgrad_phases.hpp).
struct dx_strides {
  int64_t w, h, n;
};
inline dx_strides packed_dx(const nhwc_geometry& g) {
  return {g.c, int64_t{g.w} * g.c, int64_t{g.h} * g.w * g.c};
}

// The problem as 2-D NHWC; call only after common_support() returned empty.
inline nhwc_geometry make_geometry(const conv_view& v) {
  nhwc_geometry g{};
  const bool one_d = v.spatial_dims == 1;
  auto extent = [](const tsrpTensor& t, int d) { return static_cast<int>(t.dims[d]); };
  g.n = extent(*v.x, 0);
  g.c = extent(*v.x, 1);
  g.k = extent(*v.w, 0);
  g.h = one_d ? 1 : extent(*v.x, 2);
  g.w = extent(*v.x, one_d ? 2 : 3);
  g.r = one_d ? 1 : extent(*v.w, 2);
  g.s = extent(*v.w, one_d ? 2 : 3);
  g.p = one_d ? 1 : extent(*v.y, 2);
  g.q = extent(*v.y, one_d ? 2 : 3);
  for (int i = 0; i < 2; ++i) {
    const bool padded_height = one_d && i == 0;  // the height a 1-D problem does not have
    const int from = one_d ? 0 : i;
    g.pad_before[i] = padded_height ? 0 : static_cast<int>(v.pad_before[from]);
    g.pad_after[i] = padded_height ? 0 : static_cast<int>(v.pad_after[from]);
    g.stride[i] = padded_height ? 1 : static_cast<int>(v.stride[from]);
    g.dilation[i] = padded_height ? 1 : static_cast<int>(v.dilation[from]);
  }
  return g;
}

// Empty when x, w and y all hold `element` (TSRP_DATA_HALF or TSRP_DATA_BFLOAT16) and the
// problem has the shape every direction needs; otherwise why not, naming the argument.
inline std::string common_support(const conv_view& v, int32_t element) {
  // First, so that a flipped problem is declined for its mode whatever else it has (the
  // conformance test reads the word "flipped" in the reason).
  if (v.mode != TSRP_CROSS_CORRELATION) {
    return "flipped-filter (convolution) mode not supported: cross-correlation only";
  }
  if (v.spatial_dims < 1 || v.spatial_dims > 2) {
    return std::to_string(v.spatial_dims) + " spatial dims not supported (1-D and 2-D only)";
  }
  const int32_t rank = v.spatial_dims + 2;
  const std::pair<const char*, const tsrpTensor*> tensors[] = {{"x", v.x}, {"w", v.w}, {"y", v.y}};
  for (const auto& [name, t] : tensors) {
    if (t->data_type != element) {
      // "int8 not supported" is the phrase the conformance test reads as "declined as a whole".
      return std::string(name) + " data type " + data_type_name(t->data_type) + " not supported: this kernel takes " +
             data_type_name(element) + " x, w and y";
    }
    if (t->ndims != rank) {
      return std::string(name) + " has " + std::to_string(t->ndims) + " dims, expected " + std::to_string(rank);
    }
  }
  if (!is_floating_storage(v.compute_type)) {
    return std::string("compute type ") + data_type_name(v.compute_type) + " not supported (fp32 accumulation)";
  }
  if (v.groups != 1) return "groups " + std::to_string(v.groups) + " not supported (dense convolution only)";
  if (!is_packed_channels_last(*v.x)) return "x is not packed channels-last (NHWC)";
  if (!is_packed_channels_last(*v.w)) return "w is not packed channels-last (KRSC)";
  if (!is_packed_channels_last(*v.y)) return "y is not packed channels-last (NPQK)";
  constexpr int64_t int_max = std::numeric_limits<int32_t>::max();
  for (const auto& [name, t] : tensors) {
    for (int d = 0; d < rank; ++d) {
      if (t->dims[d] < 0 || t->dims[d] > int_max) {
        return std::string(name) + " dim " + std::to_string(d) + " of " + std::to_string(t->dims[d]) +
               " is outside CUTLASS's int32 extents";
      }
    }
    // TMA global strides must stay below 2^40 bytes; the outermost one bounds them all.
    if (element_count(*t) > (int64_t{1} << 38)) return std::string(name) + " is too large for a TMA descriptor";
  }
  if (v.w->dims[1] != v.x->dims[1]) return "w's channels differ from x's";
  if (v.x->dims[1] % 8 != 0) {
    return "x has " + std::to_string(v.x->dims[1]) + " channels (C), not a multiple of 8 (16-byte TMA rows)";
  }
  if (v.w->dims[0] % 8 != 0) {
    return "w has " + std::to_string(v.w->dims[0]) + " filters (K), not a multiple of 8 (16-byte TMA rows)";
  }
  for (int i = 0; i < v.spatial_dims; ++i) {
    const std::string dim = " in spatial dim " + std::to_string(i);
    if (v.stride[i] < 1 || v.stride[i] > 8) {
      return "stride " + std::to_string(v.stride[i]) + dim + " not supported (1 to 8, TMA's traversal limit)";
    }
    // TMA's im2col offsets and corners are 8-bit per spatial dim (im2col_corner_support has the
    // exact limits); these coarser bounds keep the int arithmetic of those checks exact.
    if (v.dilation[i] < 1 || v.dilation[i] > 255) {
      return "dilation " + std::to_string(v.dilation[i]) + dim + " not supported (1 to 255)";
    }
    if (v.pad_before[i] < 0 || v.pad_after[i] < 0) return "negative padding" + dim + " not supported";
    if (v.pad_before[i] > 255 || v.pad_after[i] > 255) return "padding beyond 255" + dim + " not supported";
    if (v.w->dims[2 + i] > 255) {
      return "filter extent " + std::to_string(v.w->dims[2 + i]) + dim + " not supported (at most 255)";
    }
  }
  const int64_t pixels = v.y->dims[0] * (v.spatial_dims == 2 ? v.y->dims[2] * v.y->dims[3] : v.y->dims[2]);
  if (pixels > int_max) return "y has " + std::to_string(pixels) + " pixels (N*P*Q), more than the int32 GEMM M";
  const int64_t in_pixels = v.x->dims[0] * (v.spatial_dims == 2 ? v.x->dims[2] * v.x->dims[3] : v.x->dims[2]);
  if (in_pixels > int_max) return "x has " + std::to_string(in_pixels) + " pixels (N*H*W), more than int32";
  return {};
}

// What every tensor-core backward kernel checks first: common_support and no int8 output scales;
// an empty `output` (dx or dw) needs nothing more (the kernel's run returns at once); otherwise
// `direction_support(geometry)`, the direction's own checks.
template <typename DirectionSupport>
std::string backward_support(const tsrpConvolutionProblem& p, int32_t element, const tsrpTensor& output,
                             DirectionSupport&& direction_support) {
  const conv_view v = view_of(p);
  const std::string why = common_support(v, element);
  if (!why.empty()) return why;
  if (p.output_scale_count != 0) return "output scales not supported (they belong to int8 convolutions)";
  if (element_count(output) == 0) return {};
  return direction_support(make_geometry(v));
}

// TMA im2col limits for 2-D tensors (4-D descriptors), which CUTLASS's can_implement also
// enforces: the box corners are signed 8-bit per spatial dim and the filter offsets unsigned
// 8-bit. `lower` and `upper` are the corners of the im2col window of the tensor TMA walks.
inline std::string im2col_corner_support(const char* tensor, const int (&lower)[2], const int (&upper)[2],
                                         const int (&filter_extent)[2], const int (&dilation)[2]) {
  static const char* dim_names[2] = {"height", "width"};
  for (int i = 0; i < 2; ++i) {
    if (lower[i] < -128 || lower[i] > 127 || upper[i] < -128 || upper[i] > 127) {
      return std::string("padding of ") + tensor + " in " + dim_names[i] +
             " is outside TMA's im2col corner range [-128, 127]";
    }
    if ((filter_extent[i] - 1) * dilation[i] > 254) {
      return std::string("filter ") + dim_names[i] + " " + std::to_string(filter_extent[i]) + " with dilation " +
             std::to_string(dilation[i]) + " spans more than TMA's 255 im2col offsets";
    }
  }
  return {};
}

// Workspace offsets: staging buffers start on 256-byte boundaries (TMA needs 16).
inline size_t align_workspace(size_t bytes) { return (bytes + 255) / 256 * 256; }

// NOT_SUPPORTED unless `pointer` is 16-byte aligned, which `needed_by` (the reason's words) needs.
inline void require_16_byte_alignment(const void* pointer, const char* name, const char* needed_by) {
  if (reinterpret_cast<uintptr_t>(pointer) % 16 != 0) {
    throw status_error(TSRP_STATUS_NOT_SUPPORTED,
                       std::string(name) + " is not 16-byte aligned, which " + needed_by + " need");
  }
}

// BAD_PARAM unless the caller's workspace is 16-byte aligned, which `needed_by` needs: unlike an
// operand's alignment (a kernel's limit, which another kernel may not have), the workspace is sized
// for the kernel asked for, and every allocator gives at least 16.
inline void require_aligned_workspace(const void* workspace, const char* needed_by) {
  if (reinterpret_cast<uintptr_t>(workspace) % 16 != 0) {
    throw status_error(TSRP_STATUS_BAD_PARAM, std::string("workspace is not 16-byte aligned (") + needed_by + " need it)");
  }
}

// NOT_SUPPORTED unless `pointer` is 16-byte aligned, which TMA descriptors need.
inline void require_tma_alignment(const void* pointer, const char* name) {
  require_16_byte_alignment(pointer, name, "the TMA descriptors");
}

}  // namespace tessera::cuda::igemm
