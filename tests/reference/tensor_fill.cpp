#include "tensor_fill.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <tessera_common/half_float.hpp>
#include <tessera_common/shape_inference.hpp>

#include "tensor_index.hpp"

namespace tessera::reference {
namespace {

// Rounds to nearest (ties to even, as the hardware converts) and saturates; NaN becomes 0.
template <class Int>
Int saturate(float value) {
  if (std::isnan(value)) return 0;
  const double rounded = std::nearbyint(static_cast<double>(value));
  if (rounded <= static_cast<double>(std::numeric_limits<Int>::min()))
    return std::numeric_limits<Int>::min();
  if (rounded >= static_cast<double>(std::numeric_limits<Int>::max()))
    return std::numeric_limits<Int>::max();
  return static_cast<Int>(rounded);
}

float representable(int32_t data_type, float value) {
  switch (data_type) {
    case TSRP_DATA_HALF: return common::round_to_half(value);
    case TSRP_DATA_BFLOAT16: return common::round_to_bfloat16(value);
    case TSRP_DATA_INT8: return saturate<int8_t>(value);
    case TSRP_DATA_INT32: return static_cast<float>(saturate<int32_t>(value));
    default: return value;
  }
}

// Large tensors (a benchmark's hundreds of MB) are filled on every core: their logical elements
// are cut into fixed chunks, each drawn from its own engine seeded with (seed, chunk), so the
// values do not depend on how many threads there are. Smaller tensors keep the one sequential
// stream they always had, so every test's data is unchanged. On the GPU machine's 16 cores this
// takes the fill of a 411 MB tensor from about a second to a tenth.
constexpr int64_t parallel_fill_threshold = int64_t{1} << 22;
constexpr int64_t fill_chunk = int64_t{1} << 20;

// Runs work(chunk) for chunks [0, chunks) on up to hardware_concurrency() threads.
template <class Work>
void for_each_chunk(int64_t chunks, Work&& work) {
  const unsigned cores = std::max(1u, std::min(std::thread::hardware_concurrency(), 64u));
  const unsigned threads = static_cast<unsigned>(std::min<int64_t>(cores, chunks));
  auto worker = [&](unsigned first) {
    for (int64_t c = first; c < chunks; c += threads) work(c);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (std::thread& t : pool) t.join();
}

// Sets every logical element, in row-major order, to draw(engine): sequentially from one engine
// for small tensors, by chunks for large ones. `make_draw()` gives each chunk its own distributions.
template <class MakeDraw>
void fill_logical(host_tensor& tensor, uint32_t seed, MakeDraw&& make_draw) {
  const tsrpTensor& d = tensor.desc();
  const int64_t count = tensor.element_count();
  if (count < parallel_fill_threshold) {
    std::mt19937 engine(seed);
    auto draw = make_draw();
    for_each_index(d.ndims, d.dims, [&](const int64_t index[]) { tensor.at(index) = draw(engine); });
    return;
  }
  float* values = tensor.data();
  for_each_chunk((count + fill_chunk - 1) / fill_chunk, [&](int64_t c) {
    std::seed_seq sequence{seed, static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32)};
    std::mt19937 engine(sequence);
    auto draw = make_draw();
    int64_t index[TSRP_MAX_DIMS] = {};
    int64_t rest = c * fill_chunk;
    for (int i = d.ndims - 1; i >= 0; --i) {
      index[i] = rest % d.dims[i];
      rest /= d.dims[i];
    }
    const int64_t end = std::min(count, (c + 1) * fill_chunk);
    for (int64_t e = c * fill_chunk; e < end; ++e) {
      values[offset_of(d, index)] = draw(engine);
      for (int i = d.ndims - 1; i >= 0; --i) {
        if (++index[i] < d.dims[i]) break;
        index[i] = 0;
      }
    }
  });
}

}  // namespace

host_tensor::host_tensor(const tsrpTensor& desc) : desc_(desc) {
  int64_t extent = 0;
  if (common::data_type_size(desc.data_type) == 0)
    throw std::invalid_argument("host_tensor: unknown data type " +
                                std::to_string(desc.data_type));
  if (!common::tensor_extent_elements(desc, &extent))
    throw std::invalid_argument("host_tensor: the extent of the tensor overflows");
  values_.assign(static_cast<size_t>(extent), 0.0f);
}

host_tensor host_tensor::packed(int32_t data_type, const std::vector<int64_t>& dims,
                                bool channels_last) {
  tsrpTensor desc{};
  desc.data_type = data_type;
  desc.ndims = static_cast<int32_t>(dims.size());
  if (dims.empty() || dims.size() > TSRP_MAX_DIMS)
    throw std::invalid_argument("host_tensor: " + std::to_string(dims.size()) + " dims");
  std::copy(dims.begin(), dims.end(), desc.dims);
  if (!common::packed_strides(desc.ndims, desc.dims, channels_last, desc.strides))
    throw std::invalid_argument("host_tensor: dims are not positive or overflow");
  return host_tensor(desc);
}

int64_t host_tensor::element_count() const {
  int64_t count = 0;
  common::element_count(desc_.ndims, desc_.dims, &count);
  return count;
}

size_t host_tensor::byte_size() const {
  return values_.size() * common::data_type_size(desc_.data_type);
}

float& host_tensor::at(const int64_t index[]) { return values_[offset_of(desc_, index)]; }
float host_tensor::at(const int64_t index[]) const { return values_[offset_of(desc_, index)]; }

void host_tensor::round_to_data_type() {
  if (desc_.data_type == TSRP_DATA_FLOAT) return;  // every float is representable
  const int64_t n = static_cast<int64_t>(values_.size());
  if (n < parallel_fill_threshold) {
    for (float& v : values_) v = representable(desc_.data_type, v);
    return;
  }
  for_each_chunk((n + fill_chunk - 1) / fill_chunk, [&](int64_t c) {
    const int64_t end = std::min(n, (c + 1) * fill_chunk);
    for (int64_t i = c * fill_chunk; i < end; ++i) values_[static_cast<size_t>(i)] = representable(desc_.data_type, values_[static_cast<size_t>(i)]);
  });
}

std::vector<uint8_t> host_tensor::pack() const {
  std::vector<uint8_t> bytes(byte_size());
  pack(bytes.data());
  return bytes;
}

void host_tensor::pack(void* bytes) const {
  const size_t n = values_.size();
  switch (desc_.data_type) {
    case TSRP_DATA_FLOAT: std::memcpy(bytes, values_.data(), n * sizeof(float)); break;
    case TSRP_DATA_HALF: {
      auto* out = static_cast<uint16_t*>(bytes);
      for (size_t i = 0; i < n; ++i) out[i] = common::float_to_half_bits(values_[i]);
      break;
    }
    case TSRP_DATA_BFLOAT16: {
      auto* out = static_cast<uint16_t*>(bytes);
      for (size_t i = 0; i < n; ++i) out[i] = common::float_to_bfloat16_bits(values_[i]);
      break;
    }
    case TSRP_DATA_INT8: {
      auto* out = static_cast<int8_t*>(bytes);
      for (size_t i = 0; i < n; ++i) out[i] = saturate<int8_t>(values_[i]);
      break;
    }
    case TSRP_DATA_INT32: {
      auto* out = static_cast<int32_t*>(bytes);
      for (size_t i = 0; i < n; ++i) out[i] = saturate<int32_t>(values_[i]);
      break;
    }
  }
}

void host_tensor::unpack(const void* bytes) {
  const size_t n = values_.size();
  switch (desc_.data_type) {
    case TSRP_DATA_FLOAT: std::memcpy(values_.data(), bytes, n * sizeof(float)); break;
    case TSRP_DATA_HALF: {
      const auto* in = static_cast<const uint16_t*>(bytes);
      for (size_t i = 0; i < n; ++i) values_[i] = common::half_bits_to_float(in[i]);
      break;
    }
    case TSRP_DATA_BFLOAT16: {
      const auto* in = static_cast<const uint16_t*>(bytes);
      for (size_t i = 0; i < n; ++i) values_[i] = common::bfloat16_bits_to_float(in[i]);
      break;
    }
    case TSRP_DATA_INT8: {
      const auto* in = static_cast<const int8_t*>(bytes);
      for (size_t i = 0; i < n; ++i) values_[i] = in[i];
      break;
    }
    case TSRP_DATA_INT32: {
      const auto* in = static_cast<const int32_t*>(bytes);
      for (size_t i = 0; i < n; ++i) values_[i] = static_cast<float>(in[i]);
      break;
    }
  }
}

void fill_integers(host_tensor& tensor, const fill_spec& spec, uint32_t seed) {
  fill_logical(tensor, seed, [&spec] {
    return [value = std::uniform_int_distribution<int>(spec.min, spec.max),
            keep = std::uniform_real_distribution<double>(0.0, 1.0), density = spec.density](std::mt19937& engine) mutable {
      // Both draws happen for every element, so the density does not shift later values.
      const int v = value(engine);
      const bool nonzero = keep(engine) < density;
      return nonzero ? static_cast<float>(v) : 0.0f;
    };
  });
  tensor.round_to_data_type();
}

void fill_poison(host_tensor& tensor) {
  float poison;
  switch (tensor.data_type()) {
    case TSRP_DATA_INT8: poison = std::numeric_limits<int8_t>::min(); break;
    case TSRP_DATA_INT32: poison = static_cast<float>(std::numeric_limits<int32_t>::min()); break;
    default: poison = std::numeric_limits<float>::quiet_NaN(); break;
  }
  std::fill(tensor.data(), tensor.data() + tensor.extent(), poison);
}

conv_fill choose_conv_fill(int32_t data_type, int64_t reduction_length) {
  double exact_limit;  // integers up to this magnitude are exact in the output type
  switch (data_type) {
    case TSRP_DATA_HALF: exact_limit = 2048.0; break;
    case TSRP_DATA_BFLOAT16: exact_limit = 256.0; break;
    case TSRP_DATA_INT8: exact_limit = 127.0; break;
    default: exact_limit = 16777216.0; break;  // f32 (and s32, whose range is wider still)
  }
  // clang-format off
  const conv_fill candidates[] = {
    {{-4, 4, 1.0}, {-2, 2, 1.0}},
    {{-2, 2, 1.0}, {-1, 1, 1.0}},
    {{-1, 1, 1.0}, {-1, 1, 1.0}},
  };
  // clang-format on
  const double length = static_cast<double>(std::max<int64_t>(reduction_length, 1));
  for (const conv_fill& c : candidates) {
    const double largest_product = static_cast<double>(c.x.max) * c.w.max;
    if (largest_product * length <= exact_limit) return c;
  }
  conv_fill sparse = candidates[2];
  sparse.x.density = exact_limit / length;
  return sparse;
}

void fill_activation_input(host_tensor& tensor, uint32_t seed, bool avoid_kinks) {
  // k / 8 for k in [-40, 40], or (2k + 1) / 16 for k in [-40, 39]: both within [-5, 5].
  fill_logical(tensor, seed, [avoid_kinks] {
    return [step = std::uniform_int_distribution<int>(-40, avoid_kinks ? 39 : 40),
            avoid_kinks](std::mt19937& engine) mutable {
      const int k = step(engine);
      return avoid_kinks ? static_cast<float>(2 * k + 1) / 16.0f : static_cast<float>(k) / 8.0f;
    };
  });
  tensor.round_to_data_type();
}

}  // namespace tessera::reference
