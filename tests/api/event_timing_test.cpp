// Timing events (tsrCreateEvent, tsrRecordEvent, tsrGetEventElapsedTime): the clock tools time
// device work with. On the CPU handle the events read the host clock, so a sleep between two
// records must show.
#include "test_support.hpp"

#include <tessera/tessera.hpp>

#include <chrono>
#include <thread>

using namespace tessera::testing;

TEST(EventTiming, measures_the_time_between_two_records_on_a_cpu_handle) {
  tessera::handle handle(TSR_DEVICE_CPU);
  tessera::event start(handle), end(handle);
  start.record();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  end.record();
  const float ms = end.elapsed_since(start);
  EXPECT_GE(ms, 15.0f);
  EXPECT_LT(ms, 5000.0f);
}

TEST(EventTiming, refuses_events_of_two_handles_and_names_why) {
  tessera::handle first(TSR_DEVICE_CPU), second(TSR_DEVICE_CPU);
  tessera::event start(first), end(second);
  start.record();
  end.record();
  float ms = 0;
  EXPECT_FAILS_WITH(tsrGetEventElapsedTime(start, end, &ms), TSR_STATUS_BAD_PARAM,
                    "tsrGetEventElapsedTime", "different handles");
}

TEST(EventTiming, null_arguments_are_named_and_destroying_null_is_harmless) {
  tsrEvent_t event = nullptr;
  EXPECT_FAILS_WITH(tsrCreateEvent(nullptr, &event), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "tsrCreateEvent", "handle is NULL");
  tessera::handle handle(TSR_DEVICE_CPU);
  EXPECT_FAILS_WITH(tsrCreateEvent(handle, nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER,
                    "tsrCreateEvent", "event is NULL");
  EXPECT_FAILS_WITH(tsrRecordEvent(nullptr), TSR_STATUS_BAD_PARAM_NULL_POINTER, "tsrRecordEvent");
  tessera::event start(handle);
  EXPECT_FAILS_WITH(tsrGetEventElapsedTime(start, nullptr, nullptr),
                    TSR_STATUS_BAD_PARAM_NULL_POINTER, "end is NULL");
  EXPECT_OK(tsrDestroyEvent(nullptr));
}
