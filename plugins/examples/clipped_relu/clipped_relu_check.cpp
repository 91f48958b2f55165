// Checks, through the public C API only, that the example plugin is discovered on
// TESSERA_PLUGIN_PATH, listed, chosen by the selection policy for the problem it serves (when
// preferred), chosen by an explicit per-call algorithm, and ignored for problems it declines.
// Exit status 0 when all hold; each failure is printed.
#include <tessera/tessera.hpp>

#include <cstdio>
#include <string>
#include <vector>

static int failures = 0;
#define CHECK(cond, what)                                   \
  do {                                                      \
    if (!(cond)) {                                          \
      std::printf("FAIL: %s\n", what);                      \
      ++failures;                                           \
    } else {                                                \
      std::printf("ok:   %s\n", what);                      \
    }                                                       \
  } while (0)

int main() {
  tessera::check_version();
  bool listed = false;
  for (const tsrPluginInfo_t& p : tessera::plugins())
    if (std::string(p.name) == "example" && p.loaded) listed = true;
  CHECK(listed, "the example plugin is listed as loaded");

  tsrAlgo_t mine = TSR_ALGO_AUTO;
  CHECK(tsrGetAlgoByName(TSR_OP_ACTIVATION_FORWARD, "example/clipped_relu_f32", &mine) ==
            TSR_STATUS_SUCCESS, "its kernel is found by name");

  tessera::handle h(TSR_DEVICE_CPU, 0);
  h.set_backend_preference("example");
  tessera::tensor_desc x(TSR_TENSOR_NCHW, TSR_DATA_FLOAT, {1, 2, 2, 2});
  std::vector<float> in = {-3, -1, 0, 1, 2, 5, 7, 9}, out(8, 0.0f);
  const std::vector<float> clipped6 = {0, 0, 0, 1, 2, 5, 6, 6};

  // Selection policy: with "example" preferred, the first kernel that can run is its own.
  tessera::activation_desc clip(TSR_ACTIVATION_CLIPPED_RELU, 6.0);
  tessera::activation_forward(h, clip, TSR_ALGO_AUTO, 1.0f, x, in.data(), 0.0f, x, out.data());
  CHECK(out == clipped6, "automatic choice computes clipped relu");

  // Explicit per-call choice.
  std::vector<float> out2(8, 1.0f);
  tessera::activation_forward(h, clip, mine, 1.0f, x, in.data(), 1.0f, x, out2.data());
  std::vector<float> blended(8);
  for (int i = 0; i < 8; ++i) blended[i] = clipped6[i] + 1.0f;
  CHECK(out2 == blended, "explicit choice runs it, with beta blending");

  // A problem it declines (relu) is served by another backend, and asking for it explicitly
  // says why not.
  tessera::activation_desc relu(TSR_ACTIVATION_RELU);
  std::vector<float> out3(8, 0.0f);
  tsrStatus_t s = tsrActivationForward(h, relu, TSR_ALGO_AUTO, 1.0f, x, in.data(), 0.0f, x, out3.data());
  CHECK(s == TSR_STATUS_SUCCESS && out3[7] == 9.0f, "relu is served by another backend");
  s = tsrActivationForward(h, relu, mine, 1.0f, x, in.data(), 0.0f, x, out3.data());
  char message[512];
  tsrGetLastErrorString(message, sizeof(message));
  CHECK(s == TSR_STATUS_NOT_SUPPORTED_NO_KERNEL && std::string(message).find("runs clipped relu only") != std::string::npos,
        "explicitly asked for relu, it declines with its reason");
  std::printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
