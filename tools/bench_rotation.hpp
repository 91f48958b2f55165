// Timed runs rotate among copies of a problem's inputs, so that each run reads them from device
// memory: repeated runs over one buffer measure the cache instead (an H200's L2 holds 60 MB, and
// many ResNet layers' inputs fit in it). The METHOD of /work/.library/device asks for it.
#ifndef TESSERA_TOOLS_BENCH_ROTATION_HPP
#define TESSERA_TOOLS_BENCH_ROTATION_HPP

#include <cstddef>
#include <initializer_list>

#include "bench_args.hpp"
#include "tensor_fill.hpp"

namespace tessera::tools {

class tensor_rotation {
 public:
  // Enough copies of `inputs` that all of them together reach --rotate-mb (the default 200 MB
  // is over three times an H200's L2, so a copy's lines are gone by the time it comes round
  // again). One copy when the inputs alone reach the budget, when the budget is 0, or when the
  // problem is not timed (the correctness run uses copy 0 either way).
  tensor_rotation(std::initializer_list<const reference::host_tensor*> inputs,
                  const bench_settings& settings);

  int copies() const { return copies_; }
  int current() const { return current_; }
  // The next run uses the next copy.
  void advance() { current_ = (current_ + 1) % copies_; }

  // Bytes between two copies of a tensor of `bytes`: aligned as a fresh allocation would be,
  // so that no copy is slower for being misaligned.
  static size_t copy_stride(size_t bytes);

  // Problems so small that a thousand copies do not reach the budget are timed by their launch
  // and host costs, not by memory; more copies would only slow the upload.
  static constexpr int max_copies = 1024;

 private:
  int copies_ = 1;
  int current_ = 0;
};

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_BENCH_ROTATION_HPP
