// The TF32 GEMM kernel's index arithmetic (gemm_mma_tf32.cuh), host and device alike, so that
// tests/cuda/gemm_tf32_layout_host_test.cpp can run a whole block tile thread by thread on a
// machine without a GPU: which element each thread stages where, and which staged word each lane
// hands to each register of an m16n8k8 .tf32 fragment.
//
// Staged tiles: rows along M (A) or N (B), K contiguous, tf32_pitch words a row. The fragments
// are PTX's m16n8k8 .tf32 layout (g = lane / 4, t = lane % 4):
//   A (16 x 8, row-major):  a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
//   B (8 x 8, column-major): b0 (k = t, n = g), b1 (k = t + 4, n = g)
// With a pitch of 20 words, the 32 lanes of each fragment load hit 32 different banks
// ((g * 20 + t) mod 32 is one-to-one over g < 8, t < 4).
#pragma once

#if defined(__CUDACC__)
#define TESSERA_TF32_HD __host__ __device__
#else
#define TESSERA_TF32_HD
#endif

namespace tessera::cuda::gemm {

constexpr int tf32_tile_k = 16;              // two m16n8k8 steps per staged tile
constexpr int tf32_pitch = tf32_tile_k + 4;  // words per staged row (conflict-free fragments)

// Element e (0 .. Rows * tf32_tile_k / Threads - 1) of thread tid's share of a Rows x tf32_tile_k
// tile: its row `mn` and its k `p`. WalkK: consecutive threads take consecutive k (the operand's K
// stride is its smaller one), else consecutive rows.
template <int Rows, int Threads, bool WalkK>
TESSERA_TF32_HD inline void tf32_stage_position(int tid, int e, int& mn, int& p) {
  const int flat = tid + e * Threads;
  if (WalkK) {
    mn = flat / tf32_tile_k;
    p = flat % tf32_tile_k;
  } else {
    mn = flat % Rows;
    p = flat / Rows;
  }
}

TESSERA_TF32_HD inline int tf32_stage_word(int mn, int p) { return mn * tf32_pitch + p; }

// The staged word register `reg` (0-3) of `lane`'s A fragment takes, for the 16 x 8 slice whose
// first row is `row0` and first k is `k0`.
TESSERA_TF32_HD inline int tf32_a_fragment_word(int row0, int k0, int lane, int reg) {
  return tf32_stage_word(row0 + lane / 4 + (reg & 1) * 8, k0 + lane % 4 + (reg >> 1) * 4);
}

// The staged word register `reg` (0-1) of `lane`'s B fragment takes, for the 8 x 8 slice whose
// first column (row of the staged B tile) is `col0` and first k is `k0`.
TESSERA_TF32_HD inline int tf32_b_fragment_word(int col0, int k0, int lane, int reg) {
  return tf32_stage_word(col0 + lane / 4, k0 + lane % 4 + reg * 4);
}

}  // namespace tessera::cuda::gemm
