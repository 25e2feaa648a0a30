#!/usr/bin/env bash
# Installs what cutegen needs on Debian/Ubuntu and builds it into ./build.
#   scripts/setup.sh            packages (apt-get, needs root or sudo), CUTLASS headers, build
#   scripts/setup.sh --no-apt   skip the packages (already installed, or no root)
# CUTLASS: the nvidia-cutlass wheel from PyPI carries CuTe's headers; set CUTLASS_DIR to
# use a checkout instead.
set -euo pipefail
cd "$(dirname "$0")/.."

CUTLASS_VERSION=${CUTLASS_VERSION:-4.2.0.0}
CUOBJDUMP_VERSION=${CUOBJDUMP_VERSION:-13.5.37}
PACKAGES="build-essential cmake pkg-config libjansson-dev libcurl4-openssl-dev libsqlite3-dev sqlite3 libssl-dev libcmocka-dev python3 python3-pip binutils chromium slurmctld slurmd slurm-client munge"

if [ "${1:-}" != "--no-apt" ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing Debian packages: $PACKAGES"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $PACKAGES >/dev/null
fi

if [ -z "${CUTLASS_DIR:-}" ]; then
  if python3 -c 'import importlib.util,sys; sys.exit(0 if importlib.util.find_spec("cutlass_library") else 1)' 2>/dev/null; then
    echo "setup: CUTLASS headers already installed (python package nvidia-cutlass)"
  else
    echo "setup: installing CUTLASS headers: pip install nvidia-cutlass==$CUTLASS_VERSION"
    python3 -m pip install -q --no-deps "nvidia-cutlass==$CUTLASS_VERSION" ||
      python3 -m pip install -q --no-deps --break-system-packages "nvidia-cutlass==$CUTLASS_VERSION" ||
      echo "setup: warning: could not install nvidia-cutlass; set CUTLASS_DIR to a CUTLASS checkout"
  fi
fi

# cuobjdump and the nvdisasm it runs (tests/cli/t0717 reads the recipes' SASS): the
# toolkit's where it has them, else PyPI's wheels (the nvcc-only toolkits of CI and this
# machine ship without them)
if ! command -v cuobjdump >/dev/null && [ ! -x /usr/local/cuda/bin/cuobjdump ] &&
   ! python3 -c 'import glob,importlib.util,sys; s=importlib.util.find_spec("nvidia"); sys.exit(0 if s and any(glob.glob(p + "/cu*/bin/nvdisasm") for p in s.submodule_search_locations) else 1)' 2>/dev/null; then
  echo "setup: installing cuobjdump and nvdisasm: pip install nvidia-cuda-cuobjdump==$CUOBJDUMP_VERSION nvidia-cuda-nvdisasm==$CUOBJDUMP_VERSION"
  python3 -m pip install -q --no-deps "nvidia-cuda-cuobjdump==$CUOBJDUMP_VERSION" "nvidia-cuda-nvdisasm==$CUOBJDUMP_VERSION" ||
    python3 -m pip install -q --no-deps --break-system-packages "nvidia-cuda-cuobjdump==$CUOBJDUMP_VERSION" "nvidia-cuda-nvdisasm==$CUOBJDUMP_VERSION" ||
    echo "setup: warning: could not install cuobjdump; tests/cli/t0717 will skip"
fi

NVCC_FLAG=""
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  NVCC_FLAG="-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DCUDAToolkit_ROOT=/usr/local/cuda"
fi
echo "setup: building into ./build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CUTEGEN_CMAKE_FLAGS:-} $NVCC_FLAG >/dev/null
cmake --build build -j "$(nproc)"
echo "setup: done. Try: build/cutegen doctor; test with: ctest --test-dir build --output-on-failure"
