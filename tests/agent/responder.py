#!/usr/bin/env python3
"""A scripted model for testing `cutegen run` (the `command` provider runs it per call).

It reads the request (JSON) on stdin, finds which step of the search asks (the
"(Request in round R, child C of N.)" line cutegen adds), logs the request to
$RESPONDER_DIR/request-<step>-<kind>.json and prints the scripted reply for that step
and kind of request (ask, retry after an unusable reply, fix).
Kernels carry CG_FAKE_MODE=<mode>[:<ms>] so the stand-in worker and reference
(tests/cli/fake/) judge them that way. With $RESPONDER_KILL_AT=<step>, that step's
first request kills the cutegen process that made it (once), to test resume after a
crash during a model call.
"""
import json
import os
import re
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


# Replies per step of the search (the request's "(Request ...)" line) and the kind of
# request, read from the prompt itself (so that a reply lost when cutegen was killed is
# simply asked for again): "ask" is a fresh child, "retry" follows an unusable reply,
# "fix" a failed judgement.
SCRIPT = {
    ("for the first version", "ask"): kernel("ok:2.0", extra=" +"),   # does not compile
    ("for the first version", "fix"): kernel("ok:2.0"),               # its fix: 2.0 ms
    ("in round 1, child 1 of 2", "ask"):
        "<<<<<<< SEARCH\nthis line is not in the kernel\n=======\nx\n>>>>>>> REPLACE\n",
    ("in round 1, child 1 of 2", "retry"): kernel("wrong"),           # wrong result
    ("in round 1, child 1 of 2", "fix"): kernel("ok:1.5"),            # its fix: 1.5 ms
    ("in round 1, child 2 of 2", "ask"): kernel("ok:1.9"),
    ("in round 2, child 1 of 2", "ask"): "I think the kernel is already optimal.",
    ("in round 2, child 1 of 2", "retry"): kernel("crash"),           # crashes
    ("in round 2, child 1 of 2", "fix"): kernel("ok:1.40"),
    ("in round 2, child 2 of 2", "ask"): kernel("ok:1.45"),
    ("in round 3, child 1 of 2", "ask"): kernel("ok:1.39"),
    ("in round 3, child 2 of 2", "ask"): kernel("ok:1.42"),
}


def request_kind(content):
    if content.startswith("The kernel below does not compile") or \
            content.startswith("The kernel below compiles"):
        return "fix"
    if "held no code" in content or "SEARCH/REPLACE block failed" in content:
        return "retry"
    return "ask"


def slug(tag):
    return "".join(c if c.isalnum() else "-" for c in tag)


def main(script=None, default=None):
    script = SCRIPT if script is None else script
    default = kernel("ok:1.39") if default is None else default
    d = os.environ["RESPONDER_DIR"]
    req = sys.stdin.read()
    content = json.loads(req)["messages"][-1]["content"]
    m = re.search(r"\(Request ([^)]*)\.\)", content)
    tag = m.group(1) if m else "untagged"
    kind = request_kind(content)
    with open(os.path.join(d, "request-%s-%s.json" % (slug(tag), kind)), "w") as f:
        f.write(req)
    kill_at = os.environ.get("RESPONDER_KILL_AT")
    killed = os.path.join(d, "killed")
    if kill_at == tag and not os.path.exists(killed):
        open(killed, "w").close()
        os.kill(os.getppid(), signal.SIGKILL)
        sys.exit(1)
    with open(os.path.join(d, "calls.log"), "a") as f:
        f.write("%s %s\n" % (slug(tag), kind))
    sys.stdout.write(script.get((tag, kind), default))


if __name__ == "__main__":
    main()
