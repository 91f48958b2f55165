#include "tessera_common/op_descriptors.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "tessera_common/problem_descriptor.hpp"

namespace tessera::common {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

constexpr int64_t max_value = int64_t{1} << 40;
constexpr char dim_letters[3] = {'d', 'h', 'w'};

std::string at(size_t position) { return " at position " + std::to_string(position); }

// Reads "<key><number>" entries (keys from `allowed`, longest match first), '_' between them,
// and a name `n<name>`: leading (ending at '_') or last (to the end), `n"..."` quoted.
bool parse_keys(std::string_view text, const std::vector<std::string>& allowed,
                std::map<std::string, int64_t>* values, std::string* name, std::string* error) {
  if (text.empty()) return fail(error, "empty descriptor");
  size_t i = 0;
  bool first = true;
  while (i < text.size()) {
    if (text[i] == '_') {
      ++i;
      continue;
    }
    const size_t start = i;
    size_t run = i;
    while (run < text.size() && std::isalpha(static_cast<unsigned char>(text[run]))) ++run;
    const std::string letters(text.substr(i, run - i));
    const bool is_key = std::find(allowed.begin(), allowed.end(), letters) != allowed.end() &&
                        run < text.size() && std::isdigit(static_cast<unsigned char>(text[run]));
    if (text[i] == 'n' && !is_key) {
      size_t j = i + 1;
      if (j < text.size() && text[j] == '"') {
        const size_t close = text.find('"', j + 1);
        if (close == std::string_view::npos) return fail(error, "unterminated name" + at(start));
        *name = std::string(text.substr(j + 1, close - j - 1));
        i = close + 1;
      } else {
        const size_t stop = first ? std::min(text.find('_', j), text.size()) : text.size();
        *name = std::string(text.substr(j, stop - j));
        i = stop;
      }
      first = false;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::isalpha(static_cast<unsigned char>(text[j]))) ++j;
    const std::string key(text.substr(i, j - i));
    if (key.empty()) return fail(error, "expected a key" + at(start));
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      for (const std::string& a : allowed)  // "icih14": a key with its number missing
        if (key.size() > a.size() && key.compare(0, a.size(), a) == 0)
          return fail(error, "expected a number after '" + a + "'" + at(i + a.size()));
      return fail(error, "unknown key '" + key + "'" + at(start));
    }
    size_t k = j;
    while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
    if (k == j) return fail(error, "expected a number after '" + key + "'" + at(j));
    if (k - j > 13) return fail(error, key + ": value too large" + at(j));
    const int64_t v = std::stoll(std::string(text.substr(j, k - j)));
    if (v > max_value) return fail(error, key + ": value too large" + at(j));
    if (values->count(key)) return fail(error, "'" + key + "' given twice" + at(start));
    (*values)[key] = v;
    i = k;
    first = false;
  }
  return true;
}

bool get(const std::map<std::string, int64_t>& m, const std::string& key, int64_t* v) {
  auto f = m.find(key);
  if (f == m.end()) return false;
  *v = f->second;
  return true;
}

bool positive(const std::map<std::string, int64_t>& m, std::string* error) {
  for (const auto& [key, value] : m)
    if (value <= 0 && key[0] != 'p') return fail(error, key + " must be positive");
  return true;
}

// Spatial values of `letter` (i, o, k, s, p) with benchdnn's copying: w from h, h from d.
// Returns how many dims were found (3 when any d key, 2 when any h key, else 0).
int spatial_rank(const std::map<std::string, int64_t>& m, const char* letters) {
  int rank = 0;
  for (const char* l = letters; *l; ++l) {
    if (m.count(std::string{*l, 'd'})) rank = 3;
    else if (rank < 2 && (m.count(std::string{*l, 'h'}) || m.count(std::string{*l, 'w'})))
      rank = 2;
  }
  return rank;
}

void spatial_values(const std::map<std::string, int64_t>& m, char letter, int rank,
                    int64_t out[], bool given[], int64_t fallback) {
  const int first = 3 - rank;  // 0 for 3-D (d h w), 1 for 2-D (h w)
  int64_t previous = fallback;
  bool previous_given = false;
  for (int d = first; d < 3; ++d) {
    int64_t v = 0;
    const int slot = d - first;
    if (get(m, std::string{letter, dim_letters[d]}, &v)) {
      out[slot] = v, given[slot] = true;
    } else {
      out[slot] = previous, given[slot] = previous_given;
    }
    previous = out[slot], previous_given = given[slot];
  }
}

std::string spatial_text(char letter, const int64_t v[], int rank, bool skip_default,
                         int64_t def) {
  bool all_same = true, all_default = true;
  for (int i = 0; i < rank; ++i) {
    if (v[i] != v[0]) all_same = false;
    if (v[i] != def) all_default = false;
  }
  if (skip_default && all_default) return "";
  const int first = 3 - rank;
  std::string s;
  if (all_same) return std::string{letter, dim_letters[first]} + std::to_string(v[0]);
  for (int i = 0; i < rank; ++i)
    s += std::string{letter, dim_letters[first + i]} + std::to_string(v[i]);
  return s;
}

std::string with_name(std::string s, const std::string& name) {
  if (!name.empty()) s += "_n" + name;
  return s;
}

}  // namespace

// ---- pooling ----------------------------------------------------------------------------------

bool operator==(const pool_descriptor& a, const pool_descriptor& b) {
  if (a.spatial_dims != b.spatial_dims || a.mb != b.mb || a.ic != b.ic || a.name != b.name)
    return false;
  for (int i = 0; i < a.spatial_dims; ++i)
    if (a.in[i] != b.in[i] || a.out[i] != b.out[i] || a.k[i] != b.k[i] ||
        a.stride[i] != b.stride[i] || a.pad_before[i] != b.pad_before[i] ||
        a.pad_after[i] != b.pad_after[i])
      return false;
  return true;
}

bool parse_pool_descriptor(std::string_view text, pool_descriptor* desc, std::string* error) {
  std::vector<std::string> keys = {"mb", "ic"};
  for (char l : {'i', 'o', 'k', 's', 'p'})
    for (char d : dim_letters) keys.push_back(std::string{l, d});
  std::map<std::string, int64_t> m;
  pool_descriptor r;
  if (!parse_keys(text, keys, &m, &r.name, error) || !positive(m, error)) return false;
  get(m, "mb", &r.mb);
  if (!get(m, "ic", &r.ic)) return fail(error, "ic must be given");
  const int rank = spatial_rank(m, "iok");
  if (rank == 0) return fail(error, "the input size (ih or id) must be given");
  r.spatial_dims = rank;
  bool gi[3] = {}, go[3] = {}, gk[3] = {}, gs[3] = {}, gp[3] = {};
  spatial_values(m, 'i', rank, r.in, gi, 0);
  spatial_values(m, 'o', rank, r.out, go, 0);
  spatial_values(m, 'k', rank, r.k, gk, 0);
  spatial_values(m, 's', rank, r.stride, gs, 1);
  spatial_values(m, 'p', rank, r.pad_before, gp, 0);
  for (int i = 0; i < rank; ++i) {
    const std::string dim(1, dim_letters[3 - rank + i]);
    if (!gi[i]) return fail(error, "i" + dim + " must be given");
    if (!gk[i]) return fail(error, "k" + dim + " must be given");
    const int64_t in = r.in[i], k = r.k[i], s = r.stride[i], pb = r.pad_before[i];
    if (!go[i]) {
      r.pad_after[i] = pb;
      const int64_t span = in + 2 * pb - k;
      if (span < 0) return fail(error, "o" + dim + ": output would be empty (kernel larger than "
                                                   "the padded input)");
      r.out[i] = span / s + 1;
    } else {
      const int64_t lo = (r.out[i] - 1) * s + k - in - pb, hi = lo + s - 1;
      if (hi < 0)
        return fail(error, "o" + dim + ": " + std::to_string(r.out[i]) +
                               " is too small for the input, kernel, stride and padding");
      r.pad_after[i] = std::max<int64_t>(0, std::clamp(pb, lo, hi));
    }
  }
  *desc = r;
  return true;
}

std::string format_pool_descriptor(const pool_descriptor& d) {
  const int n = d.spatial_dims;
  std::string s = "mb" + std::to_string(d.mb) + "ic" + std::to_string(d.ic) +
                  spatial_text('i', d.in, n, false, 0) + spatial_text('o', d.out, n, false, 0) +
                  spatial_text('k', d.k, n, false, 0) + spatial_text('s', d.stride, n, true, 1) +
                  spatial_text('p', d.pad_before, n, true, 0);
  return with_name(s, d.name);
}

int pool_tensor_dims(const pool_descriptor& d, int64_t x_dims[], int64_t y_dims[]) {
  x_dims[0] = y_dims[0] = d.mb;
  x_dims[1] = y_dims[1] = d.ic;
  for (int i = 0; i < d.spatial_dims; ++i) x_dims[2 + i] = d.in[i], y_dims[2 + i] = d.out[i];
  return 2 + d.spatial_dims;
}

// ---- batch normalization and LRN --------------------------------------------------------------

bool operator==(const norm_descriptor& a, const norm_descriptor& b) {
  return a.spatial_dims == b.spatial_dims && a.mb == b.mb && a.ic == b.ic &&
         a.local_size == b.local_size && a.name == b.name &&
         std::equal(a.in, a.in + a.spatial_dims, b.in);
}

namespace {
bool parse_norm(std::string_view text, bool lrn, norm_descriptor* desc, std::string* error) {
  std::vector<std::string> keys = {"mb", "ic", "id", "ih", "iw"};
  if (lrn) keys.push_back("ls");
  std::map<std::string, int64_t> m;
  norm_descriptor r;
  if (!parse_keys(text, keys, &m, &r.name, error) || !positive(m, error)) return false;
  get(m, "mb", &r.mb);
  if (!get(m, "ic", &r.ic)) return fail(error, "ic must be given");
  get(m, "ls", &r.local_size);
  const int rank = spatial_rank(m, "i");
  r.spatial_dims = rank;
  if (rank) {
    bool g[3] = {};
    spatial_values(m, 'i', rank, r.in, g, 1);
  }
  *desc = r;
  return true;
}
std::string format_norm(const norm_descriptor& d, bool lrn) {
  std::string s = "mb" + std::to_string(d.mb) + "ic" + std::to_string(d.ic);
  if (d.spatial_dims) s += spatial_text('i', d.in, d.spatial_dims, false, 1);
  if (lrn) s += "ls" + std::to_string(d.local_size);
  return with_name(s, d.name);
}
}  // namespace

bool parse_bnorm_descriptor(std::string_view text, norm_descriptor* desc, std::string* error) {
  return parse_norm(text, false, desc, error);
}
bool parse_lrn_descriptor(std::string_view text, norm_descriptor* desc, std::string* error) {
  return parse_norm(text, true, desc, error);
}
std::string format_bnorm_descriptor(const norm_descriptor& d) { return format_norm(d, false); }
std::string format_lrn_descriptor(const norm_descriptor& d) { return format_norm(d, true); }

std::vector<int64_t> norm_tensor_dims(const norm_descriptor& d) {
  std::vector<int64_t> dims = {d.mb, d.ic};
  for (int i = 0; i < d.spatial_dims; ++i) dims.push_back(d.in[i]);
  return dims;
}

// ---- RNN --------------------------------------------------------------------------------------

bool operator==(const rnn_descriptor& a, const rnn_descriptor& b) {
  return a.layers == b.layers && a.steps == b.steps && a.mb == b.mb && a.sic == b.sic &&
         a.slc == b.slc && a.dhc == b.dhc && a.dic == b.dic && a.name == b.name;
}

bool parse_rnn_descriptor(std::string_view text, rnn_descriptor* desc, std::string* error) {
  std::map<std::string, int64_t> m;
  rnn_descriptor r;
  if (!parse_keys(text, {"l", "t", "mb", "sic", "slc", "dhc", "dic"}, &m, &r.name, error) ||
      !positive(m, error))
    return false;
  get(m, "l", &r.layers);
  get(m, "t", &r.steps);
  get(m, "mb", &r.mb);
  const bool s = get(m, "sic", &r.sic), l = get(m, "slc", &r.slc), h = get(m, "dhc", &r.dhc),
             o = get(m, "dic", &r.dic);
  if (!s) r.sic = h ? r.dhc : o ? r.dic : l ? r.slc : 0;
  if (!r.sic) return fail(error, "sic (or slc, dhc, dic) must be given");
  if (!l) r.slc = r.sic;
  if (!h) r.dhc = r.sic;
  if (!o) r.dic = r.dhc;
  *desc = r;
  return true;
}

std::string format_rnn_descriptor(const rnn_descriptor& d) {
  return with_name("l" + std::to_string(d.layers) + "t" + std::to_string(d.steps) + "mb" +
                       std::to_string(d.mb) + "sic" + std::to_string(d.sic) + "slc" +
                       std::to_string(d.slc) + "dhc" + std::to_string(d.dhc) + "dic" +
                       std::to_string(d.dic),
                   d.name);
}

// ---- two dims lists ---------------------------------------------------------------------------

bool parse_dims_pair(std::string_view text, bool second_optional, bool same_rank,
                     std::vector<int64_t>* a, std::vector<int64_t>* b, std::string* error) {
  const size_t colon = text.find(':');
  std::string e;
  if (colon == std::string_view::npos) {
    if (!second_optional) return fail(error, "expected two dims lists 'AxB..:CxD..'");
    if (!parse_dims(text, a, error)) return false;
    *b = *a;
    return true;
  }
  if (!parse_dims(text.substr(0, colon), a, &e)) return fail(error, "first dims: " + e);
  if (!parse_dims(text.substr(colon + 1), b, &e)) return fail(error, "second dims: " + e);
  if (same_rank && a->size() != b->size())
    return fail(error, "the two dims lists have different ranks (" + std::to_string(a->size()) +
                           " and " + std::to_string(b->size()) + ")");
  return true;
}

std::string format_dims_pair(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  return format_dims(a) + ":" + format_dims(b);
}

// ---- matmul -----------------------------------------------------------------------------------

bool parse_matmul_descriptor(std::string_view text, matmul_descriptor* desc, std::string* error) {
  matmul_descriptor r;
  if (!text.empty() && std::isalpha(static_cast<unsigned char>(text[0]))) {
    std::map<std::string, int64_t> m;
    if (!parse_keys(text, {"mb", "m", "n", "k"}, &m, &r.name, error) || !positive(m, error))
      return false;
    int64_t mb = 0, M = 0, N = 0, K = 0;
    if (!get(m, "m", &M) || !get(m, "n", &N) || !get(m, "k", &K))
      return fail(error, "m, n and k must all be given");
    r.a = {M, K}, r.b = {K, N};
    if (get(m, "mb", &mb)) r.a.insert(r.a.begin(), mb), r.b.insert(r.b.begin(), mb);
  } else {
    std::string_view dims = text;
    const size_t us = text.find('_');
    if (us != std::string_view::npos) {
      dims = text.substr(0, us);
      std::string_view rest = text.substr(us + 1);
      if (rest.empty() || rest[0] != 'n') return fail(error, "expected _n<name> after the dims");
      r.name = std::string(rest.substr(1));
    }
    if (!parse_dims_pair(dims, false, true, &r.a, &r.b, error)) return false;
  }
  std::vector<int64_t> c;
  if (!matmul_output_dims(r, &c, error)) return false;
  *desc = r;
  return true;
}

std::string format_matmul_descriptor(const matmul_descriptor& d) {
  return with_name(format_dims_pair(d.a, d.b), d.name);
}

bool matmul_output_dims(const matmul_descriptor& d, std::vector<int64_t>* c, std::string* error) {
  const size_t n = d.a.size();
  if (n < 2 || d.b.size() != n) return fail(error, "A and B need the same rank, at least 2");
  if (d.a[n - 1] != d.b[n - 2])
    return fail(error, "K differs: A has " + std::to_string(d.a[n - 1]) + " columns, B " +
                           std::to_string(d.b[n - 2]) + " rows");
  c->assign(n, 0);
  for (size_t i = 0; i + 2 < n; ++i) {
    if (d.a[i] != d.b[i] && d.a[i] != 1 && d.b[i] != 1)
      return fail(error, "batch dim " + std::to_string(i) + " differs (" +
                             std::to_string(d.a[i]) + " and " + std::to_string(d.b[i]) + ")");
    (*c)[i] = std::max(d.a[i], d.b[i]);
  }
  (*c)[n - 2] = d.a[n - 2];
  (*c)[n - 1] = d.b[n - 1];
  return true;
}

}  // namespace tessera::common
