// Host tensors for tests and tessera-bench: float values at a tensor's strides, convertible to
// and from the raw bytes of its data type, and filled as benchdnn fills them: small integers, so
// that sums of products are exact in the output's type and any difference is a real error.
#ifndef TESSERA_REFERENCE_TENSOR_FILL_HPP
#define TESSERA_REFERENCE_TENSOR_FILL_HPP

#include <tessera/plugin_abi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tessera::reference {

// A tensor in host memory. Values are held as floats at the tensor's strides over its whole
// extent (the furthest element plus one), so pointers into it can be handed to the reference
// routines as they are, and pack/unpack are one conversion per element. Elements in gaps between
// strided rows are 0 and are carried along by pack/unpack.
class host_tensor {
 public:
  host_tensor() = default;
  // Values 0. Throws std::invalid_argument when the tensor's extent overflows or its data type
  // is unknown (a test set-up mistake, not a condition to handle).
  explicit host_tensor(const tsrpTensor& desc);
  // A packed tensor: dims in N, C, spatial order; channels_last picks NHWC-like strides.
  static host_tensor packed(int32_t data_type, const std::vector<int64_t>& dims,
                            bool channels_last);

  const tsrpTensor& desc() const { return desc_; }
  int32_t data_type() const { return desc_.data_type; }
  int64_t element_count() const;  // logical elements
  int64_t extent() const { return static_cast<int64_t>(values_.size()); }
  size_t byte_size() const;  // extent times the element size: what a device buffer needs

  float* data() { return values_.data(); }
  const float* data() const { return values_.data(); }
  float& at(const int64_t index[]);
  float at(const int64_t index[]) const;

  // Rounds every value to the nearest one the data type holds (fp16/bf16 round to nearest even;
  // s8/s32 round to nearest and saturate, NaN becomes 0), so that the reference computes on
  // exactly the values a kernel receives.
  void round_to_data_type();
  // Raw bytes of the data type at the tensor's strides (byte_size() bytes).
  std::vector<uint8_t> pack() const;
  void pack(void* bytes) const;
  // The inverse: reads byte_size() bytes.
  void unpack(const void* bytes);

 private:
  tsrpTensor desc_{};
  std::vector<float> values_;
};

// Integers in [min, max], each element nonzero with probability `density` (else 0).
struct fill_spec {
  int min = -4;
  int max = 4;
  double density = 1.0;
};

// Fills the logical elements in row-major order from std::mt19937(seed): the same seed gives
// the same logical tensor whatever its strides, so NCHW and NHWC runs see equal data.
// Values are rounded to the data type afterwards.
void fill_integers(host_tensor& tensor, const fill_spec& spec, uint32_t seed);

// Poison for outputs before a run: NaN for floating types (any element a kernel forgets to
// write then fails the comparison), the most negative value for integer types.
void fill_poison(host_tensor& tensor);

// Fill ranges for a convolution with `reduction_length` multiply-adds per output (C/g * kernel
// size), chosen so that every partial sum stays an integer the output type holds exactly:
// below 2^24 for f32, 2^11 for f16, 2^8 for bf16. Candidates, widest first: x in [-4, 4] with
// w in [-2, 2] (products up to 8), then [-2, 2] x [-1, 1], then [-1, 1] x [-1, 1]; the first whose
// worst case |sum| = max product * length fits wins. When none does (long reductions in
// f16/bf16), x gets a density that keeps the expected number of nonzero terms within the
// limit: no longer a worst-case guarantee, but random signs keep sums far below it and the
// tolerance absorbs the rare rounding.
struct conv_fill {
  fill_spec x;
  fill_spec w;
};
conv_fill choose_conv_fill(int32_t data_type, int64_t reduction_length);

// Activation inputs: multiples of 1/8 in [-5, 5] (exact in f16 and bf16, covering every
// function's interesting range). avoid_kinks uses odd multiples of 1/16 instead, which are never
// 0 nor any coef that is a multiple of 1/8 (6, 1, 0.5, ...): derivatives at kinks are
// conventions that backends need not share.
void fill_activation_input(host_tensor& tensor, uint32_t seed, bool avoid_kinks);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_TENSOR_FILL_HPP
