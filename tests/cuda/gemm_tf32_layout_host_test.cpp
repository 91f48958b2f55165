// The CUDA plugin's TF32 GEMM (cuda_backend/gemm_mma_tf32.cuh) run on the host, block tile by
// block tile and thread by thread, with the kernel's own index functions (gemm_tf32_layout.hpp):
// every thread stages its share of each K tile, every lane gathers its m16n8k8 fragments from the
// staged tiles, and the mma itself is played by this test from PTX's fragment layout, written
// here independently of the kernel as CuTe writes it (MMA_Traits<SM80_16x8x8_F32TF32TF32F32_TN>:
// thread and value strides into the column-major 16x8 A, 8x8 B and 16x8 C). The result must be
// the naive GEMM exactly (small integers: exact in TF32 and in fp32 sums), and every staged word
// a fragment reads must have been written in that K tile. Both block configurations, all four
// walk directions, edges in M, N and K, transposed and padded operands. What only a GPU can check
// (the mma instruction, cvt.rna, the barriers) is left to the matmul conformance test.
#include "gemm_tf32_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

namespace gemm = tessera::cuda::gemm;

struct matrix {
  int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;
  std::vector<float> data;
  float at(int64_t i, int64_t j) const { return data[static_cast<size_t>(i * row_stride + j * col_stride)]; }
};

matrix make_matrix(int64_t rows, int64_t cols, bool column_major, int64_t pad, std::mt19937& rng) {
  matrix m;
  m.rows = rows;
  m.cols = cols;
  if (column_major) {
    m.row_stride = 1;
    m.col_stride = rows + pad;
  } else {
    m.row_stride = cols + pad;
    m.col_stride = 1;
  }
  const int64_t extent = column_major ? (rows + pad) * cols : rows * (cols + pad);
  m.data.assign(static_cast<size_t>(extent), NAN);  // padding: never read
  std::uniform_int_distribution<int> value(-3, 3);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m.data[static_cast<size_t>(i * m.row_stride + j * m.col_stride)] = value(rng);
  return m;
}

// PTX's m16n8k8 .tf32 fragments as CuTe's layouts give them: (thread, value) -> column-major
// index into the operand (m + 16 k for A, n + 8 k for B, m + 16 n for C), thread = (t0, t1) with
// t0 = lane % 4, t1 = lane / 4.
int a_index(int lane, int reg) { return (lane % 4) * 16 + (lane / 4) + (reg % 2) * 8 + (reg / 2) * 64; }
int b_index(int lane, int reg) { return (lane % 4) * 8 + (lane / 4) + reg * 32; }
int c_index(int lane, int reg) { return (lane % 4) * 32 + (lane / 4) + (reg % 2) * 16 + (reg / 2) * 8; }

// One staged tile: the words and which of them this K tile wrote.
struct staged_tile {
  std::vector<float> words;
  std::vector<int> writes;
  explicit staged_tile(int rows)
      : words(static_cast<size_t>(rows * gemm::tf32_pitch), NAN), writes(words.size(), 0) {}
  void clear() {
    std::fill(words.begin(), words.end(), NAN);
    std::fill(writes.begin(), writes.end(), 0);
  }
};

// The kernel's loader: element (mn, p) of a Rows x tf32_tile_k tile at operand(mn0 + mn, k0 + p),
// zero past the edges. `along_k(i, k)` reads the operand with i along M (A) or N (B).
template <int Rows, int Threads, bool WalkK, typename Read>
void stage(staged_tile& tile, int64_t extent, int64_t k, int64_t mn0, int64_t k0, Read read) {
  constexpr int per_thread = Rows * gemm::tf32_tile_k / Threads;
  for (int tid = 0; tid < Threads; ++tid)
    for (int e = 0; e < per_thread; ++e) {
      int mn = 0, p = 0;
      gemm::tf32_stage_position<Rows, Threads, WalkK>(tid, e, mn, p);
      ASSERT_GE(mn, 0);
      ASSERT_LT(mn, Rows);
      ASSERT_GE(p, 0);
      ASSERT_LT(p, gemm::tf32_tile_k);
      const int64_t gm = mn0 + mn, gk = k0 + p;
      const size_t word = static_cast<size_t>(gemm::tf32_stage_word(mn, p));
      tile.words[word] = gm < extent && gk < k ? read(gm, gk) : 0.0f;
      ++tile.writes[word];
    }
  for (int mn = 0; mn < Rows; ++mn)
    for (int p = 0; p < gemm::tf32_tile_k; ++p)
      ASSERT_EQ(tile.writes[static_cast<size_t>(gemm::tf32_stage_word(mn, p))], 1)
          << "staged element (" << mn << ", " << p << ") written other than once";
}

template <int BM, int BN, int WarpsM, int WarpsN, bool AWalkK, bool BWalkK>
void run_gemm(const matrix& a, const matrix& b, std::vector<double>& c) {
  constexpr int threads = WarpsM * WarpsN * 32;
  constexpr int warp_m = BM / WarpsM, warp_n = BN / WarpsN;
  const int64_t m = a.rows, n = b.cols, k = a.cols;
  c.assign(static_cast<size_t>(m * n), NAN);
  staged_tile sa(BM), sb(BN);
  for (int64_t m0 = 0; m0 < m; m0 += BM)
    for (int64_t n0 = 0; n0 < n; n0 += BN) {
      // acc[warp][mi][ni][lane][reg]
      std::vector<double> acc(static_cast<size_t>(WarpsM * WarpsN * (warp_m / 16) * (warp_n / 8) * 32 * 4), 0.0);
      const auto acc_at = [&](int warp, int mi, int ni, int lane, int reg) -> double& {
        return acc[static_cast<size_t>((((warp * (warp_m / 16) + mi) * (warp_n / 8) + ni) * 32 + lane) * 4 + reg)];
      };
      for (int64_t k0 = 0; k0 < k; k0 += gemm::tf32_tile_k) {
        sa.clear();
        sb.clear();
        stage<BM, threads, AWalkK>(sa, m, k, m0, k0, [&](int64_t i, int64_t kk) { return a.at(i, kk); });
        stage<BN, threads, BWalkK>(sb, n, k, n0, k0, [&](int64_t j, int64_t kk) { return b.at(kk, j); });
        for (int warp = 0; warp < WarpsM * WarpsN; ++warp) {
          const int warp_row = (warp / WarpsN) * warp_m, warp_col = (warp % WarpsN) * warp_n;
          for (int kk = 0; kk < gemm::tf32_tile_k; kk += 8)
            for (int mi = 0; mi < warp_m / 16; ++mi)
              for (int ni = 0; ni < warp_n / 8; ++ni) {
                float a16x8[16 * 8], b8x8[8 * 8];
                for (int lane = 0; lane < 32; ++lane) {
                  for (int r = 0; r < 4; ++r) {
                    const size_t word = static_cast<size_t>(gemm::tf32_a_fragment_word(warp_row + mi * 16, kk, lane, r));
                    ASSERT_LT(word, sa.words.size());
                    ASSERT_EQ(sa.writes[word], 1) << "A fragment word " << word << " not staged";
                    a16x8[a_index(lane, r)] = sa.words[word];
                  }
                  for (int r = 0; r < 2; ++r) {
                    const size_t word = static_cast<size_t>(gemm::tf32_b_fragment_word(warp_col + ni * 8, kk, lane, r));
                    ASSERT_LT(word, sb.words.size());
                    ASSERT_EQ(sb.writes[word], 1) << "B fragment word " << word << " not staged";
                    b8x8[b_index(lane, r)] = sb.words[word];
                  }
                }
                for (int lane = 0; lane < 32; ++lane)
                  for (int r = 0; r < 4; ++r) {
                    const int idx = c_index(lane, r), row = idx % 16, col = idx / 16;
                    double sum = 0.0;
                    for (int q = 0; q < 8; ++q) sum += static_cast<double>(a16x8[row + 16 * q]) * b8x8[col + 8 * q];
                    acc_at(warp, mi, ni, lane, r) += sum;
                  }
              }
        }
      }
      // The accumulators' places in C (store_accumulators walks the same layout).
      for (int warp = 0; warp < WarpsM * WarpsN; ++warp) {
        const int warp_row = (warp / WarpsN) * warp_m, warp_col = (warp % WarpsN) * warp_n;
        for (int mi = 0; mi < warp_m / 16; ++mi)
          for (int ni = 0; ni < warp_n / 8; ++ni)
            for (int lane = 0; lane < 32; ++lane)
              for (int r = 0; r < 4; ++r) {
                const int idx = c_index(lane, r);
                const int64_t i = m0 + warp_row + mi * 16 + idx % 16, j = n0 + warp_col + ni * 8 + idx / 16;
                if (i < m && j < n) c[static_cast<size_t>(i * n + j)] = acc_at(warp, mi, ni, lane, r);
              }
      }
    }
}

struct shape {
  const char* label;
  int64_t m, n, k;
  bool a_column_major, b_column_major;
  int64_t pad;
};

const shape k_shapes[] = {
    {"one_tile_exact_64", 64, 64, 16, false, true, 0},
    {"edges_70x50x37", 70, 50, 37, false, false, 0},
    {"transposed_a_130x129x33", 130, 129, 33, true, false, 3},
    {"both_transposed_17x200x5", 17, 200, 5, true, true, 1},
    {"k_one", 9, 11, 1, false, false, 0},
};

template <int BM, int BN, int WarpsM, int WarpsN, bool AWalkK, bool BWalkK>
void check_config(const char* config) {
  std::mt19937 rng(1234);
  for (const shape& s : k_shapes) {
    SCOPED_TRACE(std::string(config) + " " + s.label + " walk_k a=" + (AWalkK ? "1" : "0") + " b=" + (BWalkK ? "1" : "0"));
    const matrix a = make_matrix(s.m, s.k, s.a_column_major, s.pad, rng);
    const matrix b = make_matrix(s.k, s.n, s.b_column_major, s.pad, rng);
    std::vector<double> got;
    run_gemm<BM, BN, WarpsM, WarpsN, AWalkK, BWalkK>(a, b, got);
    if (::testing::Test::HasFatalFailure()) return;
    int64_t wrong = 0;
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double expected = 0.0;
        for (int64_t q = 0; q < s.k; ++q) expected += static_cast<double>(a.at(i, q)) * b.at(q, j);
        const double value = got[static_cast<size_t>(i * s.n + j)];
        if (!(value == expected)) {
          if (wrong++ < 3) ADD_FAILURE() << "C(" << i << ", " << j << ") = " << value << ", expected " << expected;
        }
      }
    EXPECT_EQ(wrong, 0);
  }
}

// The engine's two TF32 configurations (gemm_engine.cu: big_tf32, small_tf32).
TEST(GemmTf32LayoutHost, big_tile_128x128_with_8_warps_matches_the_naive_gemm) {
  check_config<128, 128, 2, 4, true, true>("128x128 2x4");
  check_config<128, 128, 2, 4, true, false>("128x128 2x4");
  check_config<128, 128, 2, 4, false, true>("128x128 2x4");
  check_config<128, 128, 2, 4, false, false>("128x128 2x4");
}

TEST(GemmTf32LayoutHost, small_tile_64x64_with_4_warps_matches_the_naive_gemm) {
  check_config<64, 64, 2, 2, true, true>("64x64 2x2");
  check_config<64, 64, 2, 2, true, false>("64x64 2x2");
  check_config<64, 64, 2, 2, false, true>("64x64 2x2");
  check_config<64, 64, 2, 2, false, false>("64x64 2x2");
}

// Every fragment load of a warp hits 32 different banks (the staged pitch's reason).
TEST(GemmTf32LayoutHost, fragment_loads_are_free_of_bank_conflicts) {
  for (int r = 0; r < 4; ++r) {
    std::vector<int> banks;
    for (int lane = 0; lane < 32; ++lane) banks.push_back(gemm::tf32_a_fragment_word(16, 8, lane, r) % 32);
    std::sort(banks.begin(), banks.end());
    EXPECT_EQ(std::unique(banks.begin(), banks.end()) - banks.begin(), 32) << "A register " << r;
  }
  for (int r = 0; r < 2; ++r) {
    std::vector<int> banks;
    for (int lane = 0; lane < 32; ++lane) banks.push_back(gemm::tf32_b_fragment_word(24, 0, lane, r) % 32);
    std::sort(banks.begin(), banks.end());
    EXPECT_EQ(std::unique(banks.begin(), banks.end()) - banks.begin(), 32) << "B register " << r;
  }
}

}  // namespace
