#!/bin/bash
# capture.sh: records the ncu and cuobjdump output that cutegen's profiler tests use, on
# a host with an NVIDIA GPU: builds probe.cu, profiles the bracketed launches with the
# same ncu flags src/ncu.c builds, and writes everything under ${OUT:-./out}.
set -u
OUT=${OUT:-./out}
mkdir -p "$OUT"
here=$(cd "$(dirname "$0")" && pwd)
export PATH=$PATH:/usr/local/cuda/bin
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
{ nvidia-smi; echo "ncu=$NCU"; "$NCU" --version; nvcc --version; command -v cuobjdump nvdisasm; } >"$OUT/env.txt" 2>&1
nvcc -arch=sm_90a -O2 -Xptxas -v -o "$OUT/probe" "$here/probe.cu" >"$OUT/ptxas.txt" 2>&1
cuobjdump --dump-sass "$OUT/probe" >"$OUT/probe.sass" 2>&1
cuobjdump --dump-resource-usage "$OUT/probe" >"$OUT/probe.res" 2>&1
"$NCU" --query-metrics --chip gh100 2>&1 | grep -E "ops_path_tensor|sass_thread_inst_executed_op_|bank_conflict|excessive|pipe_tma|ldgsts|gmma" >"$OUT/query_metrics.txt"
METRICS=smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,smsp__sass_thread_inst_executed_op_hadd_pred_on.sum,smsp__sass_thread_inst_executed_op_hmul_pred_on.sum,smsp__sass_thread_inst_executed_op_hfma_pred_on.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum
TENSOR=sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_src_fp16_dst_fp32.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_tf32_dst_fp32.sum,sm__ops_path_tensor_src_fp64.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts_cache_access.sum,l1tex__m_xbar2l1tex_read_bytes_pipe_tma.sum
SECTIONS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SourceCounters"
t0=$(date +%s%N)
"$NCU" --profile-from-start off --clock-control none --target-processes all $SECTIONS \
  --metrics "$METRICS,$TENSOR" --export "$OUT/probe" --force-overwrite "$OUT/probe" >"$OUT/profile.log" 2>&1
echo "rc=$? ms=$(( ($(date +%s%N) - t0) / 1000000 ))" >>"$OUT/profile.log"
if ! [ -f "$OUT/probe.ncu-rep" ]; then
  # the tensor metrics may not exist under these names: retry without them
  "$NCU" --profile-from-start off --clock-control none --target-processes all $SECTIONS \
    --metrics "$METRICS" --export "$OUT/probe" --force-overwrite "$OUT/probe" >"$OUT/profile2.log" 2>&1
  echo "rc=$?" >>"$OUT/profile2.log"
fi
"$NCU" --import "$OUT/probe.ncu-rep" --csv --page raw >"$OUT/probe_raw.csv" 2>"$OUT/import_raw.err"
"$NCU" --import "$OUT/probe.ncu-rep" --page details >"$OUT/probe_details.txt" 2>"$OUT/import_details.err"
# time of the program without the profiler, for the overhead figure
t0=$(date +%s%N); "$OUT/probe" >/dev/null 2>&1; echo "plain_ms=$(( ($(date +%s%N) - t0) / 1000000 ))" >>"$OUT/profile.log"
# what a program that launches nothing inside the bracket looks like
"$NCU" --profile-from-start off --target-processes all --section SpeedOfLight /bin/true >"$OUT/nokernel.log" 2>&1
echo "rc=$?" >>"$OUT/nokernel.log"
rm -f "$OUT/probe"
ls -la "$OUT"
