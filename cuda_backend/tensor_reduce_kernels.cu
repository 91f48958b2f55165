// Reduce tensor, c = alpha * reduce(a) + beta * c over the dims where c is 1 and a is not, with
// the flattened indices of the chosen elements for min/max/amax:
//   "reduce_tensor_rows"     the reduced elements are a's most contiguous ones (softmax-like
//       rows, global reductions): a group of lanes per output (2 to 32, as the row needs) reads
//       its row coalesced, 16 bytes at a time when the row is one contiguous aligned run;
//   "reduce_tensor_columns"  any layout (the fallback): consecutive threads take consecutive
//       outputs along a's most contiguous kept dim, 8 rows of threads split the reduced
//       positions, so per-channel statistics of NHWC and reductions over C of NCHW read coalesced.
// Outputs and reduced positions are both walked in a's memory order (the row-major numbers the
// ABI defines, for c and for the indices, ride along as extra strides). A reduction too long for
// one group or block is split into a fixed number of parts, from the problem's shape alone; the
// parts go to the workspace and a third kernel combines them, a warp per output, in a fixed
// tree. Nothing depends on timing or the device, so results are bitwise reproducible.
//
// Accumulation is fp32 (the compute type). min/max/amax keep (value, position) and prefer the
// smaller position on ties, so any combining order picks the first extreme element; NaN is
// skipped unless NaN propagation is asked for, and then the first NaN wins.
#include "tensor_ops_common.cuh"
#include "tensor_ops_kernels.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace tessera::cuda::tensor_ops {
namespace {

enum reduce_kind : int {
  kind_sum = 0,  // add, avg
  kind_sum_abs,  // norm1
  kind_sum_square,  // norm2
  kind_product,
  kind_min,
  kind_max,
  kind_amax
};

constexpr bool is_arg_kind(int kind) { return kind >= kind_min; }
constexpr uint32_t no_index = 0xffffffffu;

constexpr int rows_threads = 256;
constexpr int column_lanes = 32;
constexpr int column_rows = 8;
constexpr int finish_threads = 256;

// Kept-dim walker operands: offset in a, offset in c, row-major number of the output.
constexpr int kept_a = 0;
constexpr int kept_c = 1;
constexpr int kept_number = 2;
// Reduced-dim walker operands: offset in a, row-major position within the slice.
constexpr int reduced_a = 0;
constexpr int reduced_position = 1;

int kind_of(int32_t op) {
  switch (op) {
    case TSRP_REDUCE_TENSOR_MUL: return kind_product;
    case TSRP_REDUCE_TENSOR_MIN: return kind_min;
    case TSRP_REDUCE_TENSOR_MAX: return kind_max;
    case TSRP_REDUCE_TENSOR_AMAX: return kind_amax;
    case TSRP_REDUCE_TENSOR_NORM1: return kind_sum_abs;
    case TSRP_REDUCE_TENSOR_NORM2: return kind_sum_square;
    default: return kind_sum;  // add, avg
  }
}

struct reduce_params {
  const void* a;
  void* c;
  uint32_t* indices;  // null unless asked for
  float* partial_values;
  uint32_t* partial_indices;
  int32_t a_type, c_type;  // a_type read only by dyn_t instantiations
  int32_t op;
  int32_t propagate_nan;
  float alpha, beta;
  int64_t outputs;  // elements of c
  int64_t length;   // elements reduced into each
  int64_t splits;   // parts each reduction is cut into
  int64_t chunk;    // positions per part
  int32_t group;    // rows: lanes per (output, part), a power of two up to 32
  index_walker<3> kept;
  index_walker<2> reduced;
};

struct reduce_state {
  float value;
  uint32_t index;
};

template <int Kind>
__device__ __forceinline__ reduce_state initial_state() {
  if constexpr (Kind == kind_product) {
    return {1.0f, 0u};
  } else if constexpr (Kind == kind_min) {
    return {__int_as_float(0x7f800000), no_index};
  } else if constexpr (Kind == kind_max || Kind == kind_amax) {
    return {-__int_as_float(0x7f800000), no_index};
  } else {
    return {0.0f, 0u};
  }
}

// Whether (x, position) replaces the state: a total order (NaN first when propagating, then the
// extreme value, then the smaller position), so combining in any order gives one answer.
template <int Kind>
__device__ __forceinline__ bool beats(float x, uint32_t position, const reduce_state& s, bool propagate) {
  if (s.index == no_index) return propagate || !isnan(x);
  const bool x_nan = isnan(x), s_nan = isnan(s.value);
  if (x_nan || s_nan) return propagate && x_nan && (!s_nan || position < s.index);
  if (x == s.value) return position < s.index;
  if constexpr (Kind == kind_min) {
    return x < s.value;
  } else {
    return x > s.value;
  }
}

template <int Kind>
__device__ __forceinline__ void accumulate(reduce_state& s, float x, uint32_t position, bool propagate) {
  if constexpr (Kind == kind_sum) {
    s.value += x;
  } else if constexpr (Kind == kind_sum_abs) {
    s.value += fabsf(x);
  } else if constexpr (Kind == kind_sum_square) {
    s.value += x * x;
  } else if constexpr (Kind == kind_product) {
    s.value *= x;
  } else {
    if constexpr (Kind == kind_amax) x = fabsf(x);
    if (beats<Kind>(x, position, s, propagate)) s = {x, position};
  }
}

template <int Kind>
__device__ __forceinline__ void combine(reduce_state& s, const reduce_state& other, bool propagate) {
  if constexpr (Kind == kind_product) {
    s.value *= other.value;
  } else if constexpr (is_arg_kind(Kind)) {
    if (other.index != no_index && beats<Kind>(other.value, other.index, s, propagate)) s = other;
  } else {
    s.value += other.value;
  }
}

// Butterfly over aligned groups of `width` lanes (a power of two); every lane of the warp calls
// it. Each pair adds the same two values, so the result is the same in every lane.
template <int Kind>
__device__ __forceinline__ void combine_lanes(reduce_state& s, int width, bool propagate) {
  for (int offset = width / 2; offset > 0; offset /= 2) {
    reduce_state other;
    other.value = __shfl_xor_sync(0xffffffffu, s.value, offset);
    other.index = __shfl_xor_sync(0xffffffffu, s.index, offset);
    combine<Kind>(s, other, propagate);
  }
}

template <int Kind>
__device__ __forceinline__ void finish(const reduce_params& p, int64_t number, int64_t c_offset,
                                       const reduce_state& s) {
  float r = s.value;
  if constexpr (is_arg_kind(Kind)) {
    if (s.index == no_index) r = __int_as_float(0x7fc00000);  // only NaN, not propagated
    if (p.indices != nullptr) p.indices[number] = s.index == no_index ? 0u : s.index;
  } else if constexpr (Kind == kind_sum) {
    if (p.op == TSRP_REDUCE_TENSOR_AVG) r /= static_cast<float>(p.length);
  } else if constexpr (Kind == kind_sum_square) {
    r = sqrtf(r);
  }
  float out = p.alpha * r;
  if (p.beta != 0.0f) out += p.beta * load_dyn(p.c, c_offset, p.c_type);
  store_dyn(p.c, c_offset, p.c_type, out);
}

// A finished part: the output itself when there is one part, else its slot in the workspace
// (slot = walk index * splits + part, so the parts of one output are adjacent).
template <int Kind>
__device__ __forceinline__ void emit(const reduce_params& p, int64_t walk_index, int64_t part, int64_t number,
                                     int64_t c_offset, const reduce_state& s) {
  if (p.splits == 1) {
    finish<Kind>(p, number, c_offset, s);
  } else {
    const int64_t slot = walk_index * p.splits + part;
    p.partial_values[slot] = s.value;
    if constexpr (is_arg_kind(Kind)) p.partial_indices[slot] = s.index;
  }
}

// V > 1 only when the reduced positions are one contiguous run per output, aligned to V.
template <typename TA, int Kind, int V>
__global__ void __launch_bounds__(rows_threads) reduce_rows(const reduce_params p) {
  const int lane = threadIdx.x & 31;
  const int group = p.group;
  const int member = lane & (group - 1);
  const int64_t groups_per_warp = 32 / group;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
  const int64_t items = p.outputs * p.splits;
  const bool propagate = p.propagate_nan != 0;
  // `first` is the same in every lane of a warp, so all of them reach the shuffles together.
  for (int64_t first = warp * groups_per_warp; first < items; first += warps * groups_per_warp) {
    const int64_t item = first + lane / group;
    reduce_state s = initial_state<Kind>();
    int64_t walk_index = 0, part = 0, kept[3] = {0, 0, 0};
    if (item < items) {
      walk_index = p.splits == 1 ? item : item / p.splits;
      part = item - walk_index * p.splits;
      p.kept.template offsets<false>(walk_index, kept);
      const int64_t begin = part * p.chunk;
      const int64_t end = begin + p.chunk < p.length ? begin + p.chunk : p.length;
      if constexpr (V > 1) {
        const TA* row = static_cast<const TA*>(p.a) + kept[kept_a];
        const int64_t vector_end = begin + (end - begin) / V * V;
        for (int64_t q = begin + member * V; q < vector_end; q += static_cast<int64_t>(group) * V) {
          float v[V];
          load_vector<TA, V>(row + q, v);
#pragma unroll
          for (int j = 0; j < V; ++j) accumulate<Kind>(s, v[j], static_cast<uint32_t>(q + j), propagate);
        }
        for (int64_t q = vector_end + member; q < end; q += group) {
          accumulate<Kind>(s, value_of(row[q]), static_cast<uint32_t>(q), propagate);
        }
      } else {
        for (int64_t q = begin + member; q < end; q += group) {
          int64_t at[2];
          p.reduced.template offsets<false>(q, at);
          accumulate<Kind>(s, load_element<TA>(p.a, kept[kept_a] + at[reduced_a], p.a_type),
                           static_cast<uint32_t>(at[reduced_position]), propagate);
        }
      }
    }
    combine_lanes<Kind>(s, group, propagate);
    if (item < items && member == 0) emit<Kind>(p, walk_index, part, kept[kept_number], kept[kept_c], s);
  }
}

// Block (32, rows): x takes 32 consecutive outputs of the walk, y splits the positions of part
// blockIdx.y; the rows' states are combined in y order.
template <typename TA, int Kind>
__global__ void __launch_bounds__(column_lanes* column_rows) reduce_columns(const reduce_params p) {
  __shared__ float values[column_rows][column_lanes];
  __shared__ uint32_t positions[column_rows][column_lanes];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t walk_index = static_cast<int64_t>(blockIdx.x) * column_lanes + tx;
  const int64_t part = blockIdx.y;
  const bool propagate = p.propagate_nan != 0;
  reduce_state s = initial_state<Kind>();
  int64_t kept[3] = {0, 0, 0};
  if (walk_index < p.outputs) {
    p.kept.template offsets<false>(walk_index, kept);
    const int64_t begin = part * p.chunk;
    const int64_t end = begin + p.chunk < p.length ? begin + p.chunk : p.length;
    for (int64_t q = begin + ty; q < end; q += blockDim.y) {
      int64_t at[2];
      p.reduced.template offsets<false>(q, at);
      accumulate<Kind>(s, load_element<TA>(p.a, kept[kept_a] + at[reduced_a], p.a_type),
                       static_cast<uint32_t>(at[reduced_position]), propagate);
    }
  }
  values[ty][tx] = s.value;
  positions[ty][tx] = s.index;
  __syncthreads();
  if (ty == 0 && walk_index < p.outputs) {
    for (int r = 1; r < static_cast<int>(blockDim.y); ++r) combine<Kind>(s, {values[r][tx], positions[r][tx]}, propagate);
    emit<Kind>(p, walk_index, part, kept[kept_number], kept[kept_c], s);
  }
}

// A warp per output combines its parts: lane l takes parts l, l + 32, ... in order, then a
// fixed butterfly.
template <int Kind>
__global__ void __launch_bounds__(finish_threads) reduce_finish_parts(const reduce_params p) {
  const int lane = threadIdx.x & 31;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int64_t warps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
  const bool propagate = p.propagate_nan != 0;
  for (int64_t walk_index = warp; walk_index < p.outputs; walk_index += warps) {
    reduce_state s = initial_state<Kind>();
    for (int64_t part = lane; part < p.splits; part += 32) {
      const int64_t slot = walk_index * p.splits + part;
      reduce_state other{p.partial_values[slot], 0u};
      if constexpr (is_arg_kind(Kind)) other.index = p.partial_indices[slot];
      combine<Kind>(s, other, propagate);
    }
    combine_lanes<Kind>(s, 32, propagate);
    if (lane == 0) {
      int64_t kept[3];
      p.kept.template offsets<false>(walk_index, kept);
      finish<Kind>(p, kept[kept_number], kept[kept_c], s);
    }
  }
}

// ---- host: the plan, from the problem alone (so workspace_size and run agree) -----------------

enum class strategy { rows, columns };

struct reduce_plan {
  int64_t outputs = 0, length = 1, splits = 1, chunk = 1;
  int32_t column_rows_used = 1;
  merged_layout<3> kept;     // a, c, output number
  merged_layout<2> reduced;  // a, position
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Kept and reduced dims, each merged and ordered by a's strides (the walk follows memory), with
// the row-major numbers the ABI defines carried as strides.
void build_layouts(const tsrpReduceTensorProblem& p, reduce_plan& plan) {
  int64_t kept_extents[TSRP_MAX_DIMS] = {}, reduced_extents[TSRP_MAX_DIMS] = {};
  int64_t kept_strides[3][TSRP_MAX_DIMS] = {}, reduced_strides[2][TSRP_MAX_DIMS] = {};
  int kept = 0, reduced = 0;
  for (int d = 0; d < p.a.ndims; ++d) {
    if (p.a.dims[d] <= 1) continue;
    if (p.c.dims[d] == 1) {
      reduced_extents[reduced] = p.a.dims[d];
      reduced_strides[reduced_a][reduced] = p.a.strides[d];
      ++reduced;
    } else {
      kept_extents[kept] = p.a.dims[d];
      kept_strides[kept_a][kept] = p.a.strides[d];
      kept_strides[kept_c][kept] = p.c.strides[d];
      ++kept;
    }
  }
  int64_t number = 1;
  for (int i = kept - 1; i >= 0; --i) {
    kept_strides[kept_number][i] = number;
    number *= kept_extents[i];
  }
  int64_t position = 1;
  for (int i = reduced - 1; i >= 0; --i) {
    reduced_strides[reduced_position][i] = position;
    position *= reduced_extents[i];
  }
  plan.outputs = number;
  plan.length = position;
  plan.kept = sort_and_merge<3>(kept, kept_extents, kept_strides, kept_a);
  plan.reduced = sort_and_merge<2>(reduced, reduced_extents, reduced_strides, reduced_a);
}

// Rows: split only when there are too few outputs to occupy the GPU (8192 groups) and each part
// keeps at least 4096 positions; parts are multiples of 16 positions, so every part starts
// aligned for any vector width.
// Columns: 8 rows of threads (fewer for short reductions), split when there are fewer than 1024
// blocks of outputs, each row of a part keeping at least 64 positions.
reduce_plan plan_reduction(const tsrpReduceTensorProblem& p, strategy how) {
  reduce_plan plan;
  build_layouts(p, plan);
  const int64_t m = plan.outputs, l = plan.length;
  int64_t splits = 1;
  if (how == strategy::rows) {
    constexpr int64_t target_groups = 8192, min_part = 4096;
    if (m < target_groups && l >= 2 * min_part) {
      splits = std::min(ceil_div(l, min_part), ceil_div(target_groups, m));
    }
    if (splits > 1) {
      plan.chunk = ceil_div(ceil_div(l, splits), 16) * 16;
      plan.splits = ceil_div(l, plan.chunk);
    } else {
      plan.chunk = l;
      plan.splits = 1;
    }
  } else {
    plan.column_rows_used = static_cast<int32_t>(std::min<int64_t>(column_rows, l));
    const int64_t blocks = ceil_div(m, column_lanes);
    constexpr int64_t target_blocks = 2048, min_row_part = 64;
    if (blocks < target_blocks / 2 && l >= 2 * column_rows * min_row_part) {
      splits = std::min({ceil_div(l, column_rows * min_row_part), ceil_div(target_blocks, blocks), int64_t{65535}});
    }
    plan.chunk = ceil_div(l, splits);
    plan.splits = ceil_div(l, plan.chunk);
  }
  return plan;
}

size_t partial_values_bytes(const reduce_plan& plan) {
  const size_t bytes = static_cast<size_t>(plan.outputs * plan.splits) * sizeof(float);
  return (bytes + 255) / 256 * 256;
}

size_t workspace_of(const tsrpReduceTensorProblem& p, strategy how) {
  if (element_count(p.c) == 0) return 0;
  const reduce_plan plan = plan_reduction(p, how);
  if (plan.splits <= 1) return 0;
  size_t bytes = partial_values_bytes(plan);
  if (is_arg_kind(kind_of(p.op))) bytes += static_cast<size_t>(plan.outputs * plan.splits) * sizeof(uint32_t);
  return bytes;
}

bool wants_indices(const tsrpReduceTensorProblem& p) { return p.indices == TSRP_REDUCE_TENSOR_FLATTENED_INDICES; }

std::string reduce_reason(const tsrpReduceTensorProblem& p) {
  if (p.op < TSRP_REDUCE_TENSOR_ADD || p.op > TSRP_REDUCE_TENSOR_NORM2) {
    return "reduce op " + std::to_string(p.op) + " is unknown";
  }
  if (p.compute_type != TSRP_DATA_FLOAT) {
    return std::string("compute type ") + data_type_name(p.compute_type) + ": reductions accumulate in fp32 (use float)";
  }
  if (p.nan_propagation != TSRP_NOT_PROPAGATE_NAN && p.nan_propagation != TSRP_PROPAGATE_NAN) {
    return "nan_propagation " + std::to_string(p.nan_propagation) + " is unknown";
  }
  if (p.indices != TSRP_REDUCE_TENSOR_NO_INDICES && p.indices != TSRP_REDUCE_TENSOR_FLATTENED_INDICES) {
    return "indices mode " + std::to_string(p.indices) + " is unknown";
  }
  if (wants_indices(p)) {
    if (!is_arg_kind(kind_of(p.op))) return "indices are only defined for min, max and amax";
    if (p.indices_type != TSRP_32BIT_INDICES) return "indices_type " + std::to_string(p.indices_type) + ": only 32-bit indices";
  }
  std::string why = tensor_reason(p.a, "a");
  if (why.empty()) why = tensor_reason(p.c, "c");
  if (why.empty()) why = output_overlap_reason(p.c, "c");
  if (why.empty()) why = broadcast_reason(p.c, "c", p.a, "a");
  if (!why.empty()) return why;
  const int64_t outputs = element_count(p.c);
  if (outputs == 0) return {};
  if (element_count(p.a) == 0) return "tensor a is empty while c is not";
  int64_t length = 1;
  for (int d = 0; d < p.a.ndims; ++d) {
    if (p.c.dims[d] == 1) length *= p.a.dims[d];
  }
  if (outputs > max_int32) return "tensor c has more than 2^31 - 1 elements";
  if (length > max_int32) return "more than 2^31 - 1 elements of a reduce into one element of c";
  return {};
}

template <typename F>
void dispatch_kind(int kind, F&& f) {
  switch (kind) {
    case kind_sum: f(std::integral_constant<int, kind_sum>{}); break;
    case kind_sum_abs: f(std::integral_constant<int, kind_sum_abs>{}); break;
    case kind_sum_square: f(std::integral_constant<int, kind_sum_square>{}); break;
    case kind_product: f(std::integral_constant<int, kind_product>{}); break;
    case kind_min: f(std::integral_constant<int, kind_min>{}); break;
    case kind_max: f(std::integral_constant<int, kind_max>{}); break;
    default: f(std::integral_constant<int, kind_amax>{}); break;
  }
}

// Floating inputs get their own instantiations (and vectors); int8/int32 inputs are read by type
// at run time.
template <typename F>
void dispatch_input_type(int32_t type, F&& f) {
  switch (type) {
    case TSRP_DATA_FLOAT: f(float{}); break;
    case TSRP_DATA_HALF: f(__half{}); break;
    case TSRP_DATA_BFLOAT16: f(__nv_bfloat16{}); break;
    default: f(dyn_t{}); break;
  }
}

bool rows_vectorizable(const reduce_plan& plan, const void* a, int vector) {
  if (vector <= 1 || plan.reduced.ndims != 1 || plan.reduced.strides[reduced_a][0] != 1) return false;
  if (!aligned_to(a, 16)) return false;
  for (int d = 0; d < plan.kept.ndims; ++d) {
    if (plan.kept.strides[kept_a][d] % vector != 0) return false;
  }
  return true;
}

void run_reduction(cuda_context& ctx, const tsrpReduceTensorProblem& p, const tsrpReduceTensorArgs& a,
                   void* workspace, strategy how) {
  const int64_t outputs = element_count(p.c);
  if (outputs == 0) return;
  require_pointer(a.a, element_count(p.a), "a");
  require_pointer(a.c, outputs, "c");
  if (wants_indices(p)) {
    require_pointer(a.indices, outputs, "indices");
    if (a.indices_size < static_cast<size_t>(outputs) * sizeof(uint32_t)) {
      throw status_error(TSRP_STATUS_BAD_PARAM, "indices_size " + std::to_string(a.indices_size) +
                                                    " is below 4 bytes per element of c (" +
                                                    std::to_string(outputs * 4) + ")");
    }
  }
  const reduce_plan plan = plan_reduction(p, how);
  const int kind = kind_of(p.op);

  reduce_params rp{};
  rp.a = a.a;
  rp.c = a.c;
  rp.indices = wants_indices(p) ? static_cast<uint32_t*>(a.indices) : nullptr;
  if (plan.splits > 1) {
    rp.partial_values = static_cast<float*>(workspace);
    if (is_arg_kind(kind)) {
      rp.partial_indices = reinterpret_cast<uint32_t*>(static_cast<char*>(workspace) + partial_values_bytes(plan));
    }
  }
  rp.a_type = p.a.data_type;
  rp.c_type = p.c.data_type;
  rp.op = p.op;
  rp.propagate_nan = p.nan_propagation == TSRP_PROPAGATE_NAN ? 1 : 0;
  rp.alpha = a.alpha;
  rp.beta = a.beta;
  rp.outputs = plan.outputs;
  rp.length = plan.length;
  rp.splits = plan.splits;
  rp.chunk = plan.chunk;
  rp.kept = make_walker<3>(plan.kept, 1);
  rp.reduced = make_walker<2>(plan.reduced, 1);
  const cudaStream_t stream = ctx.stream();

  dispatch_input_type(p.a.data_type, [&](auto type_tag) {
    using TA = decltype(type_tag);
    dispatch_kind(kind, [&](auto kind_tag) {
      constexpr int Kind = decltype(kind_tag)::value;
      if (how == strategy::rows) {
        constexpr int V = vector_width<TA>();
        const bool vectorized = rows_vectorizable(plan, a.a, V);
        const int64_t units = ceil_div(std::min(plan.chunk, plan.length), vectorized ? V : 1);
        int32_t group = 1;
        while (group < 32 && group < units) group *= 2;
        rp.group = group;
        const int64_t warps = ceil_div(plan.outputs * plan.splits, 32 / group);
        const unsigned int blocks = ctx.grid_stride_blocks(warps * 32, rows_threads);
        bool launched = false;
        if constexpr (V > 1) {
          if (vectorized) {
            reduce_rows<TA, Kind, V><<<blocks, rows_threads, 0, stream>>>(rp);
            launched = true;
          }
        }
        if (!launched) reduce_rows<TA, Kind, 1><<<blocks, rows_threads, 0, stream>>>(rp);
      } else {
        rp.group = 1;
        const dim3 grid(static_cast<unsigned int>(ceil_div(plan.outputs, column_lanes)),
                        static_cast<unsigned int>(plan.splits));
        const dim3 block(column_lanes, static_cast<unsigned int>(plan.column_rows_used));
        reduce_columns<TA, Kind><<<grid, block, 0, stream>>>(rp);
      }
      if (plan.splits > 1) {
        check_cuda(cudaGetLastError(), "launching the partial reduction");
        const unsigned int blocks = ctx.grid_stride_blocks(plan.outputs * 32, finish_threads);
        reduce_finish_parts<Kind><<<blocks, finish_threads, 0, stream>>>(rp);
      }
    });
  });
}

constexpr const char* reduce_notes_common =
    "fp32 accumulation in a fixed order (bitwise reproducible; long reductions are cut into parts "
    "fixed by the shape and combined in a fixed tree through the workspace); avg divides the sum "
    "by the length, norm2 is sqrt of the sum of squares; indices (min/max/amax) pick the first "
    "extreme element, NaN is skipped unless propagated; alpha/beta in fp32, rounded once to c's type";

struct reduce_rows_traits {
  using problem_type = tsrpReduceTensorProblem;
  using args_type = tsrpReduceTensorArgs;
  static constexpr const char* name = "reduce_tensor_rows";
  static constexpr int32_t operation = TSRP_OP_REDUCE_TENSOR;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = reduce_notes_common;

  static std::string support(const problem_type& p) {
    std::string why = reduce_reason(p);
    if (!why.empty() || element_count(p.c) == 0) return why;
    reduce_plan plan;
    build_layouts(p, plan);
    if (plan.length < 2) return "nothing is reduced (c has a's dims): reduce_tensor_columns takes it";
    const int64_t reduced_stride = std::llabs(plan.reduced.strides[reduced_a][0]);
    const int64_t kept_stride = std::llabs(plan.kept.strides[kept_a][0]);
    if (plan.outputs > 1 && reduced_stride >= kept_stride) {
      return "a's most contiguous kept dim (stride " + std::to_string(kept_stride) +
             ") is not wider apart than its most contiguous reduced one (stride " + std::to_string(reduced_stride) +
             "): reduce_tensor_columns reads it coalesced";
    }
    return {};
  }
  static size_t workspace(const problem_type& p) { return workspace_of(p, strategy::rows); }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    run_reduction(ctx, p, a, workspace, strategy::rows);
  }
};

struct reduce_columns_traits {
  using problem_type = tsrpReduceTensorProblem;
  using args_type = tsrpReduceTensorArgs;
  static constexpr const char* name = "reduce_tensor_columns";
  static constexpr int32_t operation = TSRP_OP_REDUCE_TENSOR;
  static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;
  static constexpr const char* notes = reduce_notes_common;

  static std::string support(const problem_type& p) { return reduce_reason(p); }
  static size_t workspace(const problem_type& p) { return workspace_of(p, strategy::columns); }
  static void run(cuda_context& ctx, const problem_type& p, const args_type& a, void* workspace, size_t) {
    run_reduction(ctx, p, a, workspace, strategy::columns);
  }
};

}  // namespace

void add_reduce_kernels(kernel_list& out) {
  out.push_back(make_kernel<reduce_rows_traits>());
  out.push_back(make_kernel<reduce_columns_traits>());
}

}  // namespace tessera::cuda::tensor_ops
