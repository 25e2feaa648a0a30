// recipes/gemm_inputs.cuh: how the GEMM templates read their epilogue's inputs, shared by
// gemm_tc.cu, gemm_wgmma.cu (through gemm_epi.cuh) and gemm_gemv.cu; inlined by the
// generator inside the template's namespace, after kN and kNin and before its Params
// (any struct with `const float *in[]`). What each input is (CGR_INPUTS), its value at an
// output element, the values of all of them there, and cg_forward's checks of the inputs.

// How the epilogue reads an input: not at all, an operand of the product (not read),
// the output's shape (contiguous), one element, one value per column n (a bias), one
// value per row (an [..., M, 1] tensor), one value per row m shared by the batches (a
// pointwise convolution's bias, one a channel: src/recipe_conv.c recipe_conv_as_gemm).
#define CGR_GE_UNUSED 0
#define CGR_GE_OPERAND 1
#define CGR_GE_FULL 2
#define CGR_GE_SCALAR 3
#define CGR_GE_COL 4
#define CGR_GE_ROW 5
#define CGR_GE_MROW 6

#ifndef CGR_BCAST_W
#define CGR_BCAST_W 0  // > 0: the output is a reduced value broadcast over rows of this width
#endif
// The output's row: N, or the broadcast width (a full-size input is read at row*W + n).
constexpr int kFullW = CGR_BCAST_W > 0 ? CGR_BCAST_W : kN;

using cgr::CGR_UNUSED;
template <int I> struct In;
#define CGR_DEF_IN(i, k) template <> struct In<i> { static constexpr int kind = k; };
CGR_INPUTS(CGR_DEF_IN)
#undef CGR_DEF_IN

template <class F> __device__ __forceinline__ void for_inputs(F &&f) { cgr::for_each_index<kNin>(f); }

// The inputs the epilogue loads at each output (all but operands and scalars): the registers
// a chunk of outputs' inputs takes (gemm_epi.cuh's kEpiChunk).
constexpr int epi_reads()
{
    int n = 0;
#define CGR_COUNT_READ(i, k) n += (k) >= CGR_GE_FULL && (k) != CGR_GE_SCALAR;
    CGR_INPUTS(CGR_COUNT_READ)
#undef CGR_COUNT_READ
    return n;
}
constexpr int kEpiReads = epi_reads();
// outputs a thread loads the inputs of before storing any: 16, fewer where each output
// reads more than two inputs (a BatchNorm's four a column spilled at 16: level 2 #33, #97)
constexpr int epi_chunk(int asked) { return asked > 0 ? asked : kEpiReads <= 2 ? 16 : kEpiReads <= 4 ? 8 : 4; }

// Input I at output element (row, n); row = b*M + m.
template <int I, class P> __device__ __forceinline__ float load_in(const P &p, int64_t row, int n)
{
    constexpr int kind = In<I>::kind;
    if constexpr (kind == CGR_GE_FULL)
        return __ldg(p.in[I] + row * kFullW + n);
    else if constexpr (kind == CGR_GE_SCALAR)
        return __ldg(p.in[I]);
    else if constexpr (kind == CGR_GE_COL)
        return __ldg(p.in[I] + n);
    else if constexpr (kind == CGR_GE_ROW)
        return __ldg(p.in[I] + row);
    else if constexpr (kind == CGR_GE_MROW)
        return __ldg(p.in[I] + row % kM);
    else
        return 0.f;
}

// Every input's value at output element (row, n), in x (for cgr_epi / cgr_pre).
template <class P> __device__ __forceinline__ void inputs_at(const P &p, int64_t row, int n, float *x)
{
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        x[I] = load_in<I>(p, row, n);
    });
}

#ifndef CGR_GEMM_EMULATE
// A reduced value broadcast over the output's rows (CGR_BCAST_W), one thread an element:
// y[row, j] = cgr_epi(rv[row], the inputs at (row, j)), for `rows` rows.
template <class P> __device__ __forceinline__ void bcast_store(const P &p, const float *rv, int64_t rows)
{
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= rows * int64_t(kFullW))
        return;
    const int64_t row = i / kFullW;
    float x[kNin > 0 ? kNin : 1];
    inputs_at(p, row, int(i - row * kFullW), x);
    p.out[i] = cgr_epi(rv[row], x);
}
#endif

static const int64_t kOutShape[] = CGR_OUT_SHAPE;
static const int kInNdim[] = CGR_IN_NDIMS;
static const int64_t kInShape[][CG_MAX_DIMS] = CGR_IN_SHAPES;
static const int64_t kInStride[][CG_MAX_DIMS] = CGR_IN_STRIDES;

#ifndef CGR_GEMM_EMULATE
// cg_forward's checks: the epilogue inputs as the spec describes them; the operands with
// the shapes and strides the kernel was generated for, 16-byte aligned. Fills p.in.
template <class P> inline bool inputs_fit(const cg_tensor *in, P &p)
{
    bool ok = true;
    // epilogue inputs: as the spec describes them
    auto check = [&](int i, int kind) {
        const cg_tensor &t = in[i];
        p.in[i] = static_cast<const float *>(t.data);
        if (kind == CGR_GE_UNUSED || kind == CGR_GE_OPERAND)
            return;
        if (t.dtype != CG_FLOAT32 || t.ndim != kInNdim[i]) {
            ok = false;
            return;
        }
        for (int d = 0; d < t.ndim; ++d)
            if (t.shape[d] != kInShape[i][d])
                ok = false;
        if (kind == CGR_GE_SCALAR ? cg_numel(&t) != 1 : !cg_is_contiguous(&t))
            ok = false;
    };
    #define CGR_CHECK_IN(i, k) check(i, k);
    CGR_INPUTS(CGR_CHECK_IN)
    #undef CGR_CHECK_IN
    // the operands: shapes and strides the kernel was generated for, 16-byte aligned
    auto operand = [&](int i) {
        const cg_tensor &t = in[i];
        if (t.dtype != CG_FLOAT32 || t.ndim != kInNdim[i] || (reinterpret_cast<uintptr_t>(t.data) % 16) != 0) {
            ok = false;
            return;
        }
        for (int d = 0; d < t.ndim; ++d)
            if (t.shape[d] != kInShape[i][d] || (t.shape[d] != 1 && t.stride[d] != kInStride[i][d]))
                ok = false;
    };
    operand(CGR_A);
    operand(CGR_B);
    return ok;
}
#endif  // CGR_GEMM_EMULATE
