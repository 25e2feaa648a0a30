/*
 * eval: judges one candidate kernel against one PyTorch problem.
 *
 * The pipeline: probe the GPU (through the worker binary), start the reference process
 * and build the kernel at the same time, check the built object statically (integrity),
 * run the candidate in an isolated worker on several fresh trials whose inputs and
 * poisoned outputs the reference process shares by CUDA IPC, compare there, then time
 * the candidate and PyTorch (eager and torch.compile) the same way. The result is one
 * JSON report (docs/eval.md lists its fields) with a verdict:
 *   ok, compile_error, runtime_error, wrong_result, timeout, rejected.
 * The final timing of a correct kernel (eval_session_final) times it once more inside
 * the reference process, interleaved with PyTorch (docs/protocol.md).
 */
#ifndef CUTEGEN_EVAL_H
#define CUTEGEN_EVAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "build.h"
#include "strbuf.h"

enum verdict {
    VERDICT_OK = 0,
    VERDICT_COMPILE_ERROR,
    VERDICT_RUNTIME_ERROR,
    VERDICT_WRONG_RESULT,
    VERDICT_TIMEOUT,
    VERDICT_REJECTED
};

const char *verdict_name(enum verdict v);

/*
 * The final timing (DESIGN.md, "Final numbers"): a kernel already judged correct is
 * loaded into the reference process itself and timed there side by side with PyTorch,
 * on fresh inputs, after one checked call: `rounds` rounds, each timing every side over
 * `iters` calls (L2 flushed, CUDA events, device synchronised, as the worker does), the
 * order of the sides reversed every other round. The speedup is the median over rounds
 * of PyTorch's time over the kernel's in that round.
 */
typedef struct eval_final_opts {
    int rounds;          /* default 10 */
    int iters;           /* timed calls of each side per round (default 10) */
    int warmup;          /* warm-up calls of each side first (< 0: the session's warmup) */
    bool compile;        /* torch.compile too, when the session times it (default true) */
    const char *dir;     /* where final.json goes; NULL: the session's directory */
} eval_final_opts;

void eval_final_opts_init(eval_final_opts *f);

typedef struct eval_opts {
    const char *task_path;
    const char *kernel_path;
    int trials;          /* correctness trials, each with a fresh seed (>= 1; default 5) */
    int warmup;          /* warm-up calls before timing (default 10) */
    int iters;           /* timed calls (default 100) */
    double atol, rtol;   /* < 0: by dtype (fp32 1e-4, fp16/bf16 1e-2) */
    bool time_kernel;    /* time the candidate once it is correct (default true) */
    bool baseline;       /* time PyTorch eager (default true) */
    bool baseline_compile; /* and torch.compile (default true) */
    bool use_cache;      /* reuse cached task specs and baselines (default true) */
    double call_timeout_s;  /* one candidate call, or one timing request (default 60 / 300) */
    double ref_timeout_s;   /* one reference-process request (default 600) */
    int device;
    uint64_t seed;       /* 0: drawn at random for this evaluation */
    const char *python;  /* python3 with torch; NULL: $CUTEGEN_PYTHON or python3 */
    const char *worker;  /* NULL: $CUTEGEN_WORKER or cutegen-worker next to cutegen */
    const char *work_dir;/* logs and the report; NULL: a new directory in the cache */
    const char *cutlass_dir; /* NULL: found as build.h says */
    const char *arch;    /* NULL: the GPU's own */
    double build_timeout_s;
    const char *build_mode; /* "split" or "plain"; NULL: $CUTEGEN_BUILD_MODE, else split */
    bool final;          /* eval_run: after an ok verdict, the final timing too, in
                            (*report)["final"]; the agent: of the best kernel (see agent.h) */
    eval_final_opts final_opts;
} eval_opts;

void eval_opts_init(eval_opts *o);

/*
 * Runs the whole evaluation. Returns 0 when the candidate was judged (the verdict is in
 * (*report)["verdict"]), or one of the EXIT_* codes of util.h when it could not be
 * judged (no GPU, no torch, a broken problem file, ...), with the reason in err.
 */
int eval_run(const eval_opts *o, json_t **report, strbuf *err);

/*
 * A session keeps one problem's reference process (and its task spec and PyTorch
 * baselines) alive while many candidates are judged, as the agent needs. eval_run() is
 * a session of one candidate. Each judgement starts a fresh worker.
 */
typedef struct eval_ctx eval_session;
/* Probes the GPU and starts the reference process; returns 0 or an EXIT_* code. The
 * session must be closed either way. */
int eval_session_open(const eval_opts *o, eval_session **out, strbuf *err);
/* Judges one kernel; its logs and report.json go to cand_dir (NULL: the session's). */
int eval_session_judge(eval_session *s, const char *kernel_path, const char *cand_dir,
                       json_t **report, strbuf *err);
/*
 * The final timing of one kernel, in the session's reference process. kernel: a .cu
 * file (built through the session's build cache, a hit for a kernel judged before, and
 * checked statically again) or the .so of one already built and checked (used as is).
 * Returns 0 when it was done, with (*report)["verdict"] ok and the interleaved numbers
 * where an evaluation's report has them ("kernel_time", "baseline", "speedup",
 * "speed_of_light"; the reference's whole reply in "interleaved"; "timing":
 * "interleaved"), or another verdict when the kernel failed there (wrong_result,
 * rejected, runtime_error, timeout: no number then); or an EXIT_* code with err set
 * when it could not be done. The reference process is retired afterwards either way
 * (candidate code was loaded into it, and a crash there may have broken its CUDA
 * context); the session starts a new one when it next needs one.
 */
int eval_session_final(eval_session *s, const char *kernel, const eval_final_opts *f,
                       json_t **report, strbuf *err);
/* One line for people: "K ms vs eager E ms = X.XXx, vs compile C ms = Y.YYx (interleaved
 * in one process, R rounds)", from a final report with verdict ok; else its message. */
void eval_final_describe(json_t *final_report, strbuf *out);
/* Builds kernels in parallel on all CPUs into the build cache, so that judging them
 * later finds them built. Verdicts come from eval_session_judge; 0 or an EXIT_* code. */
int eval_session_prebuild(eval_session *s, const char *const *sources, int n, strbuf *err);
/* The structure fingerprint's hash of a kernel compiled with the session's flags
 * (nvcc -ptx and ptxas -v; no GPU needed); malloc'd, NULL when it does not compile. */
char *eval_session_structure(eval_session *s, const char *source_path);
/* The task spec (waits for the reference process the first time); borrowed, NULL on error. */
json_t *eval_session_spec(eval_session *s, strbuf *err);
json_t *eval_session_gpu(eval_session *s);
const char *eval_session_dir(eval_session *s);
void eval_session_close(eval_session *s);

typedef struct profile_opts {
    int warmup;            /* calls before the profiled one (default 3) */
    double timeout_s;      /* the profiling run (default 600) */
    bool source_counters;  /* also collect SourceCounters (slower) */
    const char *ncu;       /* NULL: PATH, then /usr/local/cuda/bin/ncu */
} profile_opts;

void profile_opts_init(profile_opts *p);

/*
 * Profiles one call of the candidate under Nsight Compute on a fresh trial, checks its
 * output, and builds the digest (report["profile"]["digest"] as text, ["kernels"] as
 * JSON), the structure fingerprint (report["fingerprint"]) and, in *details, ncu's
 * human-readable report. Returns like eval_run(); a profiling failure is reported in
 * report["profile_error"] with exit code EXIT_NO_TOOL (no ncu or no permission) or 0.
 */
int eval_profile(const eval_opts *o, const profile_opts *p, json_t **report, strbuf *details,
                 strbuf *err);

/* Asks the worker binary for the GPU's facts; NULL with err set when there is none. */
json_t *eval_probe_gpu(const char *worker, int device, strbuf *err);
/* nvcc's arch for a compute capability "9.0" → "sm_90a". Returns a static string. */
const char *eval_arch_for_cc(const char *cc, char buf[16]);
/* Finds the worker binary (malloc'd path) or NULL. */
char *eval_find_worker(const char *flag);

#endif
