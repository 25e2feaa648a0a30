// tests/cli/recipe_staged_host.cpp: runs a staged candidate's glue (src/recipe_stage.c's
// composite cg_workspace_bytes and cg_forward) on the host, its two stages generated from
// the stand-in templates of tests/data/recipe/staged-host/templates (host code that checks
// what it is handed and writes a known pattern). Checks: the workspace asked for is the
// intermediate (rounded to 256 bytes) plus the larger stage workspace (rounded); a short
// workspace is refused; stage 0 writes the intermediate at the workspace's start and
// stage 1 reads it there, every output element being 2 (0.5 (j mod 7) + COUT) + NIN1 (no
// stage's workspace overlapping the intermediate, which their 0xAB / 0xCD fills would
// break); the task's inputs reach both stages.
//
// Built by tests/cli/t0708-recipe-staged-host.sh with a host C++ compiler:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -DEXPECT_COUT=4 -DEXPECT_NIN1=4 -DMID_BYTES=N
//       -DSTAGE_WS=1000 -I include -I CUDA/include this.cpp
// Inputs are given as -DIN_SHAPES='{{2,3,10,10},{4,3,3,3},{4}}' -DIN_NDIMS='{4,4,1}' and
// the output as -DOUT_SHAPE='{2,4,8,8}' -DOUT_NDIM=4. Exit 0 when all checks pass.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include CGR_KERNEL

static const int kInNdims[] = IN_NDIMS;
static const int64_t kInShapes[][8] = IN_SHAPES;
static const int64_t kOutShape[] = OUT_SHAPE;
constexpr int kNin = sizeof kInNdims / sizeof kInNdims[0];

static cg_tensor tensor(void *data, int ndim, const int64_t *shape)
{
    cg_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = CG_FLOAT32;
    t.ndim = ndim;
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        t.shape[d] = shape[d];
        t.stride[d] = s;
        s *= shape[d];
    }
    return t;
}

int main()
{
    int failures = 0;
    std::vector<std::vector<float>> bufs(kNin);
    cg_tensor in[kNin];
    for (int i = 0; i < kNin; i++) {
        int64_t n = 1;
        for (int d = 0; d < kInNdims[i]; d++)
            n *= kInShapes[i][d];
        bufs[i].assign(size_t(n), 1.f);
        in[i] = tensor(bufs[i].data(), kInNdims[i], kInShapes[i]);
    }
    size_t want = (size_t(MID_BYTES) + 255) / 256 * 256 + (size_t(STAGE_WS) + 255) / 256 * 256;
    size_t ws_bytes = cg_workspace_bytes(in, kNin);
    if (ws_bytes != want) {
        printf("FAIL: cg_workspace_bytes %zu, expected %zu\n", ws_bytes, want);
        failures++;
    }
    int64_t n_out = 1;
    for (int d = 0; d < OUT_NDIM; d++)
        n_out *= kOutShape[d];
    std::vector<float> y(size_t(n_out), -1.f);
    cg_tensor out = tensor(y.data(), OUT_NDIM, kOutShape);
    std::vector<unsigned char> ws(ws_bytes + 64, 0);
    if (cg_forward(in, kNin, &out, 1, ws.data(), ws_bytes - 1, nullptr) != CG_BAD_WORKSPACE) {
        printf("FAIL: a workspace one byte short was not refused\n");
        failures++;
    }
    int rc = cg_forward(in, kNin, &out, 1, ws.data(), ws_bytes, nullptr);
    if (rc != CG_OK) {
        printf("FAIL: cg_forward returned %d\n", rc);
        return 1;
    }
    int bad = 0;
    for (int64_t j = 0; j < n_out; j++) {
        float e = 2.f * (0.5f * float(j % 7) + float(EXPECT_COUT)) + float(EXPECT_NIN1);
        if (y[size_t(j)] != e && bad++ < 5)
            printf("FAIL: output %lld is %g, expected %g\n", (long long)j, y[size_t(j)], e);
    }
    failures += bad;
    const float *mid = reinterpret_cast<const float *>(ws.data());
    for (int64_t j = 0; j < n_out; j++)
        if (mid[j] != 0.5f * float(j % 7) + float(EXPECT_COUT)) {
            printf("FAIL: the intermediate is not at the workspace's start (element %lld)\n", (long long)j);
            failures++;
            break;
        }
    if (failures)
        return 1;
    printf("%lld outputs through the intermediate, workspace %zu bytes: ok\n", (long long)n_out, ws_bytes);
    return 0;
}
