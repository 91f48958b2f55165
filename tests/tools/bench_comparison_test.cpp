// tessera-bench's side-by-side arithmetic, input rotation and progress text, without a device:
// the pieces the command-line tests (tools_cli_test.py) cannot pin down exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "bench_comparison.hpp"
#include "bench_rotation.hpp"
#include "progress_bar.hpp"

namespace tessera::tools {
namespace {

problem_outcome passed_in(double ms) {
  problem_outcome o;
  o.status = outcome_status::passed;
  o.time_ms = ms;
  o.rate = 1000.0;
  o.rate_unit = "GFLOP/s";
  return o;
}

comparison_row row_of(const std::string& suite, std::vector<problem_outcome> outcomes) {
  comparison_row row;
  row.problem.suite = suite;
  for (size_t i = 0; i < outcomes.size(); ++i) row.backends.push_back(i ? "cudnn" : "cuda");
  row.labels = backend_labels(row.backends);
  row.outcomes = std::move(outcomes);
  return row;
}

TEST(BackendList, one_name_or_none_is_a_list_of_one) {
  EXPECT_EQ(split_backend_list(""), std::vector<std::string>{""});
  EXPECT_EQ(split_backend_list("cuda"), std::vector<std::string>{"cuda"});
}

TEST(BackendList, splits_on_commas_and_labels_a_repeated_name_by_its_place) {
  EXPECT_EQ(split_backend_list("cuda,cudnn"), (std::vector<std::string>{"cuda", "cudnn"}));
  EXPECT_EQ(backend_labels({"onednn", "onednn", "onednn"}),
            (std::vector<std::string>{"onednn", "onednn#2", "onednn#3"}));
}

TEST(ComparisonRow, ratio_is_the_later_time_over_the_first_and_nan_unless_both_ran) {
  problem_outcome skipped;
  skipped.status = outcome_status::skipped;
  const comparison_row row = row_of("s", {passed_in(2.0), passed_in(3.0), skipped});
  EXPECT_DOUBLE_EQ(row.ratio(1), 1.5);
  EXPECT_TRUE(std::isnan(row.ratio(2)));
}

TEST(ComparisonRow, rates_are_shown_in_tera_units) {
  const scaled_rate r = tera_rate(passed_in(1.0));
  EXPECT_DOUBLE_EQ(r.value, 1.0);
  EXPECT_EQ(r.unit, "TFLOP/s");
}

TEST(RatioGeomeans, average_the_logs_per_suite_over_the_problems_both_backends_ran) {
  problem_outcome failed;
  ratio_geomeans means;
  means.add(row_of("a.txt", {passed_in(1.0), passed_in(2.0)}));
  means.add(row_of("a.txt", {passed_in(1.0), passed_in(8.0)}));
  means.add(row_of("a.txt", {passed_in(1.0), failed}));  // not in the mean
  means.add(row_of("b.txt", {passed_in(4.0), passed_in(1.0)}));
  const std::vector<ratio_geomeans::mean> m = means.means();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].suite, "a.txt");
  EXPECT_EQ(m[0].backend, "cudnn");
  EXPECT_EQ(m[0].baseline, "cuda");
  EXPECT_NEAR(m[0].value, 4.0, 1e-12);
  EXPECT_EQ(m[0].problems, 2);
  EXPECT_NEAR(m[1].value, 0.25, 1e-12);
  EXPECT_NE(format_geomean(m[0]).find("cudnn/cuda time ratio 4.000 over 2 problems"),
            std::string::npos)
      << format_geomean(m[0]);
}

TEST(TensorRotation, adds_copies_until_they_reach_the_budget_and_keeps_one_when_untimed) {
  const reference::host_tensor four_mb =
      reference::host_tensor::packed(TSRP_DATA_FLOAT, {1024, 1024}, false);
  bench_settings s;
  s.rotate_mb = 10.0;
  EXPECT_EQ(tensor_rotation({&four_mb}, s).copies(), 3);  // 12 MB: the first count past 10
  EXPECT_EQ(tensor_rotation({&four_mb, &four_mb}, s).copies(), 2);
  s.rotate_mb = 0.0;
  EXPECT_EQ(tensor_rotation({&four_mb}, s).copies(), 1);
  s.rotate_mb = 200.0;
  s.mode = mode_correctness;
  EXPECT_EQ(tensor_rotation({&four_mb}, s).copies(), 1);
}

TEST(TensorRotation, caps_the_copies_of_tiny_problems_and_cycles_through_them) {
  const reference::host_tensor tiny = reference::host_tensor::packed(TSRP_DATA_FLOAT, {8}, false);
  tensor_rotation rotation({&tiny}, bench_settings{});
  EXPECT_EQ(rotation.copies(), tensor_rotation::max_copies);
  for (int i = 0; i < tensor_rotation::max_copies; ++i) rotation.advance();
  EXPECT_EQ(rotation.current(), 0);
  EXPECT_EQ(tensor_rotation::copy_stride(1), 256u);
  EXPECT_EQ(tensor_rotation::copy_stride(256), 256u);
}

TEST(ProgressBar, writes_durations_as_people_read_them) {
  EXPECT_EQ(progress_bar::format_duration(12.4), "12s");
  EXPECT_EQ(progress_bar::format_duration(187), "3m07s");
  EXPECT_EQ(progress_bar::format_duration(3720), "1h02m");
}

}  // namespace
}  // namespace tessera::tools
