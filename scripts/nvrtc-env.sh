# Sourced by the GPU scripts: puts NVRTC 13 (the CUDA toolkit's, or the pip wheel's) on
# LD_LIBRARY_PATH, for the kernels wayfarer compiles at run time.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib $(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null)/nvidia/cu13/lib; do
    if ls "$d"/libnvrtc.so.13* >/dev/null 2>&1; then export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; break; fi
done
