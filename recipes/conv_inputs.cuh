// recipes/conv_inputs.cuh: how the convolution templates (conv_tc.cu, conv_dw.cu,
// conv_direct.cu) read their epilogue's inputs; inlined by the generator inside the
// template's namespace, after kNin (CGR_NIN) and before its Params (any struct with
// `const float *in[]`). What each input is (CGR_INPUTS), its value at an output element,
// the values of all of them there, and cg_forward's checks of the inputs.

// How the epilogue reads an input: not at all, an operand of the convolution (x or the
// weight: not read there), the output's shape (contiguous), one element, one value per
// output channel (the bias).
#define CGR_CV_UNUSED 0
#define CGR_CV_OPERAND 1
#define CGR_CV_FULL 2
#define CGR_CV_SCALAR 3
#define CGR_CV_CHAN 4

template <int I> struct In;
#define CGR_DEF_IN(i, k) template <> struct In<i> { static constexpr int kind = k; };
CGR_INPUTS(CGR_DEF_IN)
#undef CGR_DEF_IN

template <class F> __device__ __forceinline__ void for_inputs(F &&f) { cgr::for_each_index<kNin>(f); }

// The inputs the epilogue loads at each output (full-size and per-channel ones; a scalar is
// one address): the registers a chunk of outputs' inputs takes (conv_tc.cu's kEpiChunk).
constexpr int epi_reads()
{
    int n = 0;
#define CGR_COUNT_READ(i, k) n += (k) == CGR_CV_FULL || (k) == CGR_CV_CHAN;
    CGR_INPUTS(CGR_COUNT_READ)
#undef CGR_COUNT_READ
    return n;
}
constexpr int kEpiReads = epi_reads();
// outputs a thread loads the inputs of before storing any: 16, fewer where each output
// reads more than two inputs (a BatchNorm's four a channel spilled at 16: level 2 #73)
constexpr int epi_chunk(int asked) { return asked > 0 ? asked : kEpiReads <= 2 ? 16 : kEpiReads <= 4 ? 8 : 4; }

// Input I at output element y[idx], output channel c.
template <int I, class P> __device__ __forceinline__ float load_in(const P &p, int64_t idx, int c)
{
    constexpr int kind = In<I>::kind;
    if constexpr (kind == CGR_CV_FULL)
        return __ldg(p.in[I] + idx);
    else if constexpr (kind == CGR_CV_SCALAR)
        return __ldg(p.in[I]);
    else if constexpr (kind == CGR_CV_CHAN)
        return __ldg(p.in[I] + c);
    else
        return 0.f;
}

// The epilogue's inputs at output element y[idx], output channel c.
template <class P> __device__ __forceinline__ void inputs_at(const P &p, int64_t idx, int c, float (&x)[kNin > 0 ? kNin : 1])
{
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        x[I] = load_in<I>(p, idx, c);
    });
}

static const int kInNdim[] = CGR_IN_NDIMS;
static const int64_t kInShape[][CG_MAX_DIMS] = CGR_IN_SHAPES;

// cg_forward's checks: every input used is fp32 of the spec's shape, contiguous (a scalar:
// one element); fills p.in. False: CG_UNSUPPORTED.
template <class P> inline bool inputs_fit(const cg_tensor *in, P &p)
{
    bool ok = true;
    auto check = [&](int i, int kind) {
        const cg_tensor &t = in[i];
        p.in[i] = static_cast<const float *>(t.data);
        if (kind == CGR_CV_UNUSED)
            return;
        if (t.dtype != CG_FLOAT32 || t.ndim != kInNdim[i]) {
            ok = false;
            return;
        }
        for (int d = 0; d < t.ndim; ++d)
            if (t.shape[d] != kInShape[i][d])
                ok = false;
        if (kind != CGR_CV_SCALAR && !cg_is_contiguous(&t))
            ok = false;
        if (kind == CGR_CV_SCALAR && cg_numel(&t) != 1)
            ok = false;
    };
#define CGR_CHECK_IN(i, k) check(i, k);
    CGR_INPUTS(CGR_CHECK_IN)
#undef CGR_CHECK_IN
    return ok;
}
