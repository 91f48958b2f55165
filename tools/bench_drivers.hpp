// The drivers beyond conv and eltwise. Each prepare_* parses the problem (writing its canonical
// descriptor and replay command into `outcome`, or the parse error into outcome.detail and
// returning an empty function) and returns the run, which throws api_failure like the others.
#ifndef TESSERA_TOOLS_BENCH_DRIVERS_HPP
#define TESSERA_TOOLS_BENCH_DRIVERS_HPP

#include <functional>

#include "bench_runner.hpp"

namespace tessera::tools {

using prepared_problem = std::function<void(tsrHandle_t, problem_outcome&)>;

// --conv with --dir other than FWD_D, or --dt=s8.
prepared_problem prepare_conv_other(const bench_problem& bp, problem_outcome& outcome);
prepared_problem prepare_pool(const bench_problem& bp, problem_outcome& outcome);
prepared_problem prepare_softmax(const bench_problem& bp, problem_outcome& outcome);
prepared_problem prepare_lrn(const bench_problem& bp, problem_outcome& outcome);
prepared_problem prepare_bnorm(const bench_problem& bp, problem_outcome& outcome);
prepared_problem prepare_lnorm(const bench_problem& bp, problem_outcome& outcome);  // and rms
prepared_problem prepare_binary(const bench_problem& bp, problem_outcome& outcome);
prepared_problem prepare_reorder(const bench_problem& bp, problem_outcome& outcome);
prepared_problem prepare_reduction(const bench_problem& bp, problem_outcome& outcome);
prepared_problem prepare_rnn(const bench_problem& bp, problem_outcome& outcome);
prepared_problem prepare_matmul(const bench_problem& bp, problem_outcome& outcome);

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_BENCH_DRIVERS_HPP
