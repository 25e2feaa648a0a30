// recipes/conv_inputs.cuh: how the direct convolution templates (conv_dw.cu, conv_direct.cu)
// read their epilogue's inputs; inlined by the generator inside the template's namespace,
// after kNin (CGR_NIN) and the parameters block. What each input is (CGR_INPUTS), its value
// at an output element, and cg_forward's checks of the inputs (which also fill Params).

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

struct Params {
    const float *in[kNin > 0 ? kNin : 1];
    float *out;
};

// Input I's value at output element idx, of output channel c.
template <int I> __device__ __forceinline__ float load_in(const Params &p, int64_t idx, int c)
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

static const int kInNdim[] = CGR_IN_NDIMS;
static const int64_t kInShape[][CG_MAX_DIMS] = CGR_IN_SHAPES;

// cg_forward's checks: every input used is fp32 of the spec's shape, contiguous (a scalar:
// one element); fills p.in. False: CG_UNSUPPORTED.
inline bool inputs_fit(const cg_tensor *in, Params &p)
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
