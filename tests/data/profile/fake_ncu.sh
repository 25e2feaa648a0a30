#!/bin/bash
# fake_ncu.sh: stands in for Nsight Compute in tests of ncu_run(), with no GPU. The
# profiling run behaves as FAKE_NCU_MODE says (ok, perm, crash, nokernels, hang, noreport);
# imports print the fixture FAKE_NCU_DATA/units_raw.csv or a small details page.
mode=${FAKE_NCU_MODE:-ok}
export_path=""
import=""
csv=0
prev=""
for a in "$@"; do
  [ "$prev" = "--export" ] && export_path=$a
  [ "$prev" = "--import" ] && import=$a
  [ "$a" = "--csv" ] && csv=1
  prev=$a
done
if [ -n "$import" ]; then
  [ -f "$import" ] || { echo "==ERROR== cannot open $import" >&2; exit 1; }
  if [ $csv = 1 ]; then cat "$FAKE_NCU_DATA/units_raw.csv"; else
    printf '  reduce(const float *, float *) (64, 1, 1)x(128, 1, 1), Context 1, Stream 7, Device 0, CC 9.0\n'
    printf '    Section: Occupancy\n    OPT   Est. Speedup: 12.5%%\n          Raise the block size. More text here.\n'
  fi
  exit 0
fi
echo "==PROF== Connected to process $$ (target)"
case $mode in
  ok) touch "$export_path.ncu-rep"; echo "==PROF== Disconnected from process $$"; exit 0 ;;
  noreport) echo "==PROF== Disconnected from process $$"; exit 0 ;;
  perm) echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0." ; exit 1 ;;
  crash) echo "==ERROR== The application returned an error code (11)." ; exit 11 ;;
  nokernels) echo "==PROF== Disconnected from process $$"; echo "==WARNING== No kernels were profiled."; exit 0 ;;
  hang) sleep 30 ;;
esac
exit 3
