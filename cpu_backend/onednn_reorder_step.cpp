#include "onednn_reorder_step.hpp"

#include "onednn_workspace.hpp"

#include <unordered_map>

namespace tessera::onednn {

reorder_step make_reorder_step(const dnnl::engine& engine, const dnnl::memory::desc& src,
                               const dnnl::memory::desc& dst, float alpha, float beta) {
  reorder_step step;
  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (alpha != 1.0f) {
    // oneDNN 3.x scales are runtime arguments: mask 0 = one scale for the whole tensor.
    attr.set_scales_mask(DNNL_ARG_SRC, 0);
    step.scaled = true;
    step.scale = alpha;
  }
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  step.pd = dnnl::reorder::primitive_desc(engine, src, engine, dst, attr);
  return step;
}

void reorder_step::execute(dnnl::stream& stream, const dnnl::memory& src, const dnnl::memory& dst,
                           void* scratchpad) const {
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
  const dnnl::engine engine = src.get_engine();
  if (scaled) {
    args.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC,
                 dnnl::memory({{1}, dnnl::memory::data_type::f32, {1}}, engine,
                              const_cast<float*>(&scale)));
  }
  if (scratchpad_bytes(pd) > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), engine, scratchpad));
  primitive.execute(stream, args);
}

}  // namespace tessera::onednn
