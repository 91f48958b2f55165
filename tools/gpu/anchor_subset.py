# The part of ../shared/anchors/torch_anchors.py that Tessera's GPU figures are compared with,
# measured in the same device run (so both see the same GPU, clocks and driver): copy bandwidth,
# cuDNN's ResNet-50 forward at N=256 fp16 NHWC per layer, the memory-bound PyTorch/cuDNN ops and
# the 2-layer LSTM (with --conv-backward, the same layers' backward filter and data). Same shapes and timing method (CUDA events, median of 50 after 10 warm-ups) as
# the shared script; writes $OUT/anchor_subset.json.
import json, os, sys, torch, torch.nn.functional as F

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")
res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version()}


def median_ms(fn, iters=50, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(); fn(); end.record(); torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


x = torch.randn(2**30, device=dev); y = torch.empty_like(x)
res["copy_TBps"] = 2 * x.numel() * 4 / median_ms(lambda: y.copy_(x), 20, 3) / 1e9
del x, y

# Must match tools/suites/resnet50_mb256.txt line for line.
R50 = [(224,3,64,7,2,3,1),(56,64,64,1,1,0,1),(56,64,64,3,1,1,3),(56,64,256,1,1,0,4),(56,256,64,1,1,0,2),
       (56,256,128,1,1,0,1),(56,128,128,3,2,1,1),(28,128,512,1,1,0,4),(56,256,512,1,2,0,1),(28,512,128,1,1,0,3),
       (28,128,128,3,1,1,3),(28,512,256,1,1,0,1),(28,256,256,3,2,1,1),(14,256,1024,1,1,0,6),(28,512,1024,1,2,0,1),
       (14,1024,256,1,1,0,5),(14,256,256,3,1,1,5),(14,1024,512,1,1,0,1),(14,512,512,3,2,1,1),(7,512,2048,1,1,0,3),
       (14,1024,2048,1,2,0,1),(7,2048,512,1,1,0,2),(7,512,512,3,1,1,2)]
layers = []
if "--no-conv" not in sys.argv:
    for (H, C, K, k, s, p, count) in R50:
        xi = torch.randn(256, C, H, H, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        w = torch.randn(K, C, k, k, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        P = (H + 2 * p - k) // s + 1
        layers.append({"ms": median_ms(lambda: F.conv2d(xi, w, stride=s, padding=p)),
                       "flops": 2.0 * 256 * K * P * P * C * k * k, "count": count})
        del xi, w
    res["r50_conv_fwd_N256_float16_TFLOPs"] = (sum(l["flops"] * l["count"] for l in layers) /
                                              sum(l["ms"] * l["count"] for l in layers) / 1e9)
res["r50_layers"] = layers

# --conv-backward: the same layers' backward filter and backward data through the call autograd
# makes (aten.convolution_backward with one output asked for), cuDNN choosing by measurement
# (benchmark mode); rows line up with tools/suites/resnet50_bwd_{filter,data}_mb256.txt.
if "--conv-backward" in sys.argv:
    for direction, mask in (("bwd_filter", [False, False, True]), ("bwd_data", [True, False, False])):
        rows = []
        for (H, C, K, k, s, p, count) in R50:
            xi = torch.randn(256, C, H, H, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
            w = torch.randn(K, C, k, k, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
            P = (H + 2 * p - k) // s + 1
            dy = torch.randn(256, K, P, P, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
            call = lambda: torch.ops.aten.convolution_backward(dy, xi, w, None, [s, s], [p, p], [1, 1], False,
                                                               [0, 0], 1, mask)
            rows.append({"ms": median_ms(call), "flops": 2.0 * 256 * K * P * P * C * k * k, "count": count})
            del xi, w, dy
        res["r50_layers_" + direction] = rows
        res[f"r50_conv_{direction}_N256_float16_TFLOPs"] = (sum(l["flops"] * l["count"] for l in rows) /
                                                            sum(l["ms"] * l["count"] for l in rows) / 1e9)


def bandwidth(name, fn, nbytes):
    t = median_ms(fn)
    res[name + "_TBps"] = nbytes / t / 1e9


xa = torch.randn(256, 256, 56, 56, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
nb = xa.numel() * 2
bandwidth("relu_fp16", lambda: F.relu(xa), 2 * nb)
bn = torch.nn.BatchNorm2d(256).to(dev).half().to(memory_format=torch.channels_last)
bn.eval(); bandwidth("bn_infer_fp16", lambda: bn(xa), 2 * nb)
bn.train(); bandwidth("bn_train_fwd_fp16", lambda: bn(xa), 2 * nb)
del xa
xp = torch.randn(256, 64, 112, 112, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
bandwidth("maxpool3s2_fp16", lambda: F.max_pool2d(xp, 3, 2, 1), xp.numel() * 2 * (1 + 0.25))
del xp
xs = torch.randn(65536, 1024, device=dev, dtype=torch.float16)
bandwidth("softmax_fp16", lambda: torch.softmax(xs, -1), 2 * xs.numel() * 2)
ln = torch.nn.LayerNorm(1024).to(dev).half()
bandwidth("layernorm_fp16", lambda: ln(xs), 2 * xs.numel() * 2)
del xs

lstm = torch.nn.LSTM(1024, 1024, num_layers=2).to(dev).half()
xl = torch.randn(128, 64, 1024, device=dev, dtype=torch.float16)
with torch.no_grad():
    res["lstm_fwd_T128_B64_H1024_L2_ms"] = median_ms(lambda: lstm(xl), 20, 5)

out = os.environ.get("OUT", ".")
os.makedirs(out, exist_ok=True)
json.dump(res, open(os.path.join(out, "anchor_subset.json"), "w"), indent=1)
for key, value in res.items():
    if not key.startswith("r50_layers"):
        print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}")
