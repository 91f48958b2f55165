#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <thread>

using namespace tessera::testing;

TEST(Version, runtime_version_matches_the_header) {
  EXPECT_EQ(tsrGetVersion(), static_cast<size_t>(TSR_VERSION));
  EXPECT_OK(tsrCheckVersion(TSR_VERSION));
}

TEST(Version, check_refuses_a_caller_built_against_a_newer_or_other_major_version) {
  EXPECT_FAILS_WITH(tsrCheckVersion(TSR_VERSION + 1), TSR_STATUS_BAD_PARAM_VERSION_MISMATCH,
                    "compiled against Tessera " + std::to_string(TSR_VERSION + 1),
                    "library at run time is " + std::to_string(TSR_VERSION));
  EXPECT_FAILS_WITH(tsrCheckVersion(TSR_VERSION + 10000), TSR_STATUS_BAD_PARAM_VERSION_MISMATCH,
                    "same major version");
}

TEST(Errors, every_status_has_a_name_and_a_category) {
  EXPECT_STREQ(tsrGetErrorString(TSR_STATUS_SUCCESS), "TSR_STATUS_SUCCESS");
  EXPECT_STREQ(tsrGetErrorString(TSR_STATUS_BAD_PARAM_NULL_POINTER),
               "TSR_STATUS_BAD_PARAM_NULL_POINTER");
  EXPECT_STREQ(tsrGetErrorString(static_cast<tsrStatus_t>(12345)), "TSR_STATUS_UNKNOWN");
  EXPECT_EQ(TSR_STATUS_CATEGORY(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH), TSR_STATUS_BAD_PARAM);
  EXPECT_EQ(TSR_STATUS_CATEGORY(TSR_STATUS_NOT_SUPPORTED_NO_KERNEL), TSR_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(TSR_STATUS_CATEGORY(TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY),
            TSR_STATUS_EXECUTION_FAILED);
}

TEST(Errors, last_message_names_function_and_argument_and_is_cleared_by_success) {
  EXPECT_FAILS_WITH(tsrCreateTensorDescriptor(nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "tsrCreateTensorDescriptor", "desc is NULL");
  tsrTensorDescriptor_t d = nullptr;
  ASSERT_OK(tsrCreateTensorDescriptor(&d));
  EXPECT_EQ(last_error(), "");
  tsrDestroyTensorDescriptor(d);
}

TEST(Errors, last_message_is_per_thread) {
  EXPECT_NE(tsrCreateTensorDescriptor(nullptr), TSR_STATUS_SUCCESS);
  std::string other;
  std::thread t([&] { other = last_error(); });
  t.join();
  EXPECT_EQ(other, "");
  EXPECT_NE(last_error(), "");
}

TEST(Errors, message_is_truncated_to_the_buffer) {
  EXPECT_NE(tsrCreateTensorDescriptor(nullptr), TSR_STATUS_SUCCESS);
  char small[8];
  ASSERT_OK(tsrGetLastErrorString(small, sizeof(small)));
  EXPECT_EQ(std::string(small).size(), 7u);
  EXPECT_EQ(tsrGetLastErrorString(nullptr, 4), TSR_STATUS_BAD_PARAM_NULL_POINTER);
}

TEST(CppWrapper, throws_tessera_error_with_status_and_message) {
  try {
    tessera::tensor_desc d(TSR_DATA_FLOAT, {2, 0}, {1, 1});
    FAIL() << "no exception";
  } catch (const tessera::error& e) {
    EXPECT_EQ(e.status(), TSR_STATUS_BAD_PARAM_OUT_OF_RANGE);
    EXPECT_EQ(e.category(), TSR_STATUS_BAD_PARAM);
    EXPECT_NE(std::string(e.what()).find("dims[1] is 0"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(tessera::check_version());
}
