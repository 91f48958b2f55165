#include "tessera_common/problem_descriptor.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "tessera_common/shape_inference.hpp"

namespace tessera::common {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

// Parsed values are capped well below int64's range so that every later sum and product of a
// few of them (dilation + 1, (o - 1) * s + k) stays clear of overflow checks' edge cases.
constexpr int64_t max_value = int64_t{1} << 40;

// ---- convolution keys ---------------------------------------------------------------------------

// The spatial parameters, each with one value per benchdnn dim letter d, h, w.
enum spatial_param { p_input, p_output, p_kernel, p_stride, p_pad, p_dilation, p_count };
// Letter of each spatial_param in key order (i, o, k, s, p, d).
constexpr char spatial_param_letter[p_count] = {'i', 'o', 'k', 's', 'p', 'd'};
constexpr char dim_letters[3] = {'d', 'h', 'w'};

std::string spatial_key(int param, int dim) {
  return std::string{spatial_param_letter[param], dim_letters[dim]};
}

struct scalar_key {
  const char* key;
  int64_t conv_descriptor::*field;
};
constexpr scalar_key scalar_keys[] = {{"g", &conv_descriptor::g},
                                      {"mb", &conv_descriptor::mb},
                                      {"ic", &conv_descriptor::ic},
                                      {"oc", &conv_descriptor::oc}};

// Everything a descriptor says, before defaults and derived values are applied.
struct conv_entries {
  bool scalar_given[4] = {};
  int64_t scalar[4] = {};
  bool given[p_count][3] = {};
  int64_t value[p_count][3] = {};
  std::string name;
};

bool lookup_spatial_key(std::string_view key, int* param, int* dim) {
  if (key.size() != 2) return false;
  const char* p = std::find(spatial_param_letter, spatial_param_letter + p_count, key[0]);
  const char* d = std::find(dim_letters, dim_letters + 3, key[1]);
  if (p == spatial_param_letter + p_count || d == dim_letters + 3) return false;
  *param = static_cast<int>(p - spatial_param_letter);
  *dim = static_cast<int>(d - dim_letters);
  return true;
}

bool is_letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

std::string at(size_t position) { return " at position " + std::to_string(position); }

// Reads `n<name>` starting at text[start] == 'n'; sets *end past it.
bool read_name(std::string_view text, size_t start, bool leading, std::string* name, size_t* end,
               std::string* error) {
  size_t i = start + 1;
  if (i < text.size() && text[i] == '"') {
    const size_t close = text.find('"', i + 1);
    if (close == std::string_view::npos) return fail(error, "unterminated name" + at(start));
    *name = std::string(text.substr(i + 1, close - i - 1));
    *end = close + 1;
  } else {
    // A leading name ends at the first '_' (so problem entries may follow); a later one is the
    // last entry, as in benchdnn's canonical form, and may itself contain '_'.
    const size_t stop = leading ? std::min(text.find('_', i), text.size()) : text.size();
    *name = std::string(text.substr(i, stop - i));
    *end = stop;
  }
  if (name->empty()) return fail(error, "empty name" + at(start));
  return true;
}

bool read_entries(std::string_view text, conv_entries* entries, std::string* error) {
  bool leading = true;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '_') {
      ++i;
      continue;
    }
    if (!is_letter(c)) {
      if (is_digit(c))
        return fail(error, "expected a key" + at(i) + ", found '" + std::string(1, c) + "'");
      return fail(error, "unexpected character '" + std::string(1, c) + "'" + at(i));
    }
    if (c == 'n') {  // no key starts with 'n': this is the name
      if (!entries->name.empty()) return fail(error, "duplicate name" + at(i));
      if (!read_name(text, i, leading, &entries->name, &i, error)) return false;
      leading = false;
      continue;
    }
    const size_t key_start = i;
    while (i < text.size() && is_letter(text[i])) ++i;
    const std::string key(text.substr(key_start, i - key_start));
    const size_t digits_start = i;
    int64_t value = 0;
    while (i < text.size() && is_digit(text[i])) {
      value = value * 10 + (text[i] - '0');
      if (value > max_value)
        return fail(error, "value of '" + key + "'" + at(key_start) + " is too large");
      ++i;
    }
    if (i == digits_start) {
      // An unknown key is the likelier mistake ("xy" in "icxy16"); say that first.
      int param, dim;
      const bool known = lookup_spatial_key(key, &param, &dim) ||
                         std::any_of(std::begin(scalar_keys), std::end(scalar_keys),
                                     [&](const scalar_key& s) { return key == s.key; });
      if (!known) return fail(error, "unknown key '" + key + "'" + at(key_start));
      return fail(error, "expected a number after '" + key + "'" + at(key_start));
    }

    bool found = false;
    for (size_t s = 0; s < std::size(scalar_keys); ++s)
      if (key == scalar_keys[s].key) {
        if (entries->scalar_given[s])
          return fail(error, "duplicate key '" + key + "'" + at(key_start));
        entries->scalar_given[s] = true;
        entries->scalar[s] = value;
        found = true;
      }
    int param, dim;
    if (!found && lookup_spatial_key(key, &param, &dim)) {
      if (entries->given[param][dim])
        return fail(error, "duplicate key '" + key + "'" + at(key_start));
      entries->given[param][dim] = true;
      entries->value[param][dim] = value;
      found = true;
    }
    if (!found) return fail(error, "unknown key '" + key + "'" + at(key_start));
    leading = false;
  }
  return true;
}

// Right padding for a given output size. Any value in [needed, needed + stride - 1] produces it
// (the window never reaches the extra rows); the one nearest the left padding keeps symmetric
// problems symmetric. False when even no right padding gives an output that small.
bool right_padding_for_output(int64_t in, int64_t out, int64_t span, int64_t stride,
                              int64_t pad_before, int64_t* pad_after) {
  const int64_t needed = (out - 1) * stride - in + span - pad_before;
  const int64_t largest = needed + stride - 1;
  if (largest < 0) return false;
  *pad_after = std::clamp(pad_before, std::max<int64_t>(needed, 0), largest);
  return true;
}

bool resolve_spatial(conv_entries& e, conv_descriptor* desc, std::string* error) {
  bool has_dim[3] = {};
  for (int p = 0; p < p_count; ++p)
    for (int d = 0; d < 3; ++d) has_dim[d] = has_dim[d] || e.given[p][d];
  if (!has_dim[0] && !has_dim[1] && !has_dim[2])
    return fail(error, "no spatial size given (expected ih, iw or id)");
  desc->spatial_dims = has_dim[0] ? 3 : has_dim[1] ? 2 : 1;
  const int first_dim = 3 - desc->spatial_dims;  // benchdnn dim index of the outermost used dim

  // Missing values copy the next outer dim's: h from d (3-D), w from h (2-D and 3-D).
  for (int p = 0; p < p_count; ++p)
    for (int d = std::max(first_dim, 1); d < 3; ++d)
      if (!e.given[p][d] && e.given[p][d - 1]) {
        e.given[p][d] = true;
        e.value[p][d] = e.value[p][d - 1];
      }

  for (int d = first_dim; d < 3; ++d) {
    const int slot = d - first_dim;
    auto required_positive = [&](int p, int64_t* target) {
      if (!e.given[p][d]) return fail(error, spatial_key(p, d) + " is missing");
      if (e.value[p][d] < 1) return fail(error, spatial_key(p, d) + " must be positive");
      *target = e.value[p][d];
      return true;
    };
    if (!required_positive(p_input, &desc->in[slot]) ||
        !required_positive(p_kernel, &desc->k[slot]))
      return false;
    desc->stride[slot] = 1;
    if (e.given[p_stride][d] && !required_positive(p_stride, &desc->stride[slot])) return false;
    desc->dilation[slot] = (e.given[p_dilation][d] ? e.value[p_dilation][d] : 0) + 1;

    const int64_t in = desc->in[slot], k = desc->k[slot], s = desc->stride[slot];
    int64_t span;
    effective_kernel_size(k, desc->dilation[slot], &span);  // cannot overflow below max_value^2
    int64_t& pad_before = desc->pad_before[slot];
    int64_t& pad_after = desc->pad_after[slot];
    if (e.given[p_output][d]) {
      const int64_t out = e.value[p_output][d];
      if (out < 1) return fail(error, spatial_key(p_output, d) + " must be positive");
      if (e.given[p_pad][d]) {
        pad_before = e.value[p_pad][d];
      } else {
        // benchdnn: half of the total padding the output needs, rounded down, on the left.
        const int64_t total = (out - 1) * s - in + span;
        pad_before = total > 0 ? total / 2 : 0;
      }
      if (!right_padding_for_output(in, out, span, s, pad_before, &pad_after)) {
        int64_t smallest = 0;
        infer_conv_output_size(in, k, s, pad_before, 0, desc->dilation[slot], &smallest);
        return fail(error, spatial_key(p_output, d) + " " + std::to_string(out) +
                               " is too small: the input, kernel, stride and left padding give "
                               "at least " +
                               std::to_string(smallest));
      }
      desc->out[slot] = out;
    } else {
      pad_before = e.given[p_pad][d] ? e.value[p_pad][d] : 0;
      pad_after = pad_before;
      std::string why;
      if (!infer_conv_output_size(in, k, s, pad_before, pad_after, desc->dilation[slot],
                                  &desc->out[slot], &why))
        return fail(error, spatial_key(p_output, d) + ": " + why);
    }
  }
  for (int slot = desc->spatial_dims; slot < TSRP_MAX_SPATIAL_DIMS; ++slot) {
    desc->in[slot] = desc->out[slot] = desc->k[slot] = 0;
    desc->stride[slot] = desc->dilation[slot] = 1;
    desc->pad_before[slot] = desc->pad_after[slot] = 0;
  }
  return true;
}

// ---- formatting helpers -----------------------------------------------------------------------

// Writes one spatial parameter with the letters of the used dims; `compressed` writes only the
// outermost, which the parser copies inward.
void append_spatial(std::string* s, char param_letter, const int64_t values[], int spatial_dims,
                    bool compressed, int64_t offset = 0) {
  const int first_dim = 3 - spatial_dims;
  const int count = compressed ? 1 : spatial_dims;
  for (int slot = 0; slot < count; ++slot) {
    *s += param_letter;
    *s += dim_letters[first_dim + slot];
    *s += std::to_string(values[slot] + offset);
  }
}

bool all_equal(const int64_t values[], int count) {
  return std::all_of(values, values + count, [&](int64_t v) { return v == values[0]; });
}

bool any_differs(const int64_t values[], int count, int64_t from) {
  return std::any_of(values, values + count, [&](int64_t v) { return v != from; });
}

}  // namespace

bool operator==(const conv_descriptor& a, const conv_descriptor& b) {
  if (a.spatial_dims != b.spatial_dims || a.mb != b.mb || a.g != b.g || a.ic != b.ic ||
      a.oc != b.oc || a.name != b.name)
    return false;
  for (int i = 0; i < a.spatial_dims && i < TSRP_MAX_SPATIAL_DIMS; ++i)
    if (a.in[i] != b.in[i] || a.out[i] != b.out[i] || a.k[i] != b.k[i] ||
        a.stride[i] != b.stride[i] || a.pad_before[i] != b.pad_before[i] ||
        a.pad_after[i] != b.pad_after[i] || a.dilation[i] != b.dilation[i])
      return false;
  return true;
}

bool parse_conv_descriptor(std::string_view text, conv_descriptor* desc, std::string* error) {
  conv_entries entries;
  if (!read_entries(text, &entries, error)) return false;

  conv_descriptor result;
  for (size_t s = 0; s < std::size(scalar_keys); ++s)
    if (entries.scalar_given[s]) result.*scalar_keys[s].field = entries.scalar[s];
  for (size_t s = 0; s < std::size(scalar_keys); ++s) {
    const std::string key = scalar_keys[s].key;
    if ((key == "ic" || key == "oc") && !entries.scalar_given[s])
      return fail(error, key + " is missing");
    if (result.*scalar_keys[s].field < 1) return fail(error, key + " must be positive");
  }
  if (result.ic % result.g != 0)
    return fail(error, "ic " + std::to_string(result.ic) + " is not divisible by g " +
                           std::to_string(result.g));
  if (result.oc % result.g != 0)
    return fail(error, "oc " + std::to_string(result.oc) + " is not divisible by g " +
                           std::to_string(result.g));
  if (!resolve_spatial(entries, &result, error)) return false;
  result.name = std::move(entries.name);
  *desc = std::move(result);
  return true;
}

std::string format_conv_descriptor(const conv_descriptor& d) {
  const int n = d.spatial_dims;
  // One value per parameter is enough when every dim agrees: the parser copies it inward.
  const bool compressed = n > 1 && all_equal(d.in, n) && all_equal(d.out, n) &&
                          all_equal(d.k, n) && all_equal(d.stride, n) &&
                          all_equal(d.pad_before, n) && all_equal(d.dilation, n);
  std::string s;
  if (d.g != 1) s += "g" + std::to_string(d.g);
  s += "mb" + std::to_string(d.mb);
  s += "ic" + std::to_string(d.ic);
  append_spatial(&s, 'i', d.in, n, compressed);
  s += "oc" + std::to_string(d.oc);
  append_spatial(&s, 'o', d.out, n, compressed);
  append_spatial(&s, 'k', d.k, n, compressed);
  if (any_differs(d.stride, n, 1)) append_spatial(&s, 's', d.stride, n, compressed);
  if (any_differs(d.pad_before, n, 0)) append_spatial(&s, 'p', d.pad_before, n, compressed);
  if (any_differs(d.dilation, n, 1))  // benchdnn writes dilation - 1
    append_spatial(&s, 'd', d.dilation, n, compressed, -1);
  if (!d.name.empty()) s += "_n" + d.name;
  return s;
}

bool conv_descriptor_from_problem(const tsrpConvolutionProblem& p, conv_descriptor* desc,
                                  std::string* error) {
  const int n = p.spatial_dims;
  if (n < 1 || n > TSRP_MAX_SPATIAL_DIMS)
    return fail(error, "spatial_dims is " + std::to_string(n) + ", expected 1 to 3");
  if (p.x.ndims != n + 2 || p.w.ndims != n + 2 || p.y.ndims != n + 2)
    return fail(error, "x, w and y have " + std::to_string(p.x.ndims) + ", " +
                           std::to_string(p.w.ndims) + " and " + std::to_string(p.y.ndims) +
                           " dims, expected " + std::to_string(n + 2));
  conv_descriptor d;
  d.spatial_dims = n;
  d.mb = p.x.dims[0];
  d.ic = p.x.dims[1];
  d.oc = p.w.dims[0];
  d.g = p.groups;
  for (int i = 0; i < n; ++i) {
    d.in[i] = p.x.dims[2 + i];
    d.k[i] = p.w.dims[2 + i];
    d.out[i] = p.y.dims[2 + i];
    d.stride[i] = p.stride[i];
    d.pad_before[i] = p.pad_before[i];
    d.pad_after[i] = p.pad_after[i];
    d.dilation[i] = p.dilation[i];
  }
  *desc = std::move(d);
  return true;
}

void conv_descriptor_to_problem(const conv_descriptor& d, tsrpConvolutionProblem* p) {
  p->struct_size = sizeof(tsrpConvolutionProblem);
  p->spatial_dims = d.spatial_dims;
  p->mode = TSRP_CROSS_CORRELATION;
  p->compute_type = TSRP_DATA_FLOAT;
  p->math_mode = TSRP_MATH_DEFAULT;
  p->groups = d.g;
  for (int i = 0; i < TSRP_MAX_SPATIAL_DIMS; ++i) {
    const bool used = i < d.spatial_dims;
    p->pad_before[i] = used ? d.pad_before[i] : 0;
    p->pad_after[i] = used ? d.pad_after[i] : 0;
    p->stride[i] = used ? d.stride[i] : 1;
    p->dilation[i] = used ? d.dilation[i] : 1;
  }
}

int conv_tensor_dims(const conv_descriptor& d, int64_t x_dims[], int64_t w_dims[],
                     int64_t y_dims[]) {
  x_dims[0] = d.mb, x_dims[1] = d.ic;
  w_dims[0] = d.oc, w_dims[1] = d.ic / d.g;
  y_dims[0] = d.mb, y_dims[1] = d.oc;
  for (int i = 0; i < d.spatial_dims; ++i) {
    x_dims[2 + i] = d.in[i];
    w_dims[2 + i] = d.k[i];
    y_dims[2 + i] = d.out[i];
  }
  return d.spatial_dims + 2;
}

// ---- eltwise ----------------------------------------------------------------------------------

bool parse_dims(std::string_view text, std::vector<int64_t>* dims, std::string* error) {
  std::vector<int64_t> result;
  size_t i = 0;
  while (true) {
    const size_t start = i;
    int64_t value = 0;
    while (i < text.size() && is_digit(text[i])) {
      value = value * 10 + (text[i] - '0');
      if (value > max_value) return fail(error, "dim" + at(start) + " is too large");
      ++i;
    }
    if (i == start) {
      if (i < text.size())
        return fail(error, "expected a dim" + at(i) + ", found '" + std::string(1, text[i]) + "'");
      return fail(error, "expected a dim" + at(i) + ", found the end");
    }
    if (value < 1)
      return fail(error, "dim " + std::to_string(result.size()) + " must be positive");
    result.push_back(value);
    if (result.size() > TSRP_MAX_DIMS)
      return fail(error, "more than " + std::to_string(TSRP_MAX_DIMS) + " dims");
    if (i == text.size()) break;
    if (text[i] != 'x')
      return fail(error, "expected 'x'" + at(i) + ", found '" + std::string(1, text[i]) + "'");
    ++i;
  }
  *dims = std::move(result);
  return true;
}

std::string format_dims(const int64_t dims[], int ndims) {
  std::string s;
  for (int i = 0; i < ndims; ++i) {
    if (i) s += 'x';
    s += std::to_string(dims[i]);
  }
  return s;
}

std::string format_dims(const std::vector<int64_t>& dims) {
  return format_dims(dims.data(), static_cast<int>(dims.size()));
}

namespace {
// clang-format off
constexpr const char* activation_names[] = {
  "identity", "relu", "sigmoid", "tanh", "leaky_relu", "clipped_relu", "elu", "gelu_erf",
  "gelu_tanh", "swish"};
// clang-format on
}  // namespace

const char* activation_mode_name(int32_t mode) {
  if (mode < 0 || mode >= static_cast<int32_t>(std::size(activation_names))) return "unknown";
  return activation_names[mode];
}

bool parse_activation(std::string_view algorithm, double alpha, double beta,
                      tsrpActivationMode_t* mode, double* coef, std::string* error) {
  struct entry {
    const char* name;
    tsrpActivationMode_t mode;
  };
  // Algorithms whose coef (if any) is alpha and that take no other constraint.
  // clang-format off
  static constexpr entry plain[] = {
    {"logistic", TSRP_ACTIVATION_SIGMOID},       {"sigmoid", TSRP_ACTIVATION_SIGMOID},
    {"tanh", TSRP_ACTIVATION_TANH},              {"identity", TSRP_ACTIVATION_IDENTITY},
    {"elu", TSRP_ACTIVATION_ELU},                {"gelu_erf", TSRP_ACTIVATION_GELU_ERF},
    {"gelu_tanh", TSRP_ACTIVATION_GELU_TANH},    {"swish", TSRP_ACTIVATION_SWISH},
    {"leaky_relu", TSRP_ACTIVATION_LEAKY_RELU},  {"clipped_relu", TSRP_ACTIVATION_CLIPPED_RELU},
  };
  // clang-format on
  const std::string alg(algorithm);
  if (alg == "relu") {  // benchdnn's relu takes the negative slope in alpha
    *mode = alpha == 0.0 ? TSRP_ACTIVATION_RELU : TSRP_ACTIVATION_LEAKY_RELU;
    *coef = alpha;
    return true;
  }
  if (alg == "linear") {  // alpha * x + beta: only the identity exists in Tessera
    if (alpha != 1.0 || beta != 0.0)
      return fail(error, "linear is supported only with alpha 1 and beta 0 (got alpha " +
                             format_number(alpha) + ", beta " + format_number(beta) + ")");
    *mode = TSRP_ACTIVATION_IDENTITY;
    *coef = 0.0;
    return true;
  }
  if (alg == "clip") {  // benchdnn: clamp to [alpha, beta]; Tessera's clipped relu is [0, coef]
    if (alpha != 0.0)
      return fail(error, "clip is supported only with alpha 0 (the lower bound), got alpha " +
                             format_number(alpha));
    *mode = TSRP_ACTIVATION_CLIPPED_RELU;
    *coef = beta;
    return true;
  }
  for (const entry& e : plain)
    if (alg == e.name) {
      *mode = e.mode;
      *coef = alpha;
      return true;
    }
  return fail(error, "unknown activation algorithm '" + alg +
                         "' (expected relu, logistic, tanh, linear, elu, gelu_erf, gelu_tanh, "
                         "swish, clip, or identity, sigmoid, leaky_relu, clipped_relu)");
}

void activation_to_benchdnn(tsrpActivationMode_t mode, double coef, std::string* algorithm,
                            double* alpha, double* beta) {
  *alpha = 0.0;
  *beta = 0.0;
  switch (mode) {
    case TSRP_ACTIVATION_IDENTITY: *algorithm = "linear", *alpha = 1.0; break;
    case TSRP_ACTIVATION_RELU: *algorithm = "relu"; break;
    case TSRP_ACTIVATION_SIGMOID: *algorithm = "logistic"; break;
    case TSRP_ACTIVATION_TANH: *algorithm = "tanh"; break;
    case TSRP_ACTIVATION_LEAKY_RELU: *algorithm = "relu", *alpha = coef; break;
    case TSRP_ACTIVATION_CLIPPED_RELU: *algorithm = "clip", *beta = coef; break;
    case TSRP_ACTIVATION_ELU: *algorithm = "elu", *alpha = coef; break;
    case TSRP_ACTIVATION_GELU_ERF: *algorithm = "gelu_erf"; break;
    case TSRP_ACTIVATION_GELU_TANH: *algorithm = "gelu_tanh"; break;
    case TSRP_ACTIVATION_SWISH: *algorithm = "swish", *alpha = coef; break;
    default: *algorithm = "unknown"; break;
  }
}

// ---- replay command lines ---------------------------------------------------------------------

std::string layout_tag(const tsrpTensor& tensor) {
  if (is_packed(tensor, false)) return "nchw";
  if (is_packed(tensor, true)) return "nhwc";
  return "strided";
}

std::string format_number(double value) {
  char text[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

namespace {
std::string common_flags(int32_t data_type, std::string_view tag, std::string_view backend) {
  std::string s = " --dt=" + std::string(data_type_name(data_type));
  if (!tag.empty() && tag != "strided") s += " --tag=" + std::string(tag);
  if (!backend.empty()) s += " --backend=" + std::string(backend);
  return s;
}
}  // namespace

std::string format_conv_bench_command(const conv_descriptor& desc, int32_t data_type,
                                      std::string_view tag, std::string_view backend) {
  return "tessera-bench --conv" + common_flags(data_type, tag, backend) + " " +
         format_conv_descriptor(desc);
}

std::string format_eltwise_bench_command(const eltwise_descriptor& desc, bool backward,
                                         int32_t data_type, std::string_view tag,
                                         std::string_view backend) {
  std::string algorithm;
  double alpha, beta;
  activation_to_benchdnn(desc.mode, desc.coef, &algorithm, &alpha, &beta);
  std::string s = "tessera-bench --eltwise --dir=" + std::string(backward ? "bwd" : "fwd") +
                  " --alg=" + algorithm;
  if (alpha != 0.0) s += " --alpha=" + format_number(alpha);
  if (beta != 0.0) s += " --beta=" + format_number(beta);
  return s + common_flags(data_type, tag, backend) + " " + format_dims(desc.dims);
}

std::string format_bench_command(const tsrpConvolutionProblem& problem, std::string_view backend) {
  conv_descriptor desc;
  std::string error;
  if (!conv_descriptor_from_problem(problem, &desc, &error))
    return "# no tessera-bench command: " + error;
  std::string s =
      format_conv_bench_command(desc, problem.x.data_type, layout_tag(problem.x), backend);
  if (problem.mode == TSRP_CONVOLUTION)
    s.insert(std::string("tessera-bench --conv").size(), " --conv-mode=convolution");
  return s;
}

std::string format_bench_command(const tsrpActivationProblem& problem, bool backward,
                                 std::string_view backend) {
  eltwise_descriptor desc;
  desc.dims.assign(problem.x.dims, problem.x.dims + std::clamp(problem.x.ndims, 0, TSRP_MAX_DIMS));
  desc.mode = static_cast<tsrpActivationMode_t>(problem.mode);
  desc.coef = problem.coef;
  return format_eltwise_bench_command(desc, backward, problem.x.data_type, layout_tag(problem.x),
                                      backend);
}

}  // namespace tessera::common
