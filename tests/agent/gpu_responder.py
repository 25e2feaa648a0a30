#!/usr/bin/env python3
"""A scripted model serving real CUDA kernels, for `cutegen run` on a GPU host
(tests/gpu/agent.sh): the same steps and request kinds as tests/agent/responder.py, but
every reply is a kernel the real worker and reference process judge for ReLU: one that
does not compile, a wrong one, one that crashes (illegal address), one that hangs, slow
correct ones and faster ones (the last the CuTe kernel of examples/kernels/relu.cu).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import responder  # noqa: E402

HEAD = "#include <cutegen/abi.h>\n"
LAUNCH = r'''
CG_EXPORT int cg_forward(const cg_tensor *in, int ni, cg_tensor *out, int no, void *w,
                         size_t wb, cudaStream_t s)
{
    if (ni != 1 || no != 1 || in[0].dtype != CG_FLOAT32 || !cg_is_contiguous(&in[0]))
        return CG_UNSUPPORTED;
    long n = cg_numel(&in[0]);
    %(launch)s
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
'''


def cuda(body, launch):
    return "```cuda\n" + HEAD + body + LAUNCH % {"launch": launch} + "```\n"


SCALAR = r'''
__global__ void relu_k(const float *x, float *y, long n)
{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] < 0.f ? 0.f : x[i]%(extra)s;
}
'''
SCALAR_LAUNCH = "relu_k<<<(n + %(t)d - 1) / %(t)d, %(t)d, 0, s>>>((const float *)in[0].data, (float *)out[0].data, n);"


def scalar(threads=256, extra=""):
    return cuda(SCALAR % {"extra": extra}, SCALAR_LAUNCH % {"t": threads})


WRONG = cuda(r'''
__global__ void relu_k(const float *x, float *y, long n)
{
    long i = blockIdx.x * 256L + threadIdx.x;
    if (i < n)
        y[i] = 2.f * x[i];   // not a relu at all
}
''', "relu_k<<<(n + 255) / 256, 256, 0, s>>>((const float *)in[0].data, (float *)out[0].data, n);")

CRASH = cuda(r'''
__global__ void relu_k(const float *x, float *y, long n)
{
    long i = blockIdx.x * 256L + threadIdx.x;
    if (i < n)
        y[i + (1L << 40)] = x[i] < 0.f ? 0.f : x[i];   // far out of bounds
}
''', "relu_k<<<(n + 255) / 256, 256, 0, s>>>((const float *)in[0].data, (float *)out[0].data, n);")

HANG = cuda(r'''
__global__ void relu_k(const float *x, float *y, long n)
{
    long i = blockIdx.x * 256L + threadIdx.x;
    long long t = clock64();
    while (clock64() >= t)   // never ends
        ;
    if (i < n)
        y[i] = x[i] < 0.f ? 0.f : x[i];
}
''', "relu_k<<<(n + 255) / 256, 256, 0, s>>>((const float *)in[0].data, (float *)out[0].data, n);")

VEC = cuda(r'''
__global__ void relu_k(const float4 *x, float4 *y, const float *xs, float *ys, long n4, long n)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x) {
        float4 v = __ldcs(&x[i]);
        v.x = v.x < 0.f ? 0.f : v.x; v.y = v.y < 0.f ? 0.f : v.y;
        v.z = v.z < 0.f ? 0.f : v.z; v.w = v.w < 0.f ? 0.f : v.w;
        __stcs(&y[i], v);
    }
    for (long i = n4 * 4 + blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        ys[i] = xs[i] < 0.f ? 0.f : xs[i];
}
''', "if (((uintptr_t)in[0].data | (uintptr_t)out[0].data) % 16) return CG_UNSUPPORTED;\n"
     "    relu_k<<<132 * 8, 512, 0, s>>>((const float4 *)in[0].data, (float4 *)out[0].data, "
     "(const float *)in[0].data, (float *)out[0].data, n / 4, n);")


def cute_relu():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "examples", "kernels", "relu.cu")) as f:
        return "```cuda\n" + f.read() + "```\n"


SCRIPT = {
    ("for the first version", "ask"): scalar(extra=" +"),     # does not compile
    ("for the first version", "fix"): scalar(threads=64),      # slow, correct
    ("in round 1, child 1 of 2", "ask"):
        "<<<<<<< SEARCH\nthis line is not in the kernel\n=======\nx\n>>>>>>> REPLACE\n",
    ("in round 1, child 1 of 2", "retry"): WRONG,             # wrong result
    ("in round 1, child 1 of 2", "fix"): scalar(threads=256),
    ("in round 1, child 2 of 2", "ask"): CRASH,                # illegal address
    ("in round 1, child 2 of 2", "fix"): scalar(threads=128),
    ("in round 2, child 1 of 2", "ask"): HANG,                 # time-out
    ("in round 2, child 1 of 2", "fix"): VEC,                  # grid-stride float4
    ("in round 2, child 2 of 2", "ask"): "I think the kernel is already optimal.",
    ("in round 2, child 2 of 2", "retry"): scalar(threads=512),
    ("in round 3, child 1 of 2", "ask"): cute_relu(),           # the CuTe example
    ("in round 3, child 2 of 2", "ask"): scalar(threads=1024),
}

# RESPONDER_SCRIPT=kinds: replies that work for any problem, to see every prompt kind
# once: a child that does not compile, then (by fix attempt) one that writes nothing
# (wrong), one that crashes, and one that does not compile again.
ANY_WRONG = "```cuda\n" + HEAD + r'''
CG_EXPORT int cg_forward(const cg_tensor *in, int ni, cg_tensor *out, int no, void *w,
                         size_t wb, cudaStream_t s)
{
    return CG_OK;   // writes nothing
}
''' + "```\n"
ANY_CRASH = "```cuda\n" + HEAD + r'''
__global__ void boom(float *p) { p[threadIdx.x] = 1.f; }
CG_EXPORT int cg_forward(const cg_tensor *in, int ni, cg_tensor *out, int no, void *w,
                         size_t wb, cudaStream_t s)
{
    boom<<<1, 32, 0, s>>>((float *)(1L << 40));
    return CG_OK;
}
''' + "```\n"
ANY_BROKEN = "```cuda\n" + HEAD + "CG_EXPORT int cg_forward(oops\n```\n"


def kinds_main():
    import json
    import re
    req = sys.stdin.read()
    content = json.loads(req)["messages"][-1]["content"]
    m = re.search(r"fix attempt (\d+)", content)
    attempt = int(m.group(1)) if m else 0
    kind = responder.request_kind(content)
    d = os.environ["RESPONDER_DIR"]
    name = "request-%s-%s%s.json" % (responder.slug(re.search(r"\(Request ([^)]*)\.\)", content).group(1)
                                                    if "(Request " in content else "untagged"),
                                     kind, attempt or "")
    with open(os.path.join(d, name), "w") as f:
        f.write(req)
    with open(os.path.join(d, "calls.log"), "a") as f:
        f.write(name + "\n")
    replies = {0: ANY_BROKEN, 1: ANY_WRONG, 2: ANY_CRASH}
    sys.stdout.write(replies.get(attempt, ANY_BROKEN) if kind == "fix" else ANY_BROKEN)


if __name__ == "__main__":
    if os.environ.get("RESPONDER_SCRIPT") == "kinds":
        kinds_main()
    else:
        responder.main(SCRIPT, scalar(threads=256))
