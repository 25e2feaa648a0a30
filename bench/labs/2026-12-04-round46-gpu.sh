#!/usr/bin/env bash
# bench/labs/2026-12-04-round46-gpu.sh: round 46's profile, on the GPU host, after the
# builds of 2026-12-04-round46.sh are carried there: each build timed once under ncu
# (launch 1 of its kernel, the sections that say where issue slots and stalls go).
# Usage: bench/labs/2026-12-04-round46-gpu.sh LABDIR OUTDIR
set -uo pipefail
cd "$(dirname "$0")/../.."
LAB=${1:-.deps/lab46}; O=${2:-/tmp/ncu46}; mkdir -p "$O"
KB=${KB:-.deps/kernelbench}
prof() {  # name kernel-regex task.py so
  ncu --kernel-name "regex:$2" --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section WarpStateStats --section InstructionStats --section SchedulerStats --section Occupancy \
    --section MemoryWorkloadAnalysis --metrics smsp__inst_executed_pipe_tensor.sum,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed_op_ldgsts.sum \
    python3 bench/variant_lab.py --task "$3" "$4" --rounds 1 >"$O/$1.txt" 2>&1
  echo "ncu $1 rc=$?"
}
prof conv conv_kernel $KB/level2/1_Conv2D_ReLU_BiasAdd.py $LAB/c1/conv-3xtf32.so
prof gemm gemm_kernel $KB/level1/1_Square_matrix_multiplication_.py $LAB/g1/gemm-3xtf32.so
