#!/usr/bin/env bash
# Prints the folder that holds libcudnn.so.9 in this machine's Python environment (the
# nvidia-cudnn-cu* wheel, where the GPU machine keeps cuDNN), or nothing when there is none.
# The run script exports what the cuDNN plugin needs from it:
#   d=$(bash tools/gpu/find_cudnn.sh)
#   [ -n "$d" ] && export TESSERA_CUDNN_LIBRARY="$d/libcudnn.so.9" LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
# (libcudnn.so.9 opens its sub-libraries from its own folder; LD_LIBRARY_PATH is a second way.)
set -u
for python in "${PYTHON:-python3}" python3 python; do
  command -v "$python" >/dev/null 2>&1 || continue
  # nvidia.cudnn may be a namespace package (no __file__): fall back to its first path entry.
  dir=$("$python" - 2>/dev/null <<'PY'
import os
import nvidia.cudnn as m
f = getattr(m, "__file__", None)
print(os.path.join(os.path.dirname(f) if f else list(m.__path__)[0], "lib"))
PY
) || continue
  if [ -f "$dir/libcudnn.so.9" ]; then
    echo "$dir"
    exit 0
  fi
done
exit 0
