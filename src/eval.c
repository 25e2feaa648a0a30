/*
 * eval: the evaluation pipeline (see eval.h).
 *
 * DESIGN. Three processes take part: this one (the orchestrator), the reference
 * process (Python + torch: makes trials, holds the expected outputs, compares) and the
 * worker (C + CUDA runtime: loads the candidate and calls it). Trial tensors travel
 * between the last two as CUDA IPC handles, never through this process or the disk.
 * The worker is started once per evaluation; when it crashes, hangs or reports a CUDA
 * error, the verdict is decided and it is not restarted. The reference process is
 * started before the build so that importing torch overlaps compiling the kernel.
 * The final timing (eval_session_final) is the one time candidate code runs in the
 * reference process itself; that process is retired afterwards and a new one started
 * when the session next needs it.
 */
#include "eval.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fingerprint.h"
#include "gpu.h"
#include "integrity.h"
#include "lane.h"
#include "ncu.h"
#include "profile_digest.h"
#include "peer.h"
#include "proc.h"
#include "util.h"

static const char *const verdict_names[] = { "ok", "compile_error", "runtime_error",
                                             "wrong_result", "timeout", "rejected" };

const char *verdict_name(enum verdict v)
{
    return verdict_names[v];
}

void eval_opts_init(eval_opts *o)
{
    memset(o, 0, sizeof *o);
    o->trials = 5;
    o->warmup = 10;
    o->iters = 100;
    o->atol = o->rtol = -1;
    o->time_kernel = true;
    o->baseline = true;
    o->baseline_compile = true;
    o->use_cache = true;
    o->call_timeout_s = 60;
    o->ref_timeout_s = 600;
    o->build_timeout_s = 300;
    eval_final_opts_init(&o->final_opts);
}

void eval_final_opts_init(eval_final_opts *f)
{
    memset(f, 0, sizeof *f);
    f->rounds = 10;
    f->iters = 10;
    f->warmup = -1;
    f->compile = true;
}

/* Everything one evaluation holds while it runs. */
struct eval_ctx {
    const eval_opts *o;
    json_t *report;
    json_t *seconds;
    char *work_dir;
    char *worker;
    peer ref;
    bool ref_retired;   /* stopped after a final timing: start a new one when needed */
    peer worker_peer;
    bool worker_up;
    bool lane_held; /* this judgement holds the GPU's lane (lane.h) */
    json_t *gpu;
    json_t *ready;      /* the reference process's hello */
    json_t *spec;
    uint64_t seed;
    const char *kernel;   /* the candidate being judged */
    char *cand_dir;       /* its logs and report (the session's work_dir for eval_run) */
    json_t *baseline;     /* PyTorch's times, measured once per session */
};

/* ------------------------------------------------------------------ small helpers */

static uint64_t random_seed(void)
{
    uint64_t s = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &s, sizeof s) != (ssize_t)sizeof s)
            s = 0;
        close(fd);
    }
    if (!s)
        s = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    return (s % 1000000000ull) + 1;
}

static void set_verdict(struct eval_ctx *c, enum verdict v, const char *message)
{
    json_object_set_new(c->report, "verdict", json_string(verdict_name(v)));
    json_object_set_new(c->report, "message", json_string(message ? message : ""));
}

static void add_seconds(struct eval_ctx *c, const char *what, double s)
{
    json_object_set_new(c->seconds, what, json_real(s));
}

const char *eval_arch_for_cc(const char *cc, char buf[16])
{
    int major = 0, minor = 0;
    if (sscanf(cc, "%d.%d", &major, &minor) != 2)
        return "sm_90a";
    bool arch_specific = major == 9 || major == 10 || major == 12;
    snprintf(buf, 16, "sm_%d%d%s", major, minor, arch_specific ? "a" : "");
    return buf;
}

char *eval_find_worker(const char *flag)
{
    if (flag)
        return is_executable(flag) ? xstrdup(flag) : NULL;
    const char *env = getenv("CUTEGEN_WORKER");
    if (env && *env)
        return is_executable(env) ? xstrdup(env) : NULL;
    char *dir = self_dir();
    char *path = xasprintf("%s/cutegen-worker", dir);
    free(dir);
    if (is_executable(path))
        return path;
    free(path);
    return find_in_path("cutegen-worker");
}

json_t *eval_probe_gpu(const char *worker, int device, strbuf *err)
{
    char dev[16];
    snprintf(dev, sizeof dev, "%d", device);
    const char *argv[] = { worker, "--probe", "--device", dev, NULL };
    proc_opts po = { .argv = argv, .timeout_s = 60, .max_output = 1u << 20 };
    proc_result r;
    proc_result_init(&r);
    json_t *facts = NULL;
    if (proc_run(&po, &r) < 0) {
        strbuf_addf(err, "%s", r.err.buf);
    } else {
        facts = json_loads(r.out.buf, 0, NULL);
        if (!facts || !json_is_true(json_object_get(facts, "ok"))) {
            const char *why = facts ? json_string_value(json_object_get(facts, "error")) : NULL;
            strbuf_addf(err, "no usable CUDA GPU (%s); check nvidia-smi and the driver",
                        why ? why : (r.timed_out ? "the probe hung" : "the probe failed"));
            json_decref(facts);
            facts = NULL;
        }
    }
    proc_result_release(&r);
    return facts;
}

/* The GPU's facts from the probe: the table entry, else estimated from its clocks. */
static void facts_of(json_t *probe, gpu_facts *g)
{
    int major = 9, minor = 0;
    sscanf(json_string_value(json_object_get(probe, "cc")) ?: "9.0", "%d.%d", &major, &minor);
    gpu_facts_for(g, json_string_value(json_object_get(probe, "name")) ?: "unknown GPU", major,
                  minor, (int)json_integer_value(json_object_get(probe, "sms")),
                  (double)json_integer_value(json_object_get(probe, "sm_clock_khz")),
                  (double)json_integer_value(json_object_get(probe, "mem_clock_khz")),
                  (int)json_integer_value(json_object_get(probe, "bus_width_bits")),
                  (size_t)json_integer_value(json_object_get(probe, "l2_bytes")));
}

/* The data type class the task computes in: that of its first floating output. */
static gpu_dtype task_dtype(json_t *spec)
{
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(spec, "outputs"), i, o) {
        int dt = gpu_dtype_parse(json_string_value(json_object_get(o, "dtype")) ?: "");
        if (dt >= 0)
            return (gpu_dtype)dt;
    }
    return GPU_DT_FP32;
}

/* Speed of light of the task on this GPU, and a flag when the kernel beats the bound
 * that nothing can beat (a measurement or integrity problem, not a triumph). */
static void add_speed_of_light(struct eval_ctx *c)
{
    gpu_facts g;
    facts_of(c->gpu, &g);
    double flops = json_number_value(json_object_get(c->spec, "flops"));
    double bytes = json_number_value(json_object_get(c->spec, "min_bytes"));
    gpu_dtype dt = task_dtype(c->spec);
    double sol_ms = gpu_sol_seconds(&g, flops, bytes, dt) * 1e3;
    double floor_ms = gpu_lower_bound_seconds(&g, flops, bytes, dt) * 1e3;
    json_t *sol = json_pack("{s:f, s:f, s:s, s:s, s:b}", "sol_ms", sol_ms, "lower_bound_ms",
                            floor_ms, "dtype", gpu_dtype_name(dt), "bound",
                            bytes / gpu_sol_bandwidth(&g) >= flops / gpu_peak_flops(&g, dt, true)
                                ? "memory" : "compute", "gpu_from_table", !g.generic);
    double k = json_number_value(json_object_get(json_object_get(c->report, "kernel_time"),
                                                 "median_ms"));
    if (k > 0) {
        json_object_set_new(sol, "fraction", json_real(sol_ms / k));
        if (k < floor_ms * 0.95) {
            char msg[256];
            snprintf(msg, sizeof msg, "suspect: %.4f ms is below the %.4f ms no kernel can beat "
                     "on this GPU (minimum bytes at datasheet bandwidth, FLOPs at peak)", k,
                     floor_ms);
            json_object_set_new(c->report, "suspect", json_string(msg));
        }
    }
    json_object_set_new(c->report, "speed_of_light", sol);
}

/* ------------------------------------------------------------------ reference process */

static int ref_start(struct eval_ctx *c, strbuf *err)
{
    const char *python = c->o->python ? c->o->python : getenv("CUTEGEN_PYTHON");
    if (!python || !*python)
        python = "python3";
    char *script = xasprintf("%s/python/cutegen_ref.py", cg_source_dir());
    char *log = xasprintf("%s/reference.log", c->work_dir);
    char dev[16];
    snprintf(dev, sizeof dev, "%d", c->o->device);
    const char *argv[] = { python, "-u", script, "--task", c->o->task_path, "--device", dev, NULL };
    static const char *const env[] = { "PYTHONUNBUFFERED=1", "PYTHONDONTWRITEBYTECODE=1", NULL };
    int rc = peer_start(&c->ref, "the reference process", argv, env, log, err);
    if (rc < 0)
        strbuf_adds(err, "; install python3 with PyTorch, or set CUTEGEN_PYTHON");
    free(script);
    free(log);
    return rc < 0 ? EXIT_NO_TORCH : 0;
}

/* Reads the reference process's first line: ready, or why it cannot start. */
static int ref_wait_ready(struct eval_ctx *c, strbuf *err)
{
    enum peer_failure why;
    double t0 = now_seconds();
    json_t *hello = peer_read(&c->ref, c->o->ref_timeout_s, &why, err);
    add_seconds(c, "reference_start", now_seconds() - t0);
    if (!hello)
        return EXIT_BAD_TASK;
    const char *event = json_string_value(json_object_get(hello, "event"));
    if (event && strcmp(event, "ready") == 0) {
        c->ready = hello;
        return 0;
    }
    const char *kind = json_string_value(json_object_get(hello, "kind"));
    const char *msg = json_string_value(json_object_get(hello, "message"));
    strbuf_addf(err, "%s", msg ? msg : "the reference process could not start");
    int code = EXIT_BAD_TASK;
    if (kind && strcmp(kind, "no_torch") == 0)
        code = EXIT_NO_TORCH;
    else if (kind && strcmp(kind, "no_gpu") == 0)
        code = EXIT_NO_GPU;
    json_decref(hello);
    return code;
}

/* Stops the reference process; the session starts a new one when it needs one. */
static void ref_retire(struct eval_ctx *c)
{
    if (c->ref.started)
        peer_stop(&c->ref, 10);
    c->ref_retired = true;
}

/* Starts a new reference process in place of a retired one, without waiting for it
 * (importing torch then overlaps whatever comes next, a build usually). */
static int ref_revive(struct eval_ctx *c, strbuf *err)
{
    if (!c->ref_retired)
        return 0;
    progress("starting a new reference process (the last one ran a final timing)");
    json_decref(c->ready);
    c->ready = NULL;
    int rc = ref_start(c, err);
    if (!rc)
        c->ref_retired = false;
    return rc;
}

/* The reference process up and ready: 0, or an EXIT_* code with err set. */
static int ref_ensure(struct eval_ctx *c, strbuf *err)
{
    int rc = ref_revive(c, err);
    if (!rc && !c->ready)
        rc = ref_wait_ready(c, err);
    return rc;
}

/* One request to the reference process; NULL with err set (its failure is fatal). */
static json_t *ref_call(struct eval_ctx *c, json_t *req, double timeout, strbuf *err)
{
    enum peer_failure why;
    json_t *reply = peer_call(&c->ref, req, timeout, &why, err);
    if (!reply)
        return NULL;
    if (!json_is_true(json_object_get(reply, "ok"))) {
        const char *e = json_string_value(json_object_get(reply, "error"));
        const char *tb = json_string_value(json_object_get(reply, "traceback"));
        strbuf_addf(err, "the reference failed: %s", e ? e : "unknown error");
        if (tb)
            strbuf_addf(err, "\n%s", tb);
        json_decref(reply);
        return NULL;
    }
    return reply;
}

static char *cache_key(struct eval_ctx *c, const char *what)
{
    strbuf src = STRBUF_INIT;
    if (read_file(c->o->task_path, &src, 64u << 20) < 0)
        return NULL;
    const char *torch = json_string_value(json_object_get(c->ready, "torch"));
    json_t *g = json_object_get(c->ready, "gpu");
    const char *gpu = json_string_value(json_object_get(g, "name"));
    /* spec-format: bump when python/cutegen_ref.py's answers change shape (2: graph nodes
     * of modules carry module_attrs), so that cached answers from before are not reused */
    strbuf_addf(&src, "\n--cutegen %s spec-format=2 torch=%s gpu=%s %s", CUTEGEN_VERSION, torch ? torch : "",
                gpu ? gpu : "", what);
    char hex[65];
    sha256_hex(src.buf, src.len, hex);
    strbuf_release(&src);
    return xasprintf("%s/tasks/%.24s-%s.json", cg_cache_dir(), hex, what);
}

/* Cached JSON, or the reference's answer to req (stored for next time). */
static json_t *cached_call(struct eval_ctx *c, const char *what, json_t *req, strbuf *err)
{
    char *path = cache_key(c, what);
    if (path && c->o->use_cache) {
        json_t *hit = json_load_file(path, 0, NULL);
        if (hit) {
            json_decref(req);
            json_object_set_new(hit, "cached", json_true());
            free(path);
            return hit;
        }
    }
    json_t *reply = ref_call(c, req, c->o->ref_timeout_s, err);
    if (reply && path) {
        char *dir = xasprintf("%s/tasks", cg_cache_dir());
        char *text = json_dumps(reply, JSON_INDENT(1));
        if (mkdir_p(dir, 0755) < 0 || write_file_atomic(path, text, strlen(text)) < 0)
            warning("cannot write the cache file '%s': %s", path, strerror(errno));
        free(text);
        free(dir);
    }
    free(path);
    return reply;
}

/* ------------------------------------------------------------------ worker */

static int worker_start(struct eval_ctx *c, const char *so, strbuf *err)
{
    char *log = xasprintf("%s/worker.log", c->cand_dir ? c->cand_dir : c->work_dir);
    char dev[16];
    snprintf(dev, sizeof dev, "%d", c->o->device);
    const char *argv[] = { c->worker, "--so", so, "--device", dev, NULL };
    int rc = peer_start(&c->worker_peer, "the worker", argv, NULL, log, err);
    free(log);
    if (rc < 0)
        return -1;
    c->worker_up = true;
    return 0;
}

/* The worker's hello: ready, or a load failure that decides the verdict. */
static bool worker_ready(struct eval_ctx *c)
{
    enum peer_failure why;
    strbuf err = STRBUF_INIT;
    json_t *hello = peer_read(&c->worker_peer, c->o->call_timeout_s, &why, &err);
    bool ok = false;
    if (!hello) {
        set_verdict(c, why == PEER_TIMEOUT ? VERDICT_TIMEOUT : VERDICT_RUNTIME_ERROR, err.buf);
    } else if (strcmp(json_string_value(json_object_get(hello, "event")) ?: "", "ready") == 0) {
        ok = true;
    } else {
        const char *msg = json_string_value(json_object_get(hello, "message"));
        strbuf_reset(&err);
        strbuf_addf(&err, "the kernel's shared object does not load: %s", msg ? msg : "?");
        set_verdict(c, VERDICT_COMPILE_ERROR, err.buf);
    }
    json_decref(hello);
    strbuf_release(&err);
    return ok;
}

static const char *status_name(int status)
{
    switch (status) {
    case 1: return "CG_UNSUPPORTED: the kernel does not handle these shapes or dtypes";
    case 2: return "CG_LAUNCH_FAILED";
    case 3: return "CG_BAD_WORKSPACE";
    default: return "an unknown status";
    }
}

/*
 * Sends one request to the worker. Returns the reply when the candidate ran and
 * returned 0; otherwise sets the verdict (timeout, runtime_error) and returns NULL.
 */
static json_t *worker_call(struct eval_ctx *c, json_t *req, double timeout, const char *phase)
{
    enum peer_failure why;
    strbuf err = STRBUF_INIT;
    json_t *reply = peer_call(&c->worker_peer, req, timeout, &why, &err);
    strbuf msg = STRBUF_INIT;
    if (!reply) {
        if (why == PEER_TIMEOUT) {
            strbuf_addf(&msg, "%s: the kernel did not finish within %.0f s (a hang, or far too "
                        "slow); the worker was killed", phase, timeout);
            set_verdict(c, VERDICT_TIMEOUT, msg.buf);
        } else {
            strbuf_addf(&msg, "%s: %s", phase, err.buf);
            set_verdict(c, VERDICT_RUNTIME_ERROR, msg.buf);
        }
        c->worker_up = false;
        goto out;
    }
    const char *cuda_error = json_string_value(json_object_get(reply, "cuda_error"));
    int status = (int)json_integer_value(json_object_get(reply, "status"));
    if (!json_is_true(json_object_get(reply, "ok"))) {
        const char *e = json_string_value(json_object_get(reply, "error"));
        strbuf_addf(&msg, "%s: the worker could not run the kernel: %s", phase, e ? e : "?");
        set_verdict(c, VERDICT_RUNTIME_ERROR, msg.buf);
    } else if (cuda_error) {
        const char *text = json_string_value(json_object_get(reply, "cuda_message"));
        strbuf_addf(&msg, "%s: CUDA error %s (%s) %s", phase, cuda_error, text ? text : "",
                    json_string_value(json_object_get(reply, "where")) ?: "");
        set_verdict(c, VERDICT_RUNTIME_ERROR, msg.buf);
        c->worker_up = false;
    } else if (status != 0) {
        strbuf_addf(&msg, "%s: cg_forward returned %d (%s)", phase, status, status_name(status));
        set_verdict(c, VERDICT_RUNTIME_ERROR, msg.buf);
    } else {
        strbuf_release(&err);
        strbuf_release(&msg);
        return reply;
    }
    json_decref(reply);
    reply = NULL;
out:
    strbuf_release(&err);
    strbuf_release(&msg);
    return NULL;
}

/* ------------------------------------------------------------------ trials */

static json_t *trial_request(const char *op, int id, uint64_t seed)
{
    return json_pack("{s:s, s:i, s:I}", "op", op, "id", id, "seed", (json_int_t)seed);
}

static json_t *check_request(struct eval_ctx *c, int id)
{
    json_t *req = json_pack("{s:s, s:i}", "op", "check", "id", id);
    if (c->o->atol >= 0)
        json_object_set_new(req, "atol", json_real(c->o->atol));
    if (c->o->rtol >= 0)
        json_object_set_new(req, "rtol", json_real(c->o->rtol));
    return req;
}

static void free_trial(struct eval_ctx *c, int id)
{
    strbuf err = STRBUF_INIT;
    json_t *r = ref_call(c, json_pack("{s:s, s:i}", "op", "free", "id", id), 120, &err);
    json_decref(r);
    strbuf_release(&err);
}

/*
 * Correctness: each trial gets a fresh seed (new inputs and parameters), freshly
 * poisoned outputs, one call, a comparison and an input check. Returns 1 when all
 * passed, 0 when a verdict was set, or an EXIT_* code when the reference failed.
 */
static int run_trials(struct eval_ctx *c, strbuf *err)
{
    json_t *trials = json_array();
    json_object_set_new(c->report, "trials", trials);
    int failed = 0;
    strbuf first_msg = STRBUF_INIT;
    bool modified = false;
    for (int i = 0; i < c->o->trials; i++) {
        uint64_t seed = c->seed + (uint64_t)i;
        json_t *made = ref_call(c, trial_request("trial", i, seed), c->o->ref_timeout_s, err);
        if (!made) {
            strbuf_release(&first_msg);
            return EXIT_BAD_TASK;
        }
        progress("trial %d/%d (seed %llu)", i + 1, c->o->trials, (unsigned long long)seed);
        json_t *req = json_pack("{s:s, s:O}", "op", "run", "tensors",
                                json_object_get(made, "tensors"));
        json_decref(made);
        char phase[64];
        snprintf(phase, sizeof phase, "trial %d (seed %llu)", i + 1, (unsigned long long)seed);
        json_t *ran = worker_call(c, req, c->o->call_timeout_s, phase);
        if (!ran) {
            free_trial(c, i);
            strbuf_release(&first_msg);
            return 0;
        }
        json_t *checked = ref_call(c, check_request(c, i), c->o->ref_timeout_s, err);
        if (!checked) {
            json_decref(ran);
            strbuf_release(&first_msg);
            return EXIT_BAD_TASK;
        }
        bool pass = json_is_true(json_object_get(checked, "pass"));
        json_t *entry = json_pack("{s:I, s:b, s:O, s:O, s:O}", "seed", (json_int_t)seed, "pass",
                                  pass, "outputs", json_object_get(checked, "outputs"),
                                  "modified_inputs", json_object_get(checked, "modified_inputs"),
                                  "wall_ms", json_object_get(ran, "wall_ms"));
        if (!pass) {
            const char *m = json_string_value(json_object_get(checked, "message"));
            json_object_set_new(entry, "message", json_string(m ? m : ""));
            if (json_array_size(json_object_get(checked, "modified_inputs")))
                modified = true;
            if (!failed++)
                strbuf_addf(&first_msg, "trial %d (seed %llu): %s", i + 1,
                            (unsigned long long)seed, m ? m : "");
        }
        json_array_append_new(trials, entry);
        json_decref(ran);
        json_decref(checked);
    }
    if (failed) {
        strbuf msg = STRBUF_INIT;
        strbuf_addf(&msg, "%d of %d trials failed; %s", failed, c->o->trials, first_msg.buf);
        set_verdict(c, modified ? VERDICT_REJECTED : VERDICT_WRONG_RESULT, msg.buf);
        strbuf_release(&msg);
    }
    strbuf_release(&first_msg);
    return failed ? 0 : 1;
}

static int flush_bytes_for(struct eval_ctx *c)
{
    json_int_t l2 = json_integer_value(json_object_get(c->gpu, "l2_bytes"));
    json_int_t bytes = 4 * l2;
    return (int)(bytes > (128 << 20) ? bytes : (128 << 20));
}

static json_t *summary_of(json_t *times)
{
    size_t n = json_array_size(times);
    if (!n)
        return json_object();
    double *v = xcalloc(n, sizeof(double));
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = json_real_value(json_array_get(times, i));
        sum += v[i];
    }
    for (size_t i = 1; i < n; i++) /* insertion sort: n is small */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    double mean = sum / (double)n, var = 0;
    for (size_t i = 0; i < n; i++)
        var += (v[i] - mean) * (v[i] - mean);
    double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    json_t *s = json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "n", (int)n, "mean_ms", mean,
                          "median_ms", median, "min_ms", v[0], "max_ms", v[n - 1], "std_ms",
                          sqrt(var / (double)n));
    free(v);
    return s;
}

/*
 * Timing on one more fresh trial. Outputs are re-poisoned before every timed call and
 * checked after the last one: a kernel that skips work on repeated calls is caught.
 * Host time around each call (with a device-wide sync) against event time on the
 * given stream catches work that escapes the stream.
 */
static int run_timing(struct eval_ctx *c, strbuf *err)
{
    int id = 1000;
    uint64_t seed = c->seed + 1000;
    json_t *made = ref_call(c, trial_request("trial", id, seed), c->o->ref_timeout_s, err);
    if (!made)
        return EXIT_BAD_TASK;
    progress("timing: %d warm-ups, %d timed calls", c->o->warmup, c->o->iters);
    json_t *req = json_pack("{s:s, s:O, s:i, s:i, s:i}", "op", "time", "tensors",
                            json_object_get(made, "tensors"), "warmup", c->o->warmup, "iters",
                            c->o->iters, "flush_bytes", flush_bytes_for(c));
    json_decref(made);
    double timeout = c->o->call_timeout_s * 5 > 300 ? c->o->call_timeout_s * 5 : 300;
    json_t *timed = worker_call(c, req, timeout, "timing");
    if (!timed) {
        free_trial(c, id);
        return 0;
    }
    json_t *checked = ref_call(c, check_request(c, id), c->o->ref_timeout_s, err);
    if (!checked) {
        json_decref(timed);
        return EXIT_BAD_TASK;
    }
    json_t *summary = summary_of(json_object_get(timed, "times_ms"));
    json_t *wall = summary_of(json_object_get(timed, "wall_ms"));
    json_t *tail = summary_of(json_object_get(timed, "tail_ms"));
    json_object_set_new(c->report, "kernel_time", summary);
    json_object_set_new(c->report, "kernel_wall_time", wall);
    json_object_set_new(c->report, "kernel_tail_time", tail);
    double ev = json_real_value(json_object_get(summary, "median_ms"));
    double tl = json_real_value(json_object_get(tail, "median_ms"));
    int result = 1;
    if (!json_is_true(json_object_get(checked, "pass"))) {
        strbuf msg = STRBUF_INIT;
        const char *m = json_string_value(json_object_get(checked, "message"));
        strbuf_addf(&msg, "the output of the last timed call is wrong although every trial "
                    "passed: the kernel keeps results or state from earlier calls (%s)", m ?: "");
        set_verdict(c, VERDICT_REJECTED, msg.buf);
        strbuf_release(&msg);
        result = 0;
    } else if (tl > ev * 0.25 + 0.05) {
        strbuf msg = STRBUF_INIT;
        strbuf_addf(&msg, "work escapes the timed stream: the device was still busy %.4f ms "
                    "after the end event of a %.4f ms call on the given stream; launch "
                    "everything on the stream cg_forward receives, or join other streams "
                    "back to it", tl, ev);
        set_verdict(c, VERDICT_REJECTED, msg.buf);
        strbuf_release(&msg);
        result = 0;
    }
    json_decref(timed);
    json_decref(checked);
    return result;
}

/* ------------------------------------------------------------------ baselines */

static int run_baseline(struct eval_ctx *c, strbuf *err)
{
    progress("timing PyTorch eager%s", c->o->baseline_compile ? " and torch.compile" : "");
    char what[64];
    snprintf(what, sizeof what, "baseline-w%d-i%d%s", c->o->warmup, c->o->iters,
             c->o->baseline_compile ? "-compile" : "");
    json_t *req = json_pack("{s:s, s:i, s:i, s:b, s:i}", "op", "baseline", "warmup",
                            c->o->warmup, "iters", c->o->iters, "compile",
                            c->o->baseline_compile, "seed", 4242);
    json_t *b = c->baseline;
    if (b)
        json_decref(req);
    else if (!(b = c->baseline = cached_call(c, what, req, err)))
        return EXIT_BAD_TASK;
    json_object_set(c->report, "baseline", b);
    json_t *kt = json_object_get(c->report, "kernel_time");
    double k = json_real_value(json_object_get(kt, "median_ms"));
    json_t *speed = json_object();
    const char *names[] = { "eager", "compile" };
    for (int i = 0; i < 2; i++) {
        json_t *t = json_object_get(b, names[i]);
        double m = json_real_value(json_object_get(t, "median_ms"));
        if (t && k > 0 && m > 0)
            json_object_set_new(speed, names[i], json_real(m / k));
    }
    json_object_set_new(c->report, "speedup", speed);
    return 0;
}

/* ------------------------------------------------------------------ the pipeline */

static int prepare(struct eval_ctx *c, strbuf *err)
{
    if (c->o->kernel_path && !file_exists(c->o->kernel_path)) {
        strbuf_addf(err, "kernel file '%s' does not exist", c->o->kernel_path);
        return EXIT_BAD_KERNEL;
    }
    if (!file_exists(c->o->task_path)) {
        strbuf_addf(err, "problem file '%s' does not exist", c->o->task_path);
        return EXIT_BAD_TASK;
    }
    c->worker = eval_find_worker(c->o->worker);
    if (!c->worker) {
        strbuf_adds(err, "cutegen-worker not found next to cutegen or in PATH (it is built only "
                         "when CMake finds the CUDA toolkit: rerun scripts/setup.sh with nvcc "
                         "installed, or set CUTEGEN_WORKER)");
        return EXIT_NO_TOOL;
    }
    c->gpu = eval_probe_gpu(c->worker, c->o->device, err);
    if (!c->gpu)
        return EXIT_NO_GPU;
    if (c->o->work_dir) {
        c->work_dir = xstrdup(c->o->work_dir);
    } else {
        char stamp[32];
        time_t now = time(NULL);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
        c->work_dir = xasprintf("%s/evals/%s-%d", cg_cache_dir(), stamp, (int)getpid());
    }
    if (mkdir_p(c->work_dir, 0755) < 0) {
        strbuf_addf(err, "cannot create '%s': %s", c->work_dir, strerror(errno));
        return EXIT_INTERNAL;
    }
    return 0;
}

/* The build configuration of this session: the same for every build, so that a
 * prebuild (eval_session_prebuild) and the build of a judgement share cache entries. */
struct build_setup {
    strbuf cutlass, cver, nvcc, nver;
    char *abi, *cache;
    char archbuf[16];
    build_config cfg;
};

static void build_setup_release(struct build_setup *b)
{
    strbuf_release(&b->cutlass);
    strbuf_release(&b->cver);
    strbuf_release(&b->nvcc);
    strbuf_release(&b->nver);
    free(b->abi);
    free(b->cache);
}

static int build_setup_init(struct eval_ctx *c, struct build_setup *b, strbuf *err)
{
    memset(b, 0, sizeof *b);
    strbuf how = STRBUF_INIT;
    int rc = 0;
    if (cutlass_locate(c->o->cutlass_dir, &b->cutlass, &b->cver, &how) < 0)
        rc = EXIT_NO_CUTLASS;
    else if (strbuf_reset(&how), nvcc_locate(&b->nvcc, &b->nver, &how) < 0)
        rc = EXIT_NO_TOOL;
    if (rc) {
        strbuf_addf(err, "%s", how.buf);
        strbuf_release(&how);
        return rc;
    }
    strbuf_release(&how);
    const char *arch = c->o->arch ? c->o->arch
                                  : eval_arch_for_cc(json_string_value(json_object_get(c->gpu, "cc"))
                                                         ?: "9.0", b->archbuf);
    b->abi = xasprintf("%s/include", cg_source_dir());
    b->cache = xasprintf("%s/builds", cg_cache_dir());
    const char *mode = c->o->build_mode ? c->o->build_mode : getenv("CUTEGEN_BUILD_MODE");
    b->cfg = (build_config){ .nvcc = b->nvcc.buf, .cutlass_include = b->cutlass.buf,
                             .arch = arch, .cache_dir = b->cache, .abi_include = b->abi,
                             .timeout_s = c->o->build_timeout_s, .jobs = 1,
                             .mode = mode && *mode ? mode : NULL };
    return 0;
}

static int build_candidate(struct eval_ctx *c, build_result *br, strbuf *err)
{
    struct build_setup b;
    int rc = build_setup_init(c, &b, err);
    if (rc) {
        build_setup_release(&b);
        return rc;
    }
    progress("building %s for %s", c->kernel, b.cfg.arch);
    double t0 = now_seconds();
    rc = build_kernel(&b.cfg, c->kernel, br);
    add_seconds(c, "build", now_seconds() - t0);
    json_object_set_new(c->report, "build",
                        json_pack("{s:s, s:s, s:b, s:f, s:s, s:s?, s:s?, s:s, s:s?}", "status",
                                  build_status_name(br->status), "hash", br->hash, "cached",
                                  br->cached, "seconds", br->seconds, "arch", b.cfg.arch, "so",
                                  br->so_path, "log", br->log_path, "cutlass", b.cver.buf,
                                  "mode", br->mode));
    int result = 0;
    if (rc < 0 || br->status == BUILD_TOOL_ERROR) {
        strbuf_addf(err, "the build could not run: %s", br->digest.buf);
        result = EXIT_NO_TOOL;
    }
    build_setup_release(&b);
    return result;
}

char *eval_session_structure(eval_session *c, const char *source_path)
{
    struct build_setup b;
    strbuf err = STRBUF_INIT, gencode = STRBUF_INIT;
    char *hash = NULL;
    if (build_setup_init(c, &b, &err) == 0 && build_gencode(b.cfg.arch, &gencode) == 0) {
        char *inc_abi = xasprintf("-I%s", b.abi);
        char *inc_cut = xasprintf("-I%s", b.cutlass.buf);
        const char *flags[] = { gencode.buf, "-std=c++17", "--expt-relaxed-constexpr", inc_abi,
                                inc_cut, "-include", "cutegen/abi.h", NULL };
        fingerprint fp;
        fingerprint_init(&fp);
        if (fingerprint_compile(b.cfg.nvcc, flags, source_path, b.cfg.timeout_s, &fp, &err) == 0)
            hash = xstrdup(fp.hash);
        fingerprint_release(&fp);
        free(inc_abi);
        free(inc_cut);
    }
    build_setup_release(&b);
    if (!hash)
        warning("no structure fingerprint for '%s': %s", source_path, err.buf);
    strbuf_release(&err);
    strbuf_release(&gencode);
    return hash;
}

int eval_session_prebuild(eval_session *c, const char *const *sources, int n, strbuf *err)
{
    if (n <= 0)
        return 0;
    struct build_setup b;
    int rc = build_setup_init(c, &b, err);
    if (!rc) {
        b.cfg.jobs = 0; /* all CPUs */
        build_result *results = xcalloc((size_t)n, sizeof *results);
        for (int i = 0; i < n; i++)
            build_result_init(&results[i]);
        progress("building %d kernels in parallel", n);
        build_many(&b.cfg, sources, n, results);
        for (int i = 0; i < n; i++)
            build_result_release(&results[i]);
        free(results);
    }
    build_setup_release(&b);
    return rc;
}

/* Build → verdict when the build or the static checks fail. Returns 1 to go on. */
static int judge_build(struct eval_ctx *c, build_result *br, strbuf *err)
{
    if (br->status == BUILD_COMPILE_ERROR) {
        strbuf why = STRBUF_INIT, log = STRBUF_INIT;
        if (br->log_path)
            read_file(br->log_path, &log, 64u << 20);
        strbuf_add(&log, br->digest.buf, br->digest.len);
        if (integrity_check_link_log(log.buf, &why) == INTEGRITY_REJECTED)
            set_verdict(c, VERDICT_REJECTED, why.buf);
        else
            set_verdict(c, VERDICT_COMPILE_ERROR, br->digest.buf);
        strbuf_release(&why);
        strbuf_release(&log);
        return 0;
    }
    if (br->status == BUILD_TIMEOUT) {
        set_verdict(c, VERDICT_TIMEOUT, br->digest.len ? br->digest.buf : "the build timed out");
        return 0;
    }
    strbuf why = STRBUF_INIT;
    enum integrity_result ir = integrity_check_object(br->so_path, &why);
    int go_on = 1;
    if (ir == INTEGRITY_REJECTED) {
        set_verdict(c, VERDICT_REJECTED, why.buf);
        go_on = 0;
    } else if (ir == INTEGRITY_NO_ENTRY) {
        set_verdict(c, VERDICT_COMPILE_ERROR, why.buf);
        json_object_set_new(c->report, "no_entry_point", json_true());
        go_on = 0;
    } else if (ir == INTEGRITY_TOOL_ERROR) {
        strbuf_addf(err, "%s", why.buf);
        go_on = -EXIT_NO_TOOL;
    }
    strbuf_release(&why);
    return go_on;
}

/* The task and torch's version into the report. */
static void report_task(struct eval_ctx *c)
{
    json_t *task = json_pack("{s:s, s:O, s:O, s:O, s:O}", "problem", c->o->task_path, "inputs",
                             json_object_get(c->spec, "inputs"), "outputs",
                             json_object_get(c->spec, "outputs"), "flops",
                             json_object_get(c->spec, "flops"), "min_bytes",
                             json_object_get(c->spec, "min_bytes"));
    json_object_set_new(c->report, "task", task);
    json_object_set_new(c->report, "torch", json_incref(json_object_get(c->ready, "torch")));
}

static int get_spec(struct eval_ctx *c, strbuf *err)
{
    double t0 = now_seconds();
    json_t *reply = cached_call(c, "spec", json_pack("{s:s, s:i}", "op", "spec", "seed", 42), err);
    add_seconds(c, "spec", now_seconds() - t0);
    if (!reply)
        return EXIT_BAD_TASK;
    c->spec = json_incref(json_object_get(reply, "spec"));
    json_decref(reply);
    report_task(c);
    return 0;
}

/* Judges c->kernel with the session's reference process (started, maybe not ready). */
static int judge_candidate(struct eval_ctx *c, strbuf *err)
{
    if (!file_exists(c->kernel)) {
        strbuf_addf(err, "kernel file '%s' does not exist", c->kernel);
        return EXIT_BAD_KERNEL;
    }
    json_object_set(c->report, "gpu", c->gpu);
    json_object_set_new(c->report, "work_dir", json_string(c->cand_dir));
    int rc = ref_revive(c, err);
    if (rc)
        return rc;
    build_result br;
    build_result_init(&br);
    rc = build_candidate(c, &br, err);
    int go_on = rc ? 0 : judge_build(c, &br, err);
    if (go_on < 0)
        rc = -go_on;
    if (rc || !go_on) {
        build_result_release(&br);
        return rc;
    }
    if (!(rc = ref_ensure(c, err))) {
        /* From here on the GPU is used: hold its lane (lane.h) until the judgement ends. */
        lane_gpu_acquire(c->o->device);
        c->lane_held = true;
        if (!c->spec)
            rc = get_spec(c, err);
    }
    if (rc) {
        build_result_release(&br);
        return rc;
    }
    report_task(c);
    if (worker_start(c, br.so_path, err) < 0) {
        build_result_release(&br);
        return EXIT_INTERNAL;
    }
    build_result_release(&br);
    if (!worker_ready(c))
        return 0;
    double t0 = now_seconds();
    rc = run_trials(c, err);
    add_seconds(c, "trials", now_seconds() - t0);
    if (rc != 1)
        return rc;
    if (c->o->time_kernel) {
        t0 = now_seconds();
        rc = run_timing(c, err);
        add_seconds(c, "timing", now_seconds() - t0);
        if (rc != 1)
            return rc;
    }
    set_verdict(c, VERDICT_OK, "correct on every trial");
    add_speed_of_light(c);
    if (c->o->time_kernel && c->o->baseline) {
        t0 = now_seconds();
        rc = run_baseline(c, err);
        add_seconds(c, "baseline", now_seconds() - t0);
        if (rc)
            return rc;
    }
    return 0;
}

int eval_session_open(const eval_opts *o, eval_session **out, strbuf *err)
{
    struct eval_ctx *c = xcalloc(1, sizeof *c);
    c->o = o;
    c->report = json_object();
    c->seconds = json_object();
    *out = c;
    double t0 = now_seconds();
    int rc = prepare(c, err);
    if (!rc)
        rc = ref_start(c, err);
    add_seconds(c, "session_start", now_seconds() - t0);
    return rc;
}

/* A fresh report, seed and directory for the next candidate of a session. */
static int begin_candidate(eval_session *c, const char *kernel_path, const char *cand_dir,
                           strbuf *err)
{
    json_decref(c->report);
    json_decref(c->seconds);
    c->report = json_object();
    c->seconds = json_object();
    c->kernel = kernel_path;
    free(c->cand_dir);
    c->cand_dir = xstrdup(cand_dir ? cand_dir : c->work_dir);
    c->seed = c->o->seed ? c->o->seed : random_seed();
    json_object_set_new(c->report, "kernel", json_string(kernel_path));
    json_object_set_new(c->report, "seed", json_integer((json_int_t)c->seed));
    json_object_set(c->report, "seconds", c->seconds);
    if (mkdir_p(c->cand_dir, 0755) < 0) {
        strbuf_addf(err, "cannot create '%s': %s", c->cand_dir, strerror(errno));
        return EXIT_INTERNAL;
    }
    return 0;
}

int eval_session_judge(eval_session *c, const char *kernel_path, const char *cand_dir,
                       json_t **report, strbuf *err)
{
    int rc = begin_candidate(c, kernel_path, cand_dir, err);
    if (rc) {
        *report = json_incref(c->report);
        return rc;
    }
    double t0 = now_seconds();
    rc = judge_candidate(c, err);
    if (c->worker_peer.started)
        peer_stop(&c->worker_peer, 5);
    c->worker_up = false;
    if (c->lane_held) {
        lane_gpu_release(c->o->device);
        c->lane_held = false;
    }
    add_seconds(c, "total", now_seconds() - t0);
    if (!rc) {
        char *path = xasprintf("%s/report.json", c->cand_dir);
        json_dump_file(c->report, path, JSON_INDENT(2));
        free(path);
    }
    *report = json_incref(c->report);
    return rc;
}

/* ------------------------------------------------------------------ final timing */

/* A number of a reply; the reference sends "inf" and "nan" as strings. NAN when absent. */
static double reply_num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (json_is_string(v))
        return strtod(json_string_value(v), NULL);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *final_request(struct eval_ctx *c, const char *so, const eval_final_opts *f)
{
    json_t *req = json_pack("{s:s, s:s, s:I, s:i, s:i, s:i, s:b}", "op", "final", "so", so,
                            "seed", (json_int_t)(c->seed + 2000), "warmup",
                            f->warmup >= 0 ? f->warmup : c->o->warmup, "iters",
                            f->iters > 0 ? f->iters : 1, "rounds", f->rounds > 0 ? f->rounds : 1,
                            "compile", f->compile && c->o->baseline_compile);
    if (c->o->atol >= 0)
        json_object_set_new(req, "atol", json_real(c->o->atol));
    if (c->o->rtol >= 0)
        json_object_set_new(req, "rtol", json_real(c->o->rtol));
    return req;
}

/*
 * The reference's answer to the final request, into the report. The candidate ran in
 * that process, so a process that died or hung, or a reply of kind "candidate", is the
 * kernel's failure (a verdict); a failure of the reference itself is an EXIT_* code.
 */
static int final_outcome(struct eval_ctx *c, json_t *reply, enum peer_failure why,
                         const char *peer_err, strbuf *err)
{
    strbuf msg = STRBUF_INIT;
    int rc = 0;
    if (!reply) {
        strbuf_addf(&msg, "final timing, in the reference process: %s", peer_err);
        set_verdict(c, why == PEER_TIMEOUT ? VERDICT_TIMEOUT : VERDICT_RUNTIME_ERROR, msg.buf);
        goto out;
    }
    const char *e = json_string_value(json_object_get(reply, "error"));
    if (!json_is_true(json_object_get(reply, "ok"))) {
        const char *kind = json_string_value(json_object_get(reply, "kind")) ?: "reference";
        if (!strcmp(kind, "candidate")) {
            strbuf_addf(&msg, "final timing, in the reference process: %s", e ? e : "?");
            set_verdict(c, VERDICT_RUNTIME_ERROR, msg.buf);
            goto out;
        }
        strbuf_addf(err, "the final timing failed in the reference process (%s): %s", kind,
                    e ? e : "unknown error");
        const char *tb = json_string_value(json_object_get(reply, "traceback"));
        if (tb)
            strbuf_addf(err, "\n%s", tb);
        rc = !strcmp(kind, "load") ? EXIT_NO_TOOL : EXIT_BAD_TASK;
        goto out;
    }
    json_t *inter = json_deep_copy(reply);
    json_object_del(inter, "ok");
    json_object_set_new(c->report, "interleaved", inter);
    if (!json_is_true(json_object_get(reply, "pass"))) {
        const char *phase = json_string_value(json_object_get(reply, "phase")) ?: "?";
        const char *m = json_string_value(json_object_get(reply, "message")) ?: "";
        bool last = !strcmp(phase, "last timed call");
        bool modified = json_array_size(json_object_get(reply, "modified_inputs")) > 0;
        if (last)
            strbuf_addf(&msg, "final timing: the output of the last timed call is wrong although "
                        "the first call's was right: the kernel keeps results or state from "
                        "earlier calls (%s)", m);
        else
            strbuf_addf(&msg, "final timing, %s (seed %lld): %s", phase,
                        (long long)json_integer_value(json_object_get(reply, "seed")), m);
        set_verdict(c, last || modified ? VERDICT_REJECTED : VERDICT_WRONG_RESULT, msg.buf);
        goto out;
    }
    json_object_set(c->report, "kernel_time", json_object_get(reply, "kernel"));
    json_t *base = json_pack("{s:O}", "eager", json_object_get(reply, "eager"));
    json_t *speed = json_object();
    static const char *const sides[] = { "eager", "compile" };
    for (int i = 0; i < 2; i++) {
        json_t *t = json_object_get(reply, sides[i]);
        if (t && i)
            json_object_set(base, sides[i], t);
        double x = reply_num(json_object_get(json_object_get(reply, "speedup"), sides[i]),
                             "median");
        if (t && isfinite(x))
            json_object_set_new(speed, sides[i], json_real(x));
    }
    json_t *ce = json_object_get(reply, "compile_error");
    if (ce)
        json_object_set(base, "compile_error", ce);
    json_object_set_new(c->report, "baseline", base);
    json_object_set_new(c->report, "speedup", speed);
    strbuf_addf(&msg, "verified: timed interleaved with PyTorch in the reference process, %lld "
                "rounds of %lld calls on each side",
                (long long)json_integer_value(json_object_get(reply, "rounds")),
                (long long)json_integer_value(json_object_get(reply, "iters")));
    set_verdict(c, VERDICT_OK, msg.buf);
    add_speed_of_light(c);
out:
    strbuf_release(&msg);
    return rc;
}

static int final_candidate(struct eval_ctx *c, const eval_final_opts *f, strbuf *err)
{
    json_object_set(c->report, "gpu", c->gpu);
    json_object_set_new(c->report, "timing", json_string("interleaved"));
    json_object_set_new(c->report, "work_dir", json_string(c->cand_dir));
    if (!file_exists(c->kernel)) {
        strbuf_addf(err, "kernel file '%s' does not exist", c->kernel);
        return EXIT_BAD_KERNEL;
    }
    int rc = ref_revive(c, err);
    if (rc)
        return rc;
    char *so = NULL;
    if (str_ends_with(c->kernel, ".so")) {
        so = realpath(c->kernel, NULL);
    } else {
        build_result br;
        build_result_init(&br);
        rc = build_candidate(c, &br, err);
        int go_on = rc ? 0 : judge_build(c, &br, err);
        if (go_on < 0)
            rc = -go_on;
        if (!rc && go_on)
            so = realpath(br.so_path, NULL);
        build_result_release(&br);
        if (rc || !go_on)
            return rc; /* a verdict (it no longer builds, or is refused), or a tool error */
    }
    if (!so) {
        strbuf_addf(err, "cannot resolve the path of the kernel's shared object: %s",
                    strerror(errno));
        return EXIT_INTERNAL;
    }
    if ((rc = ref_ensure(c, err)) || (!c->spec && (rc = get_spec(c, err)))) {
        free(so);
        return rc;
    }
    report_task(c);
    json_t *req = final_request(c, so, f);
    free(so);
    progress("final timing: the kernel and PyTorch interleaved in the reference process, "
             "%lld rounds of %lld calls each",
             (long long)json_integer_value(json_object_get(req, "rounds")),
             (long long)json_integer_value(json_object_get(req, "iters")));
    enum peer_failure why = PEER_OK;
    strbuf peer_err = STRBUF_INIT;
    double t0 = now_seconds();
    json_t *reply = peer_call(&c->ref, req, c->o->ref_timeout_s, &why, &peer_err);
    add_seconds(c, "final", now_seconds() - t0);
    ref_retire(c); /* candidate code is loaded in it, and it may have broken its context */
    rc = final_outcome(c, reply, why, peer_err.buf, err);
    json_decref(reply);
    strbuf_release(&peer_err);
    return rc;
}

int eval_session_final(eval_session *c, const char *kernel, const eval_final_opts *f,
                       json_t **report, strbuf *err)
{
    eval_final_opts defaults;
    if (!f) {
        eval_final_opts_init(&defaults);
        f = &defaults;
    }
    int rc = begin_candidate(c, kernel, f->dir, err);
    if (!rc) {
        double t0 = now_seconds();
        lane_gpu_acquire(c->o->device); /* the GPU's lane (lane.h): timing, nothing beside */
        rc = final_candidate(c, f, err);
        lane_gpu_release(c->o->device);
        add_seconds(c, "total", now_seconds() - t0);
    }
    if (!rc) {
        char *path = xasprintf("%s/final.json", c->cand_dir);
        json_dump_file(c->report, path, JSON_INDENT(2));
        free(path);
    }
    *report = json_incref(c->report);
    return rc;
}

void eval_final_describe(json_t *r, strbuf *out)
{
    const char *v = json_string_value(json_object_get(r, "verdict"));
    if (!v || strcmp(v, "ok")) {
        const char *m = json_string_value(json_object_get(r, "message"));
        strbuf_addf(out, "%s: %s", v ? v : "not judged", m ? m : "");
        return;
    }
    json_t *base = json_object_get(r, "baseline");
    json_t *speed = json_object_get(r, "speedup");
    strbuf_addf(out, "%.4f ms vs eager %.4f ms = %.2fx",
                reply_num(json_object_get(r, "kernel_time"), "median_ms"),
                reply_num(json_object_get(base, "eager"), "median_ms"), reply_num(speed, "eager"));
    if (json_object_get(speed, "compile"))
        strbuf_addf(out, ", vs compile %.4f ms = %.2fx",
                    reply_num(json_object_get(base, "compile"), "median_ms"),
                    reply_num(speed, "compile"));
    else if (json_object_get(base, "compile_error"))
        strbuf_adds(out, ", torch.compile failed");
    strbuf_addf(out, " (interleaved in one process, %lld rounds)",
                (long long)json_integer_value(json_object_get(json_object_get(r, "interleaved"),
                                                              "rounds")));
}

json_t *eval_session_spec(eval_session *c, strbuf *err)
{
    if (ref_ensure(c, err))
        return NULL;
    if (!c->spec) {
        lane_gpu_acquire(c->o->device);
        int rc = get_spec(c, err);
        lane_gpu_release(c->o->device);
        if (rc)
            return NULL;
    }
    return c->spec;
}

json_t *eval_session_gpu(eval_session *c)
{
    return c->gpu;
}

const char *eval_session_dir(eval_session *c)
{
    return c->work_dir;
}

void eval_session_close(eval_session *c)
{
    if (!c)
        return;
    if (c->worker_peer.started)
        peer_stop(&c->worker_peer, 5);
    if (c->ref.started)
        peer_stop(&c->ref, 10);
    json_decref(c->report);
    json_decref(c->seconds);
    json_decref(c->gpu);
    json_decref(c->ready);
    json_decref(c->spec);
    json_decref(c->baseline);
    free(c->work_dir);
    free(c->cand_dir);
    free(c->worker);
    free(c);
}

/*
 * eval_run's final timing, of the object the judgement just built and checked: its
 * report goes to report["final"]. A kernel that fails there takes that verdict; one the
 * final timing could not be done for keeps its own, with the reason in final.error.
 */
static void add_final(eval_session *s, const eval_opts *o, json_t *report)
{
    const char *so = json_string_value(json_object_get(json_object_get(report, "build"), "so"));
    json_t *fin = NULL;
    strbuf err = STRBUF_INIT;
    int rc = eval_session_final(s, so ? so : o->kernel_path, &o->final_opts, &fin, &err);
    if (rc) {
        warning("the final timing could not be done: %s", err.buf);
        json_object_set_new(fin, "error", json_string(err.buf));
        json_object_set_new(fin, "exit_code", json_integer(rc));
    }
    json_object_set(report, "final", fin);
    const char *v = json_string_value(json_object_get(fin, "verdict"));
    if (!rc && v && strcmp(v, "ok")) {
        json_object_set_new(report, "verdict", json_string(v));
        json_object_set(report, "message", json_object_get(fin, "message"));
    }
    const char *dir = json_string_value(json_object_get(report, "work_dir"));
    if (dir) {
        char *path = xasprintf("%s/report.json", dir);
        json_dump_file(report, path, JSON_INDENT(2));
        free(path);
    }
    json_decref(fin);
    strbuf_release(&err);
}

int eval_run(const eval_opts *o, json_t **report, strbuf *err)
{
    eval_session *s = NULL;
    int rc = eval_session_open(o, &s, err);
    if (rc) {
        json_object_set_new(s->report, "kernel", json_string(o->kernel_path));
        *report = json_incref(s->report);
    } else {
        rc = eval_session_judge(s, o->kernel_path, NULL, report, err);
        const char *v = json_string_value(json_object_get(*report, "verdict"));
        if (!rc && o->final && v && !strcmp(v, "ok"))
            add_final(s, o, *report);
    }
    eval_session_close(s);
    return rc;
}

/* ------------------------------------------------------------------ profiling */

void profile_opts_init(profile_opts *p)
{
    memset(p, 0, sizeof *p);
    p->warmup = 3;
    p->timeout_s = 600;
}

/* The request file the worker reads under ncu: one profiled run, then quit. */
static char *write_profile_requests(struct eval_ctx *c, json_t *tensors, int warmup)
{
    json_t *run = json_pack("{s:s, s:O, s:i, s:b}", "op", "run", "tensors", tensors, "warmup",
                            warmup, "profile", 1);
    char *line = json_dumps(run, JSON_COMPACT);
    json_decref(run);
    char *text = xasprintf("%s\n{\"op\":\"quit\"}\n", line);
    free(line);
    char *path = xasprintf("%s/profile-requests.jsonl", c->work_dir);
    int rc = write_file_atomic(path, text, strlen(text));
    free(text);
    if (rc < 0) {
        free(path);
        return NULL;
    }
    return path;
}

/* The worker's reply to the profiled run, found among ncu's own lines. */
static json_t *find_worker_reply(const char *log)
{
    json_t *found = NULL;
    const char *p = log;
    while ((p = strstr(p, "{\"ok\"")) != NULL) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        json_t *j = json_loadb(p, n, 0, NULL);
        if (j) {
            json_decref(found);
            found = j;
        }
        p += n;
    }
    return found;
}

/* Digest and fingerprint of a successful capture into the report. */
static void digest_capture(struct eval_ctx *c, ncu_capture *cap, const char *so, json_t *prof)
{
    strbuf err = STRBUF_INIT;
    ncu_table table = { 0 };
    ncu_details details = { 0 };
    if (ncu_table_parse(cap->raw_csv.buf, cap->raw_csv.len, &table, &err) < 0) {
        json_object_set_new(c->report, "profile_error", json_string(err.buf));
        strbuf_release(&err);
        return;
    }
    ncu_details_parse(cap->details.buf, &details, &err);
    gpu_facts g;
    facts_of(c->gpu, &g);
    digest_task task = { json_number_value(json_object_get(c->spec, "flops")),
                         json_number_value(json_object_get(c->spec, "min_bytes")),
                         task_dtype(c->spec) };
    profile_digest d;
    strbuf_reset(&err);
    if (profile_digest_build(&table, &details, &task, &g, &d, &err) == 0) {
        strbuf text = STRBUF_INIT;
        profile_digest_text(&d, 0, &text);
        json_object_set_new(prof, "digest", json_string(text.buf));
        json_object_set_new(prof, "kernels", profile_digest_json(&d));
        strbuf_release(&text);
        profile_digest_release(&d);
    } else {
        json_object_set_new(c->report, "profile_error", json_string(err.buf));
    }
    ncu_table_release(&table);
    ncu_details_release(&details);
    fingerprint fp;
    fingerprint_init(&fp);
    strbuf_reset(&err);
    if (fingerprint_from_so(NULL, so, NULL, 120, &fp, &err) == 0) {
        json_object_set_new(c->report, "fingerprint",
                            json_pack("{s:s, s:s}", "hash", fp.hash, "text", fp.text ?: ""));
    } else {
        json_object_set_new(c->report, "fingerprint_error", json_string(err.buf));
    }
    fingerprint_release(&fp);
    strbuf_release(&err);
}

/* Runs the worker under ncu on trial 0 and checks the output; sets the verdict. */
static int profile_trial(struct eval_ctx *c, const profile_opts *p, const char *so,
                         strbuf *details, strbuf *err)
{
    json_t *made = ref_call(c, trial_request("trial", 0, c->seed), c->o->ref_timeout_s, err);
    if (!made)
        return EXIT_BAD_TASK;
    char *requests = write_profile_requests(c, json_object_get(made, "tensors"), p->warmup);
    json_decref(made);
    if (!requests) {
        strbuf_addf(err, "cannot write the request file in '%s': %s", c->work_dir, strerror(errno));
        return EXIT_INTERNAL;
    }
    char dev[16];
    snprintf(dev, sizeof dev, "%d", c->o->device);
    const char *target[] = { c->worker, "--so", so, "--device", dev, "--requests", requests, NULL };
    char *base = xasprintf("%s/profile", c->work_dir);
    ncu_opts no = { .ncu = p->ncu, .target_argv = target, .report_base = base,
                    .timeout_s = p->timeout_s, .source_counters = p->source_counters };
    ncu_capture cap;
    ncu_capture_init(&cap);
    progress("profiling one call under Nsight Compute (%d warm-ups first)", p->warmup);
    strbuf why = STRBUF_INIT;
    int rc = ncu_run(&no, &cap, &why);
    json_t *prof = json_pack("{s:s, s:f, s:f, s:s?}", "status", ncu_status_name(cap.status),
                             "profile_seconds", cap.profile_s, "total_seconds", cap.total_s,
                             "report", cap.report_path);
    json_object_set_new(c->report, "profile", prof);
    json_t *reply = find_worker_reply(cap.log.buf);
    const char *cuda_error = json_string_value(json_object_get(reply, "cuda_error"));
    int result = 0;
    if (cuda_error) {
        char msg[256];
        snprintf(msg, sizeof msg, "under the profiler: CUDA error %s", cuda_error);
        set_verdict(c, VERDICT_RUNTIME_ERROR, msg);
    } else if (rc < 0) {
        json_object_set_new(c->report, "profile_error", json_string(why.buf));
        set_verdict(c, VERDICT_OK, "not profiled");
        if (cap.status == NCU_NOT_FOUND || cap.status == NCU_NO_PERMISSION) {
            strbuf_addf(err, "%s", why.buf);
            result = EXIT_NO_TOOL;
        }
    } else {
        json_t *checked = reply ? ref_call(c, check_request(c, 0), c->o->ref_timeout_s, err) : NULL;
        bool pass = checked && json_is_true(json_object_get(checked, "pass"));
        const char *m = json_string_value(json_object_get(checked, "message"));
        set_verdict(c, pass ? VERDICT_OK : VERDICT_WRONG_RESULT,
                    pass ? "correct under the profiler" : (m ? m : "no reply from the worker"));
        json_decref(checked);
        digest_capture(c, &cap, so, prof);
        strbuf_add(details, cap.details.buf, cap.details.len);
    }
    json_decref(reply);
    strbuf_release(&why);
    ncu_capture_release(&cap);
    free(base);
    free(requests);
    return result;
}

int eval_profile(const eval_opts *o, const profile_opts *p, json_t **report, strbuf *details,
                 strbuf *err)
{
    eval_session *c = NULL;
    double t0 = now_seconds();
    int rc = eval_session_open(o, &c, err);
    if (!rc)
        rc = begin_candidate(c, o->kernel_path, NULL, err);
    json_object_set(c->report, "gpu", c->gpu);
    build_result br;
    build_result_init(&br);
    if (!rc)
        rc = build_candidate(c, &br, err);
    int go_on = rc ? 0 : judge_build(c, &br, err);
    if (go_on < 0)
        rc = -go_on;
    if (!rc && go_on && !(rc = ref_ensure(c, err))) {
        lane_gpu_acquire(o->device);
        if (!(rc = get_spec(c, err)))
            rc = profile_trial(c, p, br.so_path, details, err);
        lane_gpu_release(o->device);
    }
    build_result_release(&br);
    add_seconds(c, "total", now_seconds() - t0);
    *report = json_incref(c->report);
    eval_session_close(c);
    return rc;
}
