/*
 * cutegen/abi.h: the candidate ABI.
 *
 * Every candidate kernel (written by a model, made by a recipe, or by hand) is one
 * CUDA C++ file that includes this header and defines cg_forward() (and, if it needs
 * scratch memory, cg_workspace_bytes()). cutegen compiles it with nvcc into a shared
 * object linked only with the CUDA runtime, loads it into an isolated worker process
 * and calls it on trial tensors that live on the GPU. docs/abi.md explains every field
 * and shows a complete example.
 */
#ifndef CUTEGEN_ABI_H
#define CUTEGEN_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#define CG_ABI_VERSION 1
#define CG_MAX_DIMS 8

/* Element types, as torch names them. */
typedef enum cg_dtype {
    CG_FLOAT32 = 0,
    CG_FLOAT16 = 1,
    CG_BFLOAT16 = 2,
    CG_FLOAT64 = 3,
    CG_INT64 = 4,
    CG_INT32 = 5,
    CG_INT16 = 6,
    CG_INT8 = 7,
    CG_UINT8 = 8,
    CG_BOOL = 9
} cg_dtype;

/*
 * A tensor on the GPU. shape and stride are in elements (not bytes), ndim of them are
 * meaningful; a 0-dimensional tensor holds one element (a Python number passed to
 * forward() arrives this way). data is a device pointer, aligned to at least 256 bytes.
 */
typedef struct cg_tensor {
    void *data;
    int32_t dtype;  /* a cg_dtype */
    int32_t ndim;
    int64_t shape[CG_MAX_DIMS];
    int64_t stride[CG_MAX_DIMS];
} cg_tensor;

/* What cg_forward returns. Anything other than CG_OK means: outputs are not valid. */
enum cg_status {
    CG_OK = 0,
    CG_UNSUPPORTED = 1, /* shapes, strides or dtypes this kernel does not handle */
    CG_LAUNCH_FAILED = 2, /* a CUDA call failed */
    CG_BAD_WORKSPACE = 3 /* workspace smaller than cg_workspace_bytes() asked for */
};

#ifdef __cplusplus
#define CG_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define CG_EXPORT __attribute__((visibility("default")))
#endif

/*
 * Computes the module's forward pass. inputs: forward()'s arguments, then the module's
 * parameters and buffers in state_dict order. outputs: allocated by the caller with the
 * reference's shapes, dtypes and (contiguous) strides. All work must be enqueued on
 * `stream`; cutegen synchronises the device afterwards. Must not keep results from one
 * call to the next, read or write files, or call other libraries.
 */
CG_EXPORT int cg_forward(const cg_tensor *inputs, int n_inputs, cg_tensor *outputs,
                         int n_outputs, void *workspace, size_t workspace_bytes,
                         cudaStream_t stream);

/* Optional: bytes of device scratch memory cg_forward needs for these inputs. */
CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *inputs, int n_inputs);

/* Number of elements of a tensor (1 for 0-dimensional ones). */
static inline int64_t cg_numel(const cg_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

/* Nonzero when the tensor is laid out densely in row-major order. */
static inline int cg_is_contiguous(const cg_tensor *t)
{
    int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->stride[i] != expect)
            return 0;
        expect *= t->shape[i];
    }
    return 1;
}

#endif /* CUTEGEN_ABI_H */
