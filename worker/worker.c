/*
 * cutegen-worker: runs one candidate kernel, in a process of its own.
 *
 * The orchestrator starts one worker per evaluation and watches it with a time limit;
 * a crash, a hang or a corrupted CUDA context ends only this process. The worker loads
 * the candidate's shared object, opens the trial buffers that the reference process
 * shares by CUDA IPC handles, calls cg_forward on them, synchronises and reports.
 * The expected outputs never enter this process.
 *
 * Protocol: JSON lines on stdin/stdout (docs/protocol.md). Anything the candidate
 * prints goes to stderr: stdout is duplicated for the protocol and then pointed at
 * stderr before the candidate is loaded.
 *
 * Requests:
 *   {"op":"run","tensors":[...],"profile":false,"warmup":0}
 *   {"op":"time","tensors":[...],"warmup":W,"iters":N,"flush_bytes":B}
 *   {"op":"quit"}
 */
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cutegen/abi.h"

typedef int (*forward_fn)(const cg_tensor *, int, cg_tensor *, int, void *, size_t, cudaStream_t);
typedef size_t (*workspace_fn)(const cg_tensor *, int);

static FILE *proto;
static forward_fn cand_forward;
static workspace_fn cand_workspace;

#define MAX_TENSORS 256

/* The tensors of one request: opened IPC mappings and their cg_tensor views. */
struct trial_tensors {
    cg_tensor inputs[MAX_TENSORS];
    cg_tensor outputs[MAX_TENSORS];
    size_t output_bytes[MAX_TENSORS];
    int n_inputs, n_outputs;
    void *mapped[2 * MAX_TENSORS];
    int n_mapped;
    void *workspace;
    size_t workspace_bytes;
};

static void send(json_t *obj)
{
    char *s = json_dumps(obj, JSON_COMPACT);
    fprintf(proto, "%s\n", s);
    fflush(proto);
    free(s);
    json_decref(obj);
}

static void send_error(const char *kind, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    send(json_pack("{s:b, s:s, s:s}", "ok", 0, "kind", kind, "error", msg));
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int dtype_from_name(const char *s)
{
    static const char *names[] = { "float32", "float16", "bfloat16", "float64", "int64",
                                   "int32",   "int16",   "int8",     "uint8",   "bool" };
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static int hex_decode(const char *hex, unsigned char *out, size_t n)
{
    if (strlen(hex) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (unsigned char)v;
    }
    return 0;
}

static void close_tensors(struct trial_tensors *tt)
{
    for (int i = 0; i < tt->n_mapped; i++)
        cudaIpcCloseMemHandle(tt->mapped[i]);
    tt->n_mapped = 0;
    if (tt->workspace)
        cudaFree(tt->workspace);
    tt->workspace = NULL;
}

/* Opens one tensor description; returns 0, or -1 with *err set. */
static int open_tensor(json_t *desc, cg_tensor *t, size_t *bytes, struct trial_tensors *tt,
                       char *err, size_t errlen)
{
    const char *dtype = json_string_value(json_object_get(desc, "dtype"));
    const char *handle = json_string_value(json_object_get(desc, "handle"));
    json_t *shape = json_object_get(desc, "shape");
    json_t *stride = json_object_get(desc, "stride");
    if (!dtype || !handle || !json_is_array(shape) || !json_is_array(stride)) {
        snprintf(err, errlen, "tensor description lacks dtype/handle/shape/stride");
        return -1;
    }
    memset(t, 0, sizeof *t);
    t->dtype = dtype_from_name(dtype);
    t->ndim = (int)json_array_size(shape);
    if (t->dtype < 0 || t->ndim > CG_MAX_DIMS || json_array_size(stride) != (size_t)t->ndim) {
        snprintf(err, errlen, "unsupported tensor: dtype %s, %d dims", dtype, t->ndim);
        return -1;
    }
    for (int d = 0; d < t->ndim; d++) {
        t->shape[d] = json_integer_value(json_array_get(shape, (size_t)d));
        t->stride[d] = json_integer_value(json_array_get(stride, (size_t)d));
    }
    cudaIpcMemHandle_t h;
    if (hex_decode(handle, (unsigned char *)&h, sizeof h) < 0) {
        snprintf(err, errlen, "bad IPC handle");
        return -1;
    }
    void *ptr = NULL;
    cudaError_t e = cudaIpcOpenMemHandle(&ptr, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "cudaIpcOpenMemHandle: %s: %s", cudaGetErrorName(e),
                 cudaGetErrorString(e));
        return -1;
    }
    tt->mapped[tt->n_mapped++] = ptr;
    t->data = (char *)ptr + json_integer_value(json_object_get(desc, "offset"));
    *bytes = (size_t)json_integer_value(json_object_get(desc, "bytes"));
    return 0;
}

static int open_tensors(json_t *list, struct trial_tensors *tt, char *err, size_t errlen)
{
    memset(tt, 0, sizeof *tt);
    size_t i;
    json_t *desc;
    json_array_foreach(list, i, desc) {
        const char *role = json_string_value(json_object_get(desc, "role"));
        bool is_out = role && strcmp(role, "output") == 0;
        int *n = is_out ? &tt->n_outputs : &tt->n_inputs;
        if (*n >= MAX_TENSORS) {
            snprintf(err, errlen, "more than %d tensors", MAX_TENSORS);
            return -1;
        }
        size_t bytes = 0;
        cg_tensor *t = is_out ? &tt->outputs[*n] : &tt->inputs[*n];
        if (open_tensor(desc, t, &bytes, tt, err, errlen) < 0)
            return -1;
        if (is_out)
            tt->output_bytes[*n] = bytes;
        (*n)++;
    }
    if (cand_workspace) {
        tt->workspace_bytes = cand_workspace(tt->inputs, tt->n_inputs);
        if (tt->workspace_bytes) {
            cudaError_t e = cudaMalloc(&tt->workspace, tt->workspace_bytes);
            if (e != cudaSuccess) {
                snprintf(err, errlen, "workspace of %zu bytes: %s", tt->workspace_bytes,
                         cudaGetErrorName(e));
                return -1;
            }
        }
    }
    return 0;
}

/* Sends the reply for a CUDA error and tells the caller to exit: the context is gone. */
static void report_cuda_error(cudaError_t e, const char *where, int status)
{
    send(json_pack("{s:b, s:i, s:s, s:s, s:s}", "ok", 1, "status", status, "cuda_error",
                   cudaGetErrorName(e), "cuda_message", cudaGetErrorString(e), "where", where));
}

/* One call of the candidate; returns its status, or -1000 on a CUDA error (reported). */
static int call_once(struct trial_tensors *tt, cudaStream_t stream)
{
    int rc = cand_forward(tt->inputs, tt->n_inputs, tt->outputs, tt->n_outputs, tt->workspace,
                          tt->workspace_bytes, stream);
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess) {
        report_cuda_error(e, "during or after cg_forward", rc);
        return -1000;
    }
    return rc;
}

/*
 * Under a profiler the candidate works on buffers of this process (copies of the
 * shared inputs, outputs copied back after the call): ncu replays each kernel, saving
 * and restoring the memory it touches, which it may not do for IPC mappings.
 */
static int use_local_copies(struct trial_tensors *tt, void **saved_in, void **saved_out)
{
    for (int i = 0; i < tt->n_inputs; i++) {
        int64_t span = cg_numel(&tt->inputs[i]) ? 1 : 0; /* elements from first to last */
        for (int d = 0; d < tt->inputs[i].ndim; d++)
            span += (tt->inputs[i].shape[d] - 1) * tt->inputs[i].stride[d];
        static const int elem[] = { 4, 2, 2, 8, 8, 4, 2, 1, 1, 1 };
        size_t bytes = (size_t)span * (size_t)elem[tt->inputs[i].dtype];
        void *local = NULL;
        if (cudaMalloc(&local, bytes ? bytes : 1) != cudaSuccess)
            return -1;
        cudaMemcpy(local, tt->inputs[i].data, bytes, cudaMemcpyDeviceToDevice);
        saved_in[i] = tt->inputs[i].data;
        tt->inputs[i].data = local;
    }
    for (int o = 0; o < tt->n_outputs; o++) {
        void *local = NULL;
        if (cudaMalloc(&local, tt->output_bytes[o] ? tt->output_bytes[o] : 1) != cudaSuccess)
            return -1;
        cudaMemset(local, 0xFF, tt->output_bytes[o]);
        saved_out[o] = tt->outputs[o].data;
        tt->outputs[o].data = local;
    }
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : -1;
}

static void drop_local_copies(struct trial_tensors *tt, void **saved_in, void **saved_out)
{
    for (int o = 0; o < tt->n_outputs; o++) {
        cudaMemcpy(saved_out[o], tt->outputs[o].data, tt->output_bytes[o], cudaMemcpyDeviceToDevice);
        cudaFree(tt->outputs[o].data);
        tt->outputs[o].data = saved_out[o];
    }
    for (int i = 0; i < tt->n_inputs; i++) {
        cudaFree(tt->inputs[i].data);
        tt->inputs[i].data = saved_in[i];
    }
}

static bool handle_run(json_t *req, cudaStream_t stream)
{
    struct trial_tensors tt;
    char err[512];
    if (open_tensors(json_object_get(req, "tensors"), &tt, err, sizeof err) < 0) {
        close_tensors(&tt);
        send_error("ipc", "%s", err);
        return true;
    }
    bool profile = json_is_true(json_object_get(req, "profile"));
    int warmup = (int)json_integer_value(json_object_get(req, "warmup"));
    void *saved_in[MAX_TENSORS], *saved_out[MAX_TENSORS];
    if (profile && use_local_copies(&tt, saved_in, saved_out) < 0) {
        send_error("oom", "cannot make local copies of the trial tensors for profiling");
        return true;
    }
    for (int i = 0; i < warmup; i++) {
        int rc = call_once(&tt, stream);
        if (rc == -1000)
            return false;
    }
    double t0 = wall_ms();
    if (profile)
        cudaProfilerStart();
    int rc = call_once(&tt, stream);
    if (profile)
        cudaProfilerStop();
    if (rc == -1000)
        return false;
    double t1 = wall_ms();
    if (profile)
        drop_local_copies(&tt, saved_in, saved_out);
    close_tensors(&tt);
    send(json_pack("{s:b, s:i, s:f}", "ok", 1, "status", rc, "wall_ms", t1 - t0));
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(const double *v, int n)
{
    double *s = malloc(sizeof(double) * (size_t)n);
    memcpy(s, v, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

/* Lines a kernel loaded evict-last (persisting) may outlast the flush, which writes with
 * normal priority: a candidate could keep its inputs in L2 from one timed call to the next.
 * So before each flush every persisting line is put back to normal, once the earlier calls
 * are done (the reset acts when it returns). CUTEGEN_L2_RESET=0 leaves them, for
 * tests/gpu/l2_persist.sh alone: it shows what the reset prevents. */
static bool l2_reset_wanted(void)
{
    const char *v = getenv("CUTEGEN_L2_RESET");
    return !(v && strcmp(v, "0") == 0);
}

static void reset_persisting_l2(void)
{
    cudaDeviceSynchronize();
    if (cudaCtxResetPersistingL2Cache() != cudaSuccess)
        (void)cudaGetLastError(); /* not supported here (MIG, MPS): nothing persists either */
}

/* Timing: warm-ups, then for each iteration put persisting L2 lines back to normal,
 * re-poison the outputs (a kernel that keeps
 * results from an earlier call leaves NaN behind), flush L2 by writing a buffer larger
 * than it, and time the call with events on the given stream. Work that escapes the
 * stream shows as a tail: the time a device-wide synchronisation still takes once the end
 * event has completed. Only this context's work counts there, so other processes sharing
 * the GPU (which stretch the host clock around the call) cannot make a kernel look guilty. */
static bool handle_time(json_t *req, cudaStream_t stream)
{
    struct trial_tensors tt;
    char err[512];
    if (open_tensors(json_object_get(req, "tensors"), &tt, err, sizeof err) < 0) {
        close_tensors(&tt);
        send_error("ipc", "%s", err);
        return true;
    }
    int warmup = (int)json_integer_value(json_object_get(req, "warmup"));
    int iters = (int)json_integer_value(json_object_get(req, "iters"));
    size_t flush_bytes = (size_t)json_integer_value(json_object_get(req, "flush_bytes"));
    if (iters < 1)
        iters = 1;
    void *flush = NULL;
    cudaError_t e = cudaMalloc(&flush, flush_bytes ? flush_bytes : 1);
    if (e != cudaSuccess) {
        close_tensors(&tt);
        send_error("oom", "cannot allocate the %zu-byte L2 flush buffer: %s", flush_bytes,
                   cudaGetErrorName(e));
        return true;
    }
    for (int i = 0; i < warmup; i++) {
        int rc = call_once(&tt, stream);
        if (rc == -1000)
            return false;
        if (rc != 0) {
            cudaFree(flush);
            close_tensors(&tt);
            send(json_pack("{s:b, s:i}", "ok", 1, "status", rc));
            return true;
        }
    }
    cudaEvent_t start, end;
    cudaEventCreate(&start);
    cudaEventCreate(&end);
    double *ev = calloc((size_t)iters, sizeof(double));
    double *wall = calloc((size_t)iters, sizeof(double));
    double *tail = calloc((size_t)iters, sizeof(double));
    int status = 0;
    const bool l2_reset = l2_reset_wanted();
    for (int it = 0; it < iters; it++) {
        if (l2_reset)
            reset_persisting_l2();
        for (int o = 0; o < tt.n_outputs; o++)
            cudaMemsetAsync(tt.outputs[o].data, 0xFF, tt.output_bytes[o], stream);
        cudaMemsetAsync(flush, it & 0xFF, flush_bytes, stream);
        cudaStreamSynchronize(stream);
        double t0 = wall_ms();
        cudaEventRecord(start, stream);
        status = cand_forward(tt.inputs, tt.n_inputs, tt.outputs, tt.n_outputs, tt.workspace,
                              tt.workspace_bytes, stream);
        cudaEventRecord(end, stream);
        e = cudaEventSynchronize(end);
        double t_end = wall_ms();
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        wall[it] = wall_ms() - t0;
        tail[it] = wall_ms() - t_end;
        if (e == cudaSuccess)
            e = cudaGetLastError();
        if (e != cudaSuccess) {
            report_cuda_error(e, "in a timed call", status);
            return false;
        }
        if (status != 0)
            break;
        float ms = 0;
        cudaEventElapsedTime(&ms, start, end);
        ev[it] = ms;
    }
    json_t *times = json_array(), *walls = json_array(), *tails = json_array();
    for (int it = 0; it < iters && status == 0; it++) {
        json_array_append_new(times, json_real(ev[it]));
        json_array_append_new(walls, json_real(wall[it]));
        json_array_append_new(tails, json_real(tail[it]));
    }
    json_t *reply = json_pack("{s:b, s:i, s:o, s:o, s:o}", "ok", 1, "status", status, "times_ms",
                              times, "wall_ms", walls, "tail_ms", tails);
    if (status == 0) {
        json_object_set_new(reply, "median_ms", json_real(median_of(ev, iters)));
        json_object_set_new(reply, "median_wall_ms", json_real(median_of(wall, iters)));
    }
    free(ev);
    free(wall);
    free(tail);
    cudaEventDestroy(start);
    cudaEventDestroy(end);
    cudaFree(flush);
    close_tensors(&tt);
    send(reply);
    return true;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cutegen-worker --so KERNEL.so [--device N] [--requests FILE]\n"
               "Runs one candidate for the cutegen orchestrator (JSON lines on stdin/stdout).\n"
               "       cutegen-worker --probe   prints the GPU's facts as JSON\n");
}

static int probe(int device)
{
    struct cudaDeviceProp p;
    int driver = 0, runtime = 0;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) {
        send(json_pack("{s:b, s:s, s:s}", "ok", 0, "cuda_error", cudaGetErrorName(e), "error",
                       cudaGetErrorString(e)));
        return 5;
    }
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    int sm_khz = 0, mem_khz = 0, bus_bits = 0;
    cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device);
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device);
    cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", p.major, p.minor);
    json_t *facts = json_pack("{s:i, s:i, s:i}", "sm_clock_khz", sm_khz, "mem_clock_khz", mem_khz,
                              "bus_width_bits", bus_bits);
    json_object_update_new(facts, json_pack("{s:b, s:s, s:s, s:i, s:I, s:i, s:I, s:I, s:i, s:i, s:i}", "ok", 1, "name",
                   p.name, "cc", cc, "sms", p.multiProcessorCount, "memory_bytes",
                   (json_int_t)p.totalGlobalMem, "l2_bytes", p.l2CacheSize, "smem_per_sm",
                   (json_int_t)p.sharedMemPerMultiprocessor, "smem_per_block_optin",
                   (json_int_t)p.sharedMemPerBlockOptin, "regs_per_sm", p.regsPerMultiprocessor,
                   "driver_version", driver, "runtime_version", runtime));
    send(facts);
    return 0;
}

int main(int argc, char **argv)
{
    /* The protocol keeps the real stdout; everything else printed goes to stderr. */
    int proto_fd = dup(1);
    proto = fdopen(proto_fd, "w");
    dup2(2, 1);
    const char *so = NULL;
    int device = 0;
    bool do_probe = false;
    const char *requests = NULL;
    static const struct option opts[] = { { "so", required_argument, NULL, 's' },
                                          { "requests", required_argument, NULL, 'r' },
                                          { "device", required_argument, NULL, 'd' },
                                          { "probe", no_argument, NULL, 'p' },
                                          { "help", no_argument, NULL, 'h' },
                                          { NULL, 0, NULL, 0 } };
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 's': so = optarg; break;
        case 'd': device = atoi(optarg); break;
        case 'p': do_probe = true; break;
        case 'r': requests = optarg; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (do_probe)
        return probe(device);
    if (!so) {
        usage(stderr);
        return 2;
    }
    /* Requests from a file (a run under ncu, which owns the terminal) instead of stdin. */
    if (requests && !freopen(requests, "r", stdin)) {
        fprintf(stderr, "cutegen-worker: cannot open '%s': %s\n", requests, strerror(errno));
        return 2;
    }
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaFree(0);
    if (e != cudaSuccess) {
        send(json_pack("{s:s, s:s, s:s}", "event", "error", "kind", "no_gpu", "message",
                       cudaGetErrorString(e)));
        return 5;
    }
    void *lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        send(json_pack("{s:s, s:s, s:s}", "event", "error", "kind", "load", "message", dlerror()));
        return 4;
    }
    cand_forward = (forward_fn)dlsym(lib, "cg_forward");
    cand_workspace = (workspace_fn)dlsym(lib, "cg_workspace_bytes");
    if (!cand_forward) {
        send(json_pack("{s:s, s:s, s:s}", "event", "error", "kind", "no_entry_point", "message",
                       "the kernel exports no cg_forward (declare it with CG_EXPORT, as "
                       "cutegen/abi.h does)"));
        return 4;
    }
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    send(json_pack("{s:s, s:i}", "event", "ready", "pid", (int)getpid()));

    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        json_error_t jerr;
        json_t *req = json_loads(line, 0, &jerr);
        if (!req) {
            send_error("protocol", "bad request: %s", jerr.text);
            continue;
        }
        const char *op = json_string_value(json_object_get(req, "op"));
        bool keep_going = true;
        if (op && strcmp(op, "run") == 0)
            keep_going = handle_run(req, stream);
        else if (op && strcmp(op, "time") == 0)
            keep_going = handle_time(req, stream);
        else if (op && strcmp(op, "quit") == 0)
            keep_going = false;
        else
            send_error("protocol", "unknown op '%s'", op ? op : "(none)");
        json_decref(req);
        if (!keep_going)
            break;
    }
    free(line);
    return 0;
}
