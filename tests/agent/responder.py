#!/usr/bin/env python3
"""A scripted model for testing `cutegen run` (the `command` provider runs it per call).

It reads the request (JSON) on stdin, logs it to $RESPONDER_DIR/request-<n>.json and
prints the n-th scripted reply. Kernels carry CG_FAKE_MODE=<mode>[:<ms>] so the
stand-in worker and reference (tests/cli/fake/) judge them that way. With
$RESPONDER_KILL_AT=n, call n kills the cutegen process that called it (once), to test
resume after a crash during a model call.
"""
import json
import os
import signal
import sys

KERNEL = r'''// a relu, judged by the stand-ins as %(mode)s
#include <cutegen/abi.h>
__attribute__((used)) static const char cg_fake_mode[] = "CG_FAKE_MODE=%(mode)s";
__global__ void relu_k(const float *x, float *y, long n)
{
    long i = blockIdx.x * 256L + threadIdx.x;
    if (i < n)
        y[i] = fmaxf(x[i], 0.f)%(extra)s;
}
CG_EXPORT int cg_forward(const cg_tensor *in, int ni, cg_tensor *out, int no, void *w,
                         size_t wb, cudaStream_t s)
{
    long n = cg_numel(&in[0]);
    relu_k<<<(n + 255) / 256, 256, 0, s>>>((const float *)in[0].data, (float *)out[0].data, n);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
'''


def kernel(mode, extra=""):
    return "Here is the kernel.\n\n```cuda\n" + KERNEL % {"mode": mode, "extra": extra} + "```\n"


SCRIPT = [
    kernel("ok:2.0", extra=" +"),                       # 0 first: does not compile
    kernel("ok:2.0"),                                   # 1 fix_compile: correct, 2.0 ms
    "<<<<<<< SEARCH\nthis line is not in the kernel\n=======\nx\n>>>>>>> REPLACE\n",  # 2: no match
    kernel("wrong"),                                    # 3 retry: wrong result
    kernel("ok:1.5"),                                   # 4 fix_wrong: 1.5 ms, new best
    kernel("ok:1.9"),                                   # 5 tune: slower
    "I think the kernel is already optimal.",           # 6 no code
    kernel("crash"),                                    # 7 retry: crashes
    kernel("ok:1.40"),                                  # 8 fix_runtime: 1.40 ms
    kernel("ok:1.39"),                                  # 9
]


def main():
    d = os.environ["RESPONDER_DIR"]
    count_file = os.path.join(d, "count")
    n = int(open(count_file).read()) if os.path.exists(count_file) else 0
    req = sys.stdin.read()
    with open(os.path.join(d, "request-%d.json" % n), "w") as f:
        f.write(req)
    kill_at = os.environ.get("RESPONDER_KILL_AT")
    killed = os.path.join(d, "killed")
    if kill_at and int(kill_at) == n and not os.path.exists(killed):
        open(killed, "w").close()
        os.kill(os.getppid(), signal.SIGKILL)
        sys.exit(1)
    with open(count_file, "w") as f:
        f.write(str(n + 1))
    sys.stdout.write(SCRIPT[n] if n < len(SCRIPT) else kernel("ok:1.39"))


main()
