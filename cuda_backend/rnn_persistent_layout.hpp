// The persistent RNN kernels (rnn_persistent.cu: forward, rnn_persistent_backward.cu: backward
// data; their shared product in rnn_persistent_product.cuh): plan and index arithmetic, host and
// device alike, so that tests/cuda/rnn_persistent_layout_host_test.cpp can play a whole block's
// recurrent product lane by lane on a machine without a GPU.
//
// Why a persistent kernel: the stepwise forward launches a recurrent GEMM and a cell kernel for
// each of the T steps of each layer. At the anchor LSTM's sizes (H 1024, N 64, fp16) that GEMM is
// 64 x 4096 x 1024, too little work to fill the GPU and latency-bound (19.5 us a step on the H200,
// 2026-12-04; 256 steps of GEMM + cell make the 5.5 ms that is 1.31x cuDNN's time). Here one
// cooperative launch runs every step of a layer: block b keeps its slice of R (the gate rows of
// U hidden units, all G gates of each unit, so that the cell math is local) in shared memory for
// the whole sequence, and per step stages h_{t-1} (its batch rows), multiplies on the tensor
// cores (mma.sync m16n8k16, fp32 accumulators), applies the cell and writes h_t; a grid-wide
// barrier separates the steps. Per step that is one read of h from L2 per block and no launch.
//
// A block is (direction d, unit group, batch group): units [j0, j0 + U) of H, batch rows
// [n0, n0 + Nb) of N. Its product is A (its batch rows of the step's left operand, K long) times
// its staged weights:
//   forward        A = h_{t-1} (K = H), columns c = g * U + u (gate g of unit j0 + u): R's rows
//                  g * H + j0 + u, so that the cell math of a unit is local;
//   backward data  A = the step's recurrent-side gate gradients (K = G * H), columns u (unit
//                  j0 + u): R's columns j0 + u, so that dL/dh_{t-1} of a unit is local.
// Columns past the block's are zero up to a multiple of 16.
//
// Shared memory (elements of the storage type unless said otherwise):
//   weights  [cols][pitch]        the block's columns, K contiguous, zero past K and past its columns
//   state    [slots][rows16][chunk_pitch]  a ring of chunks of A (the block's batch rows, chunk_k
//                                 of K each), zero past Nb rows and past K
//   products [kgroups][rows16][products_pitch]  fp32 partial products of the step, one per group
//                                 of warps that split K, added in group order by the cell
// pitch = kp + 8 with kp = K rounded up to 16, chunk_pitch = chunk_k + 8 (chunk_k a multiple of
// 16): 16-byte rows whose byte stride is 16 mod 32, so the 8 row addresses of every ldmatrix
// phase fall in 8 different 16-byte bank groups.
//
// Per step A streams through the ring: chunks 0 .. ring-2 are requested first, and before
// the products of chunk c the block requests chunk c + ring - 1 into the slot chunk c - 1 left,
// so that loads run under the products. Where the whole of h fits (the anchor LSTM: 3 chunks on a
// ring of 4) everything is requested up front; the ring lets a block that holds a large slice of R
// (two directions of H = 1024) still take h in pieces.
//
// Work: the block's product is rows16 x cols, cut into 16 x 16 tiles (one A fragment, two m16n8
// B fragments). With at least as many tiles as warps, tile i goes to warp i % warps (at most two
// a warp); with fewer (backward data: 16 columns, long K), kgroups = warps / tiles warps share a
// tile, warp w taking the tile w % tiles and the k-steps ks with ks % kgroups == w / tiles. Fragments come from ldmatrix .x4 (lane l
// gives the address of row l % 8 of matrix l / 8); PTX's m16n8k16 layout, g = lane / 4,
// t = lane % 4: A a0 (g, 2t..2t+1), a1 (g + 8, ..), a2 (g, 2t+8..), a3 (g + 8, 2t+8..);
// B b0 (k = 2t..2t+1, n = g), b1 (k = 2t+8.., n = g); D d0, d1 (g, 2t..2t+1), d2, d3 (g + 8, ..).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define TESSERA_RNN_HD __host__ __device__
#else
#define TESSERA_RNN_HD
#endif

namespace tessera::cuda::rnn {

// Threads a block: 256 (8 warps) or 512 (16 warps). ncu found the 8-warp forward latency-bound (2
// warps a scheduler, 6.3 cycles between a warp's instructions); 16 warps are the forward's default
// since they measured ~8-10 % faster, backward data keeps 8 (persistent_plan_for in
// rnn_kernels.cu says why). The kernels are instantiated per block size.
constexpr int persistent_threads = 256;
constexpr int persistent_warps = persistent_threads / 32;
constexpr int persistent_max_warps = 16;
constexpr int persistent_tiles_per_warp = 2;  // accumulators a thread holds: 2 tiles x 2 x 2 x 4 floats
constexpr int persistent_max_ring = 4;        // slots of the state ring (cp.async.wait_group immediates)

// Which product a plan is for (the shape of its columns and its K).
enum class persistent_pass { forward, backward_data };

struct persistent_plan {
  bool fits = false;
  // Warps a block (persistent_warps or persistent_max_warps), in the padding after `fits` so that
  // the 8-warp kernels see the plan (a kernel parameter) laid out as when they were measured.
  uint8_t warps = 0;
  const char* why_not = nullptr;  // when !fits
  persistent_pass pass = persistent_pass::forward;
  int32_t D = 0, G = 0, H = 0, N = 0;
  int32_t K = 0;              // the product's K: H (forward), G * H (backward data)
  int32_t cols_per_unit = 0;  // G (forward), 1 (backward data)
  int32_t units = 0;          // U: hidden units per block
  int32_t unit_groups = 0;    // ceil(H / U)
  int32_t batch_rows = 0;     // Nb: batch rows per block
  int32_t batch_groups = 0;   // ceil(N / Nb)
  int32_t blocks = 0;         // D * unit_groups * batch_groups
  int32_t kp = 0;             // K rounded up to 16
  int32_t pitch = 0;          // kp + 8
  int32_t chunk_k = 0;        // K of one chunk of A (a multiple of 16)
  int32_t chunks = 0;         // ceil(kp / chunk_k)
  int32_t ring = 0;           // 2 .. persistent_max_ring: chunks in flight + 1 (the pipeline's depth)
  int32_t slots = 0;          // min(ring, chunks): the ring's slots in shared memory
  int32_t chunk_pitch = 0;    // chunk_k + 8
  int32_t rows16 = 0;         // Nb rounded up to 16
  int32_t cols = 0;           // cols_per_unit * U rounded up to 16
  int32_t products_pitch = 0; // cols + 4 (fp32)
  int32_t tiles = 0;          // (rows16 / 16) * (cols / 16)
  int32_t kgroups = 0;        // warps sharing a tile along K: 1, or up to warps / tiles
  size_t weights_offset = 0, state_offset = 0, products_offset = 0;  // bytes into shared memory
  size_t shared_bytes = 0;
  double step_cycles = 0.0;   // the cost model's estimate of one step (plan choice and estimate_us)
};

TESSERA_RNN_HD inline int32_t round_up_to(int32_t value, int32_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Threads a block of the plan.
TESSERA_RNN_HD inline int32_t persistent_block_threads(const persistent_plan& p) { return 32 * int32_t{p.warps}; }

// The plan for one (U, Nb, chunk, ring) choice; fits is false when it breaks a limit.
inline persistent_plan persistent_plan_with(persistent_pass pass, int32_t D, int32_t G, int32_t H, int32_t N,
                                            int32_t units, int32_t batch_rows, int32_t chunk_k, int32_t ring,
                                            size_t element_bytes, int warps, int sms, size_t shared_limit) {
  persistent_plan p;
  p.pass = pass;
  p.warps = static_cast<uint8_t>(warps);
  p.D = D;
  p.G = G;
  p.H = H;
  p.N = N;
  const bool forward = pass == persistent_pass::forward;
  p.K = forward ? H : G * H;
  p.cols_per_unit = forward ? G : 1;
  p.units = units;
  p.unit_groups = (H + units - 1) / units;
  p.batch_rows = batch_rows;
  p.batch_groups = (N + batch_rows - 1) / batch_rows;
  p.kp = round_up_to(p.K, 16);
  p.pitch = p.kp + 8;
  p.chunk_k = chunk_k;
  p.chunks = (p.kp + chunk_k - 1) / chunk_k;
  p.ring = ring;
  p.slots = ring < p.chunks ? ring : p.chunks;
  p.chunk_pitch = chunk_k + 8;
  p.rows16 = round_up_to(batch_rows, 16);
  p.cols = round_up_to(p.cols_per_unit * units, 16);
  p.products_pitch = p.cols + 4;
  p.tiles = (p.rows16 / 16) * (p.cols / 16);
  // Backward data's few tiles share their K among the warps; the forward keeps one warp per tile in
  // the 8-warp form (as measured) and shares K too in the 16-warp one.
  p.kgroups = 1;
  if (!forward || warps > persistent_warps)
    while (p.tiles * p.kgroups * 2 <= warps) p.kgroups *= 2;
  const int64_t blocks = int64_t{D} * p.unit_groups * p.batch_groups;
  p.blocks = static_cast<int32_t>(blocks < (int64_t{1} << 30) ? blocks : (int64_t{1} << 30));
  size_t used = 0;
  auto take = [&used](size_t bytes) {
    const size_t offset = used;
    used += (bytes + 15) / 16 * 16;
    return offset;
  };
  p.weights_offset = take(size_t(p.cols) * size_t(p.pitch) * element_bytes);
  p.state_offset = take(size_t(p.slots) * size_t(p.rows16) * size_t(p.chunk_pitch) * element_bytes);
  p.products_offset = take(size_t(p.kgroups) * size_t(p.rows16) * size_t(p.products_pitch) * 4);
  p.shared_bytes = used;
  // One SM's share of a step, in cycles: the products at ~512 FMA a cycle (mma.sync reaches about
  // half the H200's dense fp16 rate) and A from L2 at ~32 bytes a cycle; the two overlap only
  // partly, so they are added. Fixed costs (the barrier, the cell) are the same for every plan
  // and left out.
  p.step_cycles = double(p.rows16) * p.cols * p.kp / 512.0 + double(batch_rows) * p.kp * element_bytes / 32.0;
  if (chunk_k % 16 != 0 || chunk_k < 16 || ring < 2 || ring > persistent_max_ring) {
    p.why_not = "chunks of the product's left operand must be whole k-steps and the ring 2 to 4 slots";
  } else if (blocks > sms) {
    p.why_not = "more blocks than SMs: every block must be resident for the grid-wide barrier";
  } else if (warps != persistent_warps && warps != persistent_max_warps) {
    p.why_not = "a block of 8 or 16 warps";
  } else if (p.tiles > warps * persistent_tiles_per_warp) {
    p.why_not = "more 16x16 product tiles than the block's warps hold accumulators for";
  } else if (p.shared_bytes > shared_limit) {
    p.why_not = "the block's slice of R and its left operand do not fit in shared memory";
  } else {
    p.fits = true;
  }
  return p;
}

// The ring for one (U, Nb), the first that fits in shared memory: A in 3 chunks on a ring of 4
// (every chunk requested before the first products), then in 4, 8, 16, ... chunks on 4, 3 or 2
// slots (the fewer and longer the chunks, the fewer barriers a step pays).
inline persistent_plan persistent_plan_with_ring(persistent_pass pass, int32_t D, int32_t G, int32_t H, int32_t N,
                                                 int32_t units, int32_t batch_rows, size_t element_bytes, int warps,
                                                 int sms, size_t shared_limit) {
  const int32_t kp = round_up_to(pass == persistent_pass::forward ? H : G * H, 16);
  auto chunk_of = [kp](int32_t pieces) { return round_up_to((kp + pieces - 1) / pieces, 16); };
  auto with = [&](int32_t chunk_k, int32_t ring) {
    return persistent_plan_with(pass, D, G, H, N, units, batch_rows, chunk_k, ring, element_bytes, warps, sms,
                                shared_limit);
  };
  persistent_plan p = with(chunk_of(persistent_max_ring - 1), persistent_max_ring);
  if (p.fits) return p;
  for (int32_t pieces = persistent_max_ring;; pieces *= 2) {
    const int32_t chunk_k = chunk_of(pieces);
    for (int32_t ring = persistent_max_ring; ring >= 2; --ring) {
      p = with(chunk_k, ring);
      if (p.fits) return p;
    }
    if (chunk_k == 16) return p;
  }
}

// The cheapest fitting plan over U in {1, 2, 4, ..., 64} and Nb in {16, 32, 64, ...} (each a
// power of two, Nb at least 16 so that no tile row is wasted where N allows), or a plan with
// fits = false and the reason of the widest candidate. `sms` and `shared_limit` are the H200's
// (132, 227 KiB) whatever the device, so the workspace never depends on the device; the run checks
// that the device can hold the grid and falls back to the stepwise kernels where it cannot.
inline persistent_plan persistent_plan_of(persistent_pass pass, int32_t D, int32_t G, int32_t H, int32_t N,
                                          size_t element_bytes, int warps = persistent_warps, int sms = 132,
                                          size_t shared_limit = 227 * 1024) {
  persistent_plan best;
  best.why_not = "no candidate";
  // No block takes more than 64 units or 256 rows (16 tiles of 16 rows at the least 16 columns),
  // so beyond these every plan has more blocks than SMs; declined before any arithmetic (G * H
  // included) can overflow.
  if (int64_t{H} * D > int64_t{64} * sms || int64_t{N} > int64_t{256} * sms) {
    best.why_not = "more blocks than SMs: every block must be resident for the grid-wide barrier";
    return best;
  }
  for (int32_t units = 1; units <= 64; units *= 2) {
    if (units > 1 && units / 2 >= H) break;  // larger U only adds empty units
    for (int32_t rows = 16; rows <= 256; rows *= 2) {
      const int32_t batch_rows = rows < N ? rows : N;
      const persistent_plan p =
          persistent_plan_with_ring(pass, D, G, H, N, units, batch_rows, element_bytes, warps, sms, shared_limit);
      if (p.fits && (!best.fits || p.step_cycles < best.step_cycles ||
                     (p.step_cycles == best.step_cycles && p.blocks < best.blocks)))
        best = p;
      if (!best.fits && !p.fits) best.why_not = p.why_not;
      if (batch_rows == N) break;
    }
  }
  return best;
}

// The plan a call runs: the pass's preferred block size (16 warps for the forward, 8 for backward
// data: rnn_kernels.cu says what measured it), then, unless `forced_warps` (8 or 16; 0: none) fixes
// it, the other size, so that the forward never drops to the stepwise kernels where the 8-warp form
// fits. `fits_device(plan)`: whether the device holds the plan's grid (always true for the
// registry's support and estimates, which ask no device). Returns the first plan that fits both
// the planning model and the device, else the preferred size's plan (its why_not, or fits with the
// device refusing it: the caller then runs stepwise).
template <typename FitsDevice>
persistent_plan choose_persistent_plan(persistent_pass pass, int32_t D, int32_t G, int32_t H, int32_t N,
                                       size_t element_bytes, int forced_warps, FitsDevice&& fits_device) {
  auto plan_with = [&](int warps) { return persistent_plan_of(pass, D, G, H, N, element_bytes, warps); };
  if (forced_warps == persistent_warps || forced_warps == persistent_max_warps) return plan_with(forced_warps);
  const int preferred = pass == persistent_pass::forward ? persistent_max_warps : persistent_warps;
  const persistent_plan plan = plan_with(preferred);
  if (plan.fits && fits_device(plan)) return plan;
  const persistent_plan other = plan_with(preferred == persistent_warps ? persistent_max_warps : persistent_warps);
  return other.fits && fits_device(other) ? other : plan;
}

// ---- indices (host and device) ----

// Block b's coordinates: direction, first hidden unit, first batch row.
struct persistent_block {
  int32_t d, j0, n0;
};

TESSERA_RNN_HD inline persistent_block persistent_block_of(const persistent_plan& p, int32_t block) {
  persistent_block b;
  b.n0 = (block % p.batch_groups) * p.batch_rows;
  b.j0 = ((block / p.batch_groups) % p.unit_groups) * p.units;
  b.d = block / (p.batch_groups * p.unit_groups);
  return b;
}

// The forward's column c of a block: gate g, unit u (c < G * U).
TESSERA_RNN_HD inline int32_t persistent_gate_column(const persistent_plan& p, int32_t g, int32_t u) {
  return g * p.units + u;
}

// Element k (< K) of the block's weight column c as an offset into the layer's R of its direction
// (G*H rows of H, row-major), or -1 where the column or k is padding: forward R[g*H + j0 + u][k]
// (the gate row), backward data R[k][j0 + c] (the unit's column).
TESSERA_RNN_HD inline int64_t persistent_weight_offset(const persistent_plan& p, const persistent_block& b, int32_t c,
                                                       int32_t k) {
  if (k >= p.K) return -1;
  if (p.pass == persistent_pass::backward_data) {
    if (c >= p.units || b.j0 + c >= p.H) return -1;
    return int64_t{k} * p.H + b.j0 + c;
  }
  const int32_t g = c / p.units, u = c % p.units;
  if (c >= p.G * p.units || b.j0 + u >= p.H) return -1;
  return (int64_t{g} * p.H + b.j0 + u) * p.H + k;
}

// The lt-th tile of `warp` in a block of Warps warps (p.warps): false when the warp has none, else
// the tile's first row (batch row within the block) and first column, and the warp's group along K.
template <int Warps>
TESSERA_RNN_HD inline bool persistent_warp_tile(const persistent_plan& p, int warp, int lt, int32_t& row0, int32_t& col0,
                                                int32_t& kgroup) {
  int32_t tile;
  if (p.kgroups > 1) {
    if (lt > 0 || warp >= p.tiles * p.kgroups) return false;
    tile = warp % p.tiles;
    kgroup = warp / p.tiles;
  } else {
    tile = warp + lt * Warps;
    kgroup = 0;
  }
  if (tile >= p.tiles) return false;
  const int32_t column_tiles = p.cols / 16;
  row0 = (tile / column_tiles) * 16;
  col0 = (tile % column_tiles) * 16;
  return true;
}

// The first k-step (index in K / 16) at or after `first` that belongs to group `kgroup`.
TESSERA_RNN_HD inline int32_t persistent_first_step(const persistent_plan& p, int32_t first, int32_t kgroup) {
  return first + ((kgroup - first % p.kgroups) % p.kgroups + p.kgroups) % p.kgroups;
}

// Element offset of (row, k within the chunk) of ring slot `slot` in the staged state.
TESSERA_RNN_HD inline int32_t persistent_state_index(const persistent_plan& p, int32_t slot, int32_t row, int32_t k) {
  return (slot * p.rows16 + row) * p.chunk_pitch + k;
}

// Element offset in the staged state of the row address `lane` gives to the A ldmatrix .x4 of the
// 16 x 16 slice at (row0, k0 within the chunk) of slot `slot`: matrices 0-3 are rows 0-7 / 8-15
// at k0 and k0 + 8, so registers 0-3 are a0-a3.
TESSERA_RNN_HD inline int32_t persistent_a_address(const persistent_plan& p, int32_t slot, int32_t row0, int32_t k0,
                                                   int32_t lane) {
  return persistent_state_index(p, slot, row0 + lane % 16, k0 + (lane / 16) * 8);
}

// Element offset in the staged weights of the row address `lane` gives to the B ldmatrix .x4 of
// the two 8-column fragments at (col0, k0): matrix m holds columns col0 + (m / 2) * 8 .. + 7 at
// k0 + (m % 2) * 8, so registers 0-1 are b0-b1 of columns col0.., registers 2-3 of col0 + 8...
TESSERA_RNN_HD inline int32_t persistent_b_address(const persistent_plan& p, int32_t col0, int32_t k0, int32_t lane) {
  const int32_t m = lane / 8;
  return (col0 + (m / 2) * 8 + lane % 8) * p.pitch + k0 + (m % 2) * 8;
}

// Where accumulator `reg` (0-3) of `lane`'s fragment for the 8 columns at col0 (of the tile at
// row0) of K group `kgroup` lands in the products array (fp32 elements).
TESSERA_RNN_HD inline int32_t persistent_product_index(const persistent_plan& p, int32_t kgroup, int32_t row0,
                                                       int32_t col0, int32_t lane, int32_t reg) {
  return (kgroup * p.rows16 + row0 + lane / 4 + (reg / 2) * 8) * p.products_pitch + col0 + (lane % 4) * 2 + reg % 2;
}

// The block's product at (row, column), its K groups added in group order.
TESSERA_RNN_HD inline float persistent_product(const persistent_plan& p, const float* products, int32_t row, int32_t col) {
  float sum = products[row * p.products_pitch + col];
  for (int32_t g = 1; g < p.kgroups; ++g) sum += products[(g * p.rows16 + row) * p.products_pitch + col];
  return sum;
}

// Chunk c of A: its first k and its k-steps' end (both in elements of K, within kp).
TESSERA_RNN_HD inline void persistent_chunk_range(const persistent_plan& p, int32_t c, int32_t& k_begin, int32_t& k_end) {
  k_begin = c * p.chunk_k;
  k_end = k_begin + p.chunk_k < p.kp ? k_begin + p.chunk_k : p.kp;
}

// The ring slot chunk c occupies.
TESSERA_RNN_HD inline int32_t persistent_chunk_slot(const persistent_plan& p, int32_t c) { return c % p.ring; }

}  // namespace tessera::cuda::rnn
