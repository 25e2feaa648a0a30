# tests/gpu/cutlass_wheel.sh: sourced from the project root by the GPU-host scripts
# (tests/gpu/evidence.sh, bench/gpu_session.sh). The GPU host has no network: when no
# CUTLASS_DIR is set and a CUTLASS wheel was carried in .deps/, unpack its C++ headers to
# /tmp/cutlass-wheel and point CUTLASS_DIR there.
if [ -z "${CUTLASS_DIR:-}" ] && ls .deps/nvidia_cutlass-*.whl >/dev/null 2>&1; then
  python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.extract(n, "/tmp/cutlass-wheel") for n in z.namelist() if n.startswith("cutlass_library/source/include/")]' .deps/nvidia_cutlass-*.whl
  export CUTLASS_DIR=/tmp/cutlass-wheel/cutlass_library/source
fi
