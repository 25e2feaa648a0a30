/*
 * build: the build pool (see build.h). A candidate .cu file becomes kernel.so in
 * <cache_dir>/<hash>/ beside build.log, digest.txt and meta.json.
 *
 * DESIGN
 * - The hash covers everything that decides the output: the source bytes, every flag,
 *   nvcc's and CUTLASS's versions, the arch, the build mode and cutegen/abi.h's bytes;
 *   not where abi.h and CUTLASS are (their include paths enter it by name), so a cache
 *   carried to another machine with the same toolkit still hits.
 * - A build happens in a private temporary directory inside the cache and is published
 *   by rename(): a reader sees a whole result or none, and two processes building the
 *   same hash at once both end with the same complete directory (the loser of the race
 *   throws its copy away). Compile errors are cached too (the same source fails the same
 *   way); time-outs and tool failures are not.
 * - "split" mode (the default): most of a CuTe build is the host side (cudafe++ and the
 *   host gcc parsing CuTe), and nvcc runs it after the device side. Here the device
 *   side (`nvcc -fatbin`, which also writes the host stub) runs in one process while the
 *   host side runs beside it, taking nvcc's own commands from `nvcc -dryrun`; the host
 *   object refers to the fatbin through a symbol that a tiny assembled object (.incbin of
 *   the fatbin) defines, and the two are linked with the CUDA runtime. Whatever in this
 *   pipeline is not as expected (an nvcc whose dry run differs, module ids that do not
 *   match) falls back to "plain": one ordinary nvcc call. docs/build.md has the details.
 * - build_many() runs cfg->jobs builds at once on threads; each build's compilers are
 *   child processes with a time limit (proc_run kills the process group).
 */
#include "build.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compile_digest.h"
#include "proc.h"
#include "lane.h"
#include "util.h"

#define MAX_SOURCE (4u << 20)
#define MAX_LOG (8u << 20)
#define DEFAULT_TIMEOUT 300.0
#define CACHE_FORMAT "cutegen-build-1"

/* ===================================================================== */
/* string vectors                                                         */

typedef struct strv {
    char **v;
    int n, alloc;
} strv;

static void strv_push(strv *s, const char *x)
{
    if (s->n + 2 > s->alloc) {
        s->alloc = s->alloc ? 2 * s->alloc : 16;
        s->v = xrealloc(s->v, (size_t)s->alloc * sizeof *s->v);
    }
    s->v[s->n++] = xstrdup(x);
    s->v[s->n] = NULL;
}

static void strv_pushf_take(strv *s, char *x)
{
    strv_push(s, x);
    free(x);
}

static void strv_clear(strv *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

static const char *const *strv_argv(const strv *s)
{
    return (const char *const *)s->v;
}

/* ===================================================================== */
/* results                                                                */

void build_result_init(build_result *r)
{
    memset(r, 0, sizeof *r);
    strbuf_init(&r->digest);
    r->status = BUILD_TOOL_ERROR;
}

void build_result_release(build_result *r)
{
    free(r->so_path);
    free(r->log_path);
    strbuf_release(&r->digest);
    memset(r, 0, sizeof *r);
}

const char *build_status_name(enum build_status s)
{
    switch (s) {
    case BUILD_OK:
        return "ok";
    case BUILD_COMPILE_ERROR:
        return "compile_error";
    case BUILD_TIMEOUT:
        return "timeout";
    case BUILD_TOOL_ERROR:
        return "tool_error";
    }
    return "unknown";
}

static int status_from_name(const char *s)
{
    for (int i = BUILD_OK; i <= BUILD_TOOL_ERROR; i++)
        if (s && !strcmp(s, build_status_name((enum build_status)i)))
            return i;
    return -1;
}

/* ===================================================================== */
/* locating nvcc and CUTLASS                                              */

/* "Cuda compilation tools, release 13.0, V13.0.88" -> "13.0.88". */
static int nvcc_version_of(const char *nvcc, strbuf *version)
{
    const char *argv[] = { nvcc, "--version", NULL };
    proc_opts o = { .argv = argv, .timeout_s = 30, .max_output = 1 << 16 };
    proc_result r;
    proc_result_init(&r);
    int rc = -1;
    if (proc_run(&o, &r) == 0 && r.exit_code == 0) {
        const char *v = strstr(r.out.buf ? r.out.buf : "", ", V");
        if (v) {
            v += 3;
            strbuf_add(version, v, strcspn(v, " \r\n"));
            rc = 0;
        }
    }
    proc_result_release(&r);
    return rc;
}

int nvcc_locate(strbuf *path, strbuf *version, strbuf *how)
{
    char *cands[3] = { NULL, NULL, NULL };
    const char *home = getenv("CUDA_HOME");
    if (home && *home)
        cands[0] = xasprintf("%s/bin/nvcc", home);
    cands[1] = find_in_path("nvcc");
    cands[2] = xstrdup("/usr/local/cuda/bin/nvcc");
    int rc = -1;
    for (int i = 0; i < 3 && rc < 0; i++) {
        if (!cands[i] || !is_executable(cands[i]))
            continue;
        strbuf_reset(version);
        if (nvcc_version_of(cands[i], version) < 0) {
            strbuf_addf(how, "'%s' does not answer --version; ", cands[i]);
            continue;
        }
        strbuf_reset(path);
        strbuf_adds(path, cands[i]);
        rc = 0;
    }
    if (rc < 0)
        strbuf_adds(how, "nvcc not found in $CUDA_HOME/bin, PATH or /usr/local/cuda/bin: "
                         "install the CUDA toolkit, or set CUDA_HOME to its directory");
    for (int i = 0; i < 3; i++)
        free(cands[i]);
    return rc;
}

/* CUTLASS_MAJOR/MINOR/PATCH from cutlass/version.h. */
static int cutlass_version_of(const char *include, strbuf *version)
{
    char *path = xasprintf("%s/cutlass/version.h", include);
    strbuf text = STRBUF_INIT;
    int rc = read_file(path, &text, 1 << 20);
    free(path);
    if (rc < 0) {
        strbuf_release(&text);
        return -1;
    }
    static const char *const keys[] = { "CUTLASS_MAJOR", "CUTLASS_MINOR", "CUTLASS_PATCH" };
    for (int i = 0; i < 3; i++) {
        char *def = xasprintf("#define %s ", keys[i]);
        const char *p = strstr(text.buf, def);
        strbuf_addf(version, "%s%ld", i ? "." : "", p ? strtol(p + strlen(def), NULL, 10) : 0L);
        free(def);
    }
    strbuf_release(&text);
    return 0;
}

static bool has_cute(const char *dir)
{
    char *p = xasprintf("%s/cute/tensor.hpp", dir);
    bool ok = file_exists(p);
    free(p);
    return ok;
}

/* The nvidia-cutlass wheel's include directory, asked of python3. */
static char *cutlass_from_python(void)
{
    const char *argv[] = { "python3", "-c",
                           "import importlib.util as u\n"
                           "s = u.find_spec('cutlass_library')\n"
                           "print(s.submodule_search_locations[0] if s else '')",
                           NULL };
    proc_opts o = { .argv = argv, .timeout_s = 30, .max_output = 1 << 16 };
    proc_result r;
    proc_result_init(&r);
    char *dir = NULL;
    if (proc_run(&o, &r) == 0 && r.exit_code == 0 && r.out.len > 0) {
        strbuf_trim_end(&r.out);
        if (r.out.len)
            dir = xasprintf("%s/source/include", r.out.buf);
    }
    proc_result_release(&r);
    return dir;
}

/* Accepts a directory holding cute/, or one whose include/ does. */
static bool try_cutlass_dir(const char *dir, const char *how_found, strbuf *where, strbuf *how)
{
    char *inc = xasprintf("%s/include", dir);
    const char *found = has_cute(dir) ? dir : has_cute(inc) ? inc : NULL;
    if (found) {
        strbuf_reset(where);
        strbuf_adds(where, found);
        strbuf_reset(how);
        strbuf_adds(how, how_found);
    }
    free(inc);
    return found != NULL;
}

int cutlass_locate(const char *flag_dir, strbuf *where, strbuf *version, strbuf *how)
{
    bool ok = false;
    if (flag_dir && *flag_dir) {
        if (!try_cutlass_dir(flag_dir, "--cutlass", where, how)) {
            strbuf_addf(how, "no cute/tensor.hpp under '%s' (the --cutlass flag): give the "
                             "CUTLASS checkout or its include/ directory", flag_dir);
            return -1;
        }
        ok = true;
    }
    const char *env = getenv("CUTLASS_DIR");
    if (!ok && env && *env)
        ok = try_cutlass_dir(env, "$CUTLASS_DIR", where, how);
    if (!ok) {
        char *py = cutlass_from_python();
        if (py)
            ok = try_cutlass_dir(py, "python3 package nvidia-cutlass", where, how);
        free(py);
    }
    static const char *const fixed[] = { "/opt/cutlass", "/usr/local/cutlass", "/usr/local/include",
                                         "/usr/include" };
    for (size_t i = 0; !ok && i < sizeof fixed / sizeof fixed[0]; i++)
        ok = try_cutlass_dir(fixed[i], fixed[i], where, how);
    if (!ok) {
        strbuf_reset(how);
        strbuf_adds(how, "CUTLASS headers (cute/tensor.hpp) not found: `pip install "
                         "nvidia-cutlass==4.2.0.0`, or clone CUTLASS and set CUTLASS_DIR to it, "
                         "or pass --cutlass DIR");
        return -1;
    }
    strbuf_reset(version);
    if (cutlass_version_of(where->buf, version) < 0)
        strbuf_adds(version, "unknown");
    return 0;
}

int build_gencode(const char *arch, strbuf *out)
{
    if (!arch || strncmp(arch, "sm_", 3) != 0 || !isdigit((unsigned char)arch[3]))
        return -1;
    const char *p = arch + 3;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p && !(isalpha((unsigned char)*p) && p[1] == '\0'))
        return -1;
    strbuf_addf(out, "-gencode=arch=compute_%s,code=%s", arch + 3, arch);
    return 0;
}

/* ===================================================================== */
/* the build context: what every build of one build_many() call shares    */

typedef struct build_ctx {
    const build_config *cfg;
    strbuf nvcc, nvcc_version, cutlass_version;
    char *nvcc_dir;     /* for cudafe++ and PATH */
    char *path_env;     /* "PATH=<nvcc dir>:$PATH" */
    char *key;          /* everything but the source that goes into the hash */
    strv flags;         /* nvcc flags common to all modes */
    bool split;
    double timeout_s;
    strbuf setup_error; /* non-empty: every build is a tool error with this message */
} build_ctx;

static char *file_sha(const char *path)
{
    strbuf sb = STRBUF_INIT;
    char hex[65];
    if (read_file(path, &sb, MAX_SOURCE) < 0) {
        strbuf_release(&sb);
        return NULL;
    }
    sha256_hex(sb.buf ? sb.buf : "", sb.len, hex);
    strbuf_release(&sb);
    return xstrdup(hex);
}

static void ctx_flags(build_ctx *c, const char *gencode)
{
    const build_config *cfg = c->cfg;
    static const char *const base[] = { "-std=c++17", "-O3", "-lineinfo", "--expt-relaxed-constexpr" };
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        strv_push(&c->flags, base[i]);
    strv_push(&c->flags, gencode);
    strv_pushf_take(&c->flags, xasprintf("-I%s", cfg->abi_include));
    strv_pushf_take(&c->flags, xasprintf("-I%s", cfg->cutlass_include));
    strv_push(&c->flags, "-include");
    strv_push(&c->flags, "cutegen/abi.h");
    for (const char *const *e = cfg->extra_flags; e && *e; e++)
        strv_push(&c->flags, *e);
}

/* Flag i as the hash sees it: the include directories of abi.h and CUTLASS by name, not
 * by path (their contents are in the key already: abi.h's digest, CUTLASS's version), so
 * a cache built on one machine serves another where the project or CUTLASS lives
 * elsewhere (bench/prebuild.sh: variants built here, carried to the GPU host). */
static const char *key_flag(const build_ctx *c, int i)
{
    const char *f = c->flags.v[i];
    if (!strncmp(f, "-I", 2) && c->cfg->abi_include && !strcmp(f + 2, c->cfg->abi_include))
        return "-I<cutegen include>";
    if (!strncmp(f, "-I", 2) && c->cfg->cutlass_include && !strcmp(f + 2, c->cfg->cutlass_include))
        return "-I<cutlass include>";
    return f;
}

/* Resolves tools and versions once; problems go into setup_error (tool errors). */
static void ctx_init(build_ctx *c, const build_config *cfg)
{
    memset(c, 0, sizeof *c);
    c->cfg = cfg;
    c->timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : DEFAULT_TIMEOUT;
    c->split = !cfg->mode || !strcmp(cfg->mode, "split");
    strbuf how = STRBUF_INIT, gencode = STRBUF_INIT;
    if (cfg->mode && strcmp(cfg->mode, "split") && strcmp(cfg->mode, "plain"))
        strbuf_addf(&c->setup_error, "unknown build mode '%s': use 'split' or 'plain'", cfg->mode);
    else if (build_gencode(cfg->arch, &gencode) < 0)
        strbuf_addf(&c->setup_error, "malformed arch '%s': give it as sm_XY, e.g. sm_90a",
                    cfg->arch ? cfg->arch : "(none)");
    else if (!cfg->cutlass_include || !cfg->abi_include || !cfg->cache_dir)
        strbuf_adds(&c->setup_error, "the build configuration lacks the CUTLASS, ABI or cache "
                                     "directory (a bug in the caller)");
    else if (cfg->nvcc) {
        strbuf_adds(&c->nvcc, cfg->nvcc);
        if (!is_executable(cfg->nvcc))
            strbuf_addf(&c->setup_error, "nvcc '%s' is not an executable file: install the CUDA "
                                         "toolkit or point CUDA_HOME at it", cfg->nvcc);
        else if (nvcc_version_of(cfg->nvcc, &c->nvcc_version) < 0)
            strbuf_adds(&c->nvcc_version, "unknown"); /* a wrapper or a fake: builds will tell */
    } else if (nvcc_locate(&c->nvcc, &c->nvcc_version, &how) < 0) {
        strbuf_adds(&c->setup_error, how.buf);
    }
    if (cutlass_version_of(cfg->cutlass_include ? cfg->cutlass_include : "/nonexistent",
                           &c->cutlass_version) < 0)
        strbuf_adds(&c->cutlass_version, "unknown");
    char *abi_path = xasprintf("%s/cutegen/abi.h", cfg->abi_include ? cfg->abi_include : ".");
    char *abi_sha = file_sha(abi_path);
    if (!abi_sha && !c->setup_error.len)
        strbuf_addf(&c->setup_error, "cannot read '%s': set CUTEGEN_SOURCE_DIR to cutegen's "
                                     "source tree", abi_path);
    free(abi_path);
    if (!c->setup_error.len) {
        ctx_flags(c, gencode.buf);
        char *slash = strrchr(c->nvcc.buf, '/');
        c->nvcc_dir = slash ? xstrndup(c->nvcc.buf, (size_t)(slash - c->nvcc.buf)) : xstrdup(".");
        const char *path = getenv("PATH");
        c->path_env = xasprintf("PATH=%s:%s", c->nvcc_dir, path ? path : "/usr/bin:/bin");
        strbuf k = STRBUF_INIT;
        strbuf_addf(&k, "%s\nnvcc=%s\ncutlass=%s\narch=%s\nmode=%s\nabi=%s\n", CACHE_FORMAT,
                    c->nvcc_version.buf, c->cutlass_version.buf, cfg->arch,
                    c->split ? "split" : "plain", abi_sha);
        for (int i = 0; i < c->flags.n; i++)
            strbuf_addf(&k, "flag=%s\n", key_flag(c, i));
        c->key = strbuf_detach(&k);
    }
    free(abi_sha);
    strbuf_release(&how);
    strbuf_release(&gencode);
}

static void ctx_release(build_ctx *c)
{
    strbuf_release(&c->nvcc);
    strbuf_release(&c->nvcc_version);
    strbuf_release(&c->cutlass_version);
    strbuf_release(&c->setup_error);
    strv_clear(&c->flags);
    free(c->nvcc_dir);
    free(c->path_env);
    free(c->key);
}

/* ===================================================================== */
/* one build                                                              */

enum step_outcome { STEP_OK, STEP_FAILED, STEP_TIMEOUT, STEP_NO_START };

typedef struct job {
    build_ctx *c;
    const char *source_path;
    build_result *r;
    strbuf src;        /* the source's bytes, as hashed and as compiled */
    char *base;        /* its file name, "relu.cu": the name the compiler reports */
    char *tmp;         /* private directory, published by rename() */
    double deadline;
    strbuf log;        /* the full log: every command and all it printed */
    strbuf errors;     /* the output of the step that failed: what gets digested */
    const char *no_start; /* a tool that could not be started */
} job;

/* A compiler process, in one of the host's CPU slots when cutegen bench shares the
 * cores between processes (lane.h). */
static int compiler_run(const proc_opts *o, proc_result *r)
{
    int slot = lane_cpu_acquire();
    int rc = proc_run(o, r);
    lane_cpu_release(slot);
    return rc;
}

static double time_left(const job *j)
{
    double left = j->deadline - now_seconds();
    return left > 0.001 ? left : 0.001;
}

static void log_command(strbuf *log, const char *const *argv)
{
    strbuf_adds(log, "$");
    for (const char *const *a = argv; *a; a++)
        strbuf_addf(log, " %s", *a);
    strbuf_addc(log, '\n');
}

static enum step_outcome outcome_of(int started, const proc_result *r)
{
    if (started < 0)
        return STEP_NO_START;
    if (r->timed_out)
        return STEP_TIMEOUT;
    return r->exit_code == 0 ? STEP_OK : STEP_FAILED;
}

/* Appends a finished step's output to log (and to errors when it failed). */
static void record_step(job *j, const char *const *argv, const proc_result *r, enum step_outcome o)
{
    log_command(&j->log, argv);
    strbuf_add(&j->log, r->out.buf ? r->out.buf : "", r->out.len);
    strbuf_add(&j->log, r->err.buf ? r->err.buf : "", r->err.len);
    if (o == STEP_TIMEOUT)
        strbuf_addf(&j->log, "[killed: the build's time limit of %.0f s was reached]\n", j->c->timeout_s);
    if (o == STEP_FAILED && !j->errors.len) {
        strbuf_add(&j->errors, r->out.buf ? r->out.buf : "", r->out.len);
        strbuf_add(&j->errors, r->err.buf ? r->err.buf : "", r->err.len);
    }
    if (o == STEP_NO_START && !j->no_start)
        j->no_start = argv[0];
}

static void step_opts(job *j, proc_opts *o, const char *const *argv, const char *const *env)
{
    memset(o, 0, sizeof *o);
    o->argv = argv;
    o->env_add = env;
    o->cwd = j->tmp;
    o->timeout_s = time_left(j);
    o->max_output = 4u << 20;
}

/* Runs one command in the build directory within the build's time limit. */
static enum step_outcome run_step(job *j, const char *const *argv, const char *const *env)
{
    proc_opts o;
    step_opts(j, &o, argv, env);
    proc_result r;
    proc_result_init(&r);
    enum step_outcome out = outcome_of(compiler_run(&o, &r), &r);
    record_step(j, argv, &r, out);
    proc_result_release(&r);
    return out;
}

static void push_flags(const build_ctx *c, strv *argv)
{
    strv_push(argv, c->nvcc.buf);
    for (int i = 0; i < c->flags.n; i++)
        strv_push(argv, c->flags.v[i]);
}

static enum step_outcome build_plain(job *j)
{
    strv argv = { 0 };
    push_flags(j->c, &argv);
    static const char *const tail[] = { "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                                        "-Xlinker", "--no-undefined", "-o", "kernel.so" };
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
        strv_push(&argv, tail[i]);
    strv_push(&argv, j->base);
    char *tmpdir = xasprintf("TMPDIR=%s/work", j->tmp);
    const char *env[] = { tmpdir, NULL };
    enum step_outcome o = run_step(j, strv_argv(&argv), env);
    free(tmpdir);
    strv_clear(&argv);
    return o;
}

/* ===================================================================== */
/* split mode: device and host compiled at once                           */

/* Splits a command line as nvcc -dryrun prints it (double quotes, backslashes). */
static void split_words(const char *line, strv *out)
{
    strbuf w = STRBUF_INIT;
    const char *p = line;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        strbuf_reset(&w);
        char quote = 0;
        for (; *p && (quote || (*p != ' ' && *p != '\t')); p++) {
            if (quote && *p == quote)
                quote = 0;
            else if (!quote && (*p == '"' || *p == '\''))
                quote = *p;
            else if (*p == '\\' && quote != '\'' && p[1])
                strbuf_addc(&w, *++p);
            else
                strbuf_addc(&w, *p);
        }
        strv_push(out, strbuf_str(&w));
    }
    strbuf_release(&w);
}

typedef struct dryrun {
    strv host_pp, cudafe, host_cc, libdirs;
    char *fatbin_c;  /* the name the host stub #includes for the embedded fatbin */
    char *module_id; /* the host side's module id file */
    char *stub;      /* the host stub's file name */
    char *host_dir;  /* where cudafe++ writes the host source (the stub must be there) */
} dryrun;

static void dryrun_release(dryrun *d)
{
    strv_clear(&d->host_pp);
    strv_clear(&d->cudafe);
    strv_clear(&d->host_cc);
    strv_clear(&d->libdirs);
    free(d->fatbin_c);
    free(d->module_id);
    free(d->stub);
    free(d->host_dir);
}

static bool has_arg(const strv *a, const char *x)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->v[i], x))
            return true;
    return false;
}

static bool has_prefix_arg(const strv *a, const char *prefix)
{
    for (int i = 0; i < a->n; i++)
        if (str_starts_with(a->v[i], prefix))
            return true;
    return false;
}

static char *arg_value(const strv *a, const char *name)
{
    for (int i = 0; i + 1 < a->n; i++)
        if (!strcmp(a->v[i], name))
            return xstrdup(a->v[i + 1]);
    return NULL;
}

static void take_strv(strv *dst, strv *src)
{
    strv_clear(dst);
    *dst = *src;
    memset(src, 0, sizeof *src);
}

/* Sorts one dry-run command into the host pipeline steps we run ourselves. */
static void classify(dryrun *d, strv *w)
{
    const char *tool = strrchr(w->v[0], '/') ? strrchr(w->v[0], '/') + 1 : w->v[0];
    if (!strcmp(tool, "cudafe++")) {
        free(d->module_id);
        free(d->stub);
        d->module_id = arg_value(w, "--module_id_file_name");
        d->stub = arg_value(w, "--stub_file_name");
        char *gen = arg_value(w, "--gen_c_file_name");
        free(d->host_dir);
        d->host_dir = gen && strrchr(gen, '/') ? xstrndup(gen, (size_t)(strrchr(gen, '/') - gen))
                                               : xstrdup(".");
        free(gen);
        take_strv(&d->cudafe, w);
    } else if (strstr(tool, "cicc")) {
        free(d->fatbin_c);
        d->fatbin_c = arg_value(w, "--include_file_name");
    } else if (has_arg(w, "-E") && has_arg(w, "-D__CUDACC__") && !has_prefix_arg(w, "-D__CUDA_ARCH__=")) {
        take_strv(&d->host_pp, w);
    } else if (has_arg(w, "-c") && w->n > 1) {
        for (int i = 1; i < w->n; i++)
            if (str_ends_with(w->v[i], ".cudafe1.cpp")) {
                take_strv(&d->host_cc, w);
                break;
            }
    }
}

/* Reads nvcc's dry run; 0 when every host step was found. */
static int parse_dryrun(const char *text, dryrun *d)
{
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        char *line = xstrndup(p, len);
        p += len + (p[len] == '\n');
        if (!str_starts_with(line, "#$ ")) {
            free(line);
            continue;
        }
        const char *cmd = line + 3;
        strv w = { 0 };
        if (str_starts_with(cmd, "LIBRARIES=")) {
            split_words(cmd + strlen("LIBRARIES="), &w);
            for (int i = 0; i < w.n; i++)
                if (str_starts_with(w.v[i], "-L"))
                    strv_push(&d->libdirs, w.v[i]);
        } else if (!strchr(cmd, ' ') || !strchr(cmd, '=') ||
                   strchr(cmd, '=') > strchr(cmd, ' ')) {
            split_words(cmd, &w);
            if (w.n > 0)
                classify(d, &w);
        }
        strv_clear(&w);
        free(line);
    }
    return d->host_pp.n && d->cudafe.n && d->host_cc.n && d->fatbin_c && d->module_id &&
                   d->stub && !strchr(d->fatbin_c, '/')
               ? 0
               : -1;
}

typedef struct device_task {
    proc_opts o;
    proc_result r;
    const char *env[2];
    int started; /* proc_run's return; -2 when the thread could not start */
} device_task;

static void *device_thread(void *arg)
{
    device_task *t = arg;
    t->started = compiler_run(&t->o, &t->r);
    return NULL;
}

static bool same_file_text(const char *a, const char *b)
{
    strbuf x = STRBUF_INIT, y = STRBUF_INIT;
    bool same = read_file(a, &x, 1 << 16) == 0 && read_file(b, &y, 1 << 16) == 0 && x.len == y.len &&
                x.len > 0 && !memcmp(x.buf, y.buf, x.len);
    strbuf_release(&x);
    strbuf_release(&y);
    return same;
}

static int copy_file(const char *from, const char *to)
{
    strbuf sb = STRBUF_INIT;
    int rc = read_file(from, &sb, 64u << 20);
    if (rc == 0)
        rc = write_file_atomic(to, sb.buf ? sb.buf : "", sb.len);
    strbuf_release(&sb);
    return rc;
}

/* The host stub's fatbin include: the wrapper nvcc would emit, with the data elsewhere. */
static const char fatbin_c_text[] =
    "/* written by cutegen's split build: the fatbin data comes from fatbin.o */\n"
    "#ifndef __SKIP_INTERNAL_FATBINARY_HEADERS\n"
    "#include \"fatbinary_section.h\"\n"
    "#endif\n"
    "#define __CUDAFATBINSECTION  \".nvFatBinSegment\"\n"
    "#define __CUDAFATBINDATASECTION  \".nv_fatbin\"\n"
    "#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
    "extern const unsigned long long cg_fatbin_data[] __attribute__((visibility(\"hidden\")));\n"
    "static const __fatBinC_Wrapper_t __fatDeviceText __attribute__ ((aligned (8))) "
    "__attribute__ ((section (__CUDAFATBINSECTION)))=\n"
    "\t{ 0x466243b1, 1, cg_fatbin_data, 0 };\n"
    "#ifdef __cplusplus\n}\n#endif\n";

static const char fatbin_s_text[] =
    ".section .nv_fatbin, \"a\"\n"
    ".align 8\n"
    ".globl cg_fatbin_data\n"
    ".hidden cg_fatbin_data\n"
    "cg_fatbin_data:\n"
    ".incbin \"work/dev.fatbin\"\n"
    ".section .note.GNU-stack,\"\",@progbits\n";

static int write_in(const job *j, const char *rel, const char *text)
{
    char *path = xasprintf("%s/%s", j->tmp, rel);
    int rc = write_file_atomic(path, text, strlen(text));
    free(path);
    return rc;
}

/* Starts `nvcc -fatbin` (device code and the host stub) on its own thread. */
static void start_device(job *j, device_task *t, strv *argv, char **env_tmp, pthread_t *th)
{
    push_flags(j->c, argv);
    static const char *const tail[] = { "-fatbin", "-keep", "-keep-dir", "work/d", "-o",
                                        "work/dev.fatbin" };
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
        strv_push(argv, tail[i]);
    strv_push(argv, j->base);
    *env_tmp = xasprintf("TMPDIR=%s/work/d", j->tmp);
    memset(t, 0, sizeof *t);
    proc_result_init(&t->r);
    t->env[0] = *env_tmp;
    step_opts(j, &t->o, strv_argv(argv), t->env);
    if (pthread_create(th, NULL, device_thread, t) != 0)
        t->started = -2;
}

/* The host steps up to cudafe++, taken from nvcc's dry run. */
static enum step_outcome run_host_front(job *j, dryrun *d, strbuf *why)
{
    strv argv = { 0 };
    push_flags(j->c, &argv);
    static const char *const tail[] = { "-c", "-Xcompiler", "-fPIC", "-keep", "-keep-dir",
                                        "work/h", "-dryrun", "-o", "work/host.o" };
    for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
        strv_push(&argv, tail[i]);
    strv_push(&argv, j->base);
    proc_opts o;
    step_opts(j, &o, strv_argv(&argv), NULL);
    proc_result r;
    proc_result_init(&r);
    enum step_outcome out = outcome_of(compiler_run(&o, &r), &r);
    if (out == STEP_OK && parse_dryrun(r.err.buf ? r.err.buf : "", d) < 0) {
        strbuf_adds(why, "nvcc's dry run does not show the expected host steps");
        out = STEP_FAILED;
    } else if (out != STEP_OK) {
        record_step(j, strv_argv(&argv), &r, out);
        strbuf_adds(why, "nvcc's dry run failed");
    }
    proc_result_release(&r);
    strv_clear(&argv);
    if (out != STEP_OK)
        return out;
    if (!strchr(d->cudafe.v[0], '/')) {
        char *full = xasprintf("%s/%s", j->c->nvcc_dir, d->cudafe.v[0]);
        free(d->cudafe.v[0]);
        d->cudafe.v[0] = full;
    }
    const char *env[] = { j->c->path_env, NULL };
    out = run_step(j, strv_argv(&d->host_pp), env);
    if (out == STEP_OK)
        out = run_step(j, strv_argv(&d->cudafe), env);
    return out;
}

/* After both halves: stub, fatbin include, host object, fatbin object, link.
 * Returns a step_outcome, or -1 when the pipeline is not as expected (why says why). */
static int finish_split(job *j, dryrun *d, strbuf *why)
{
    const char *slash = strrchr(d->module_id, '/');
    char *dev_mid = xasprintf("%s/work/d/%s", j->tmp, slash ? slash + 1 : d->module_id);
    char *host_mid = d->module_id[0] == '/' ? xstrdup(d->module_id)
                                            : xasprintf("%s/%s", j->tmp, d->module_id);
    char *stub_from = xasprintf("%s/work/d/%s", j->tmp, d->stub);
    char *stub_to = xasprintf("%s/%s/%s", j->tmp, d->host_dir, d->stub);
    char *fatbin_c = xasprintf("%s/%s", d->host_dir, d->fatbin_c);
    enum step_outcome out = STEP_FAILED;
    if (!same_file_text(dev_mid, host_mid))
        strbuf_adds(why, "the device and host module ids differ");
    else if (copy_file(stub_from, stub_to) < 0)
        strbuf_addf(why, "the device compile left no host stub '%s'", d->stub);
    else if (write_in(j, fatbin_c, fatbin_c_text) < 0 || write_in(j, "work/fatbin.s", fatbin_s_text) < 0)
        strbuf_addf(why, "cannot write in '%s': %s", j->tmp, strerror(errno));
    else
        out = STEP_OK;
    free(dev_mid);
    free(host_mid);
    free(stub_from);
    free(stub_to);
    free(fatbin_c);
    if (out != STEP_OK)
        return -1;

    const char *env[] = { j->c->path_env, NULL };
    out = run_step(j, strv_argv(&d->host_cc), env);
    if (out != STEP_OK)
        return out;
    const char *as_argv[] = { d->host_cc.v[0], "-c", "work/fatbin.s", "-o", "work/fatbin.o", NULL };
    out = run_step(j, as_argv, env);
    if (out != STEP_OK) {
        strbuf_adds(why, "assembling the fatbin object failed");
        return out == STEP_TIMEOUT ? (int)out : -1;
    }
    strv link = { 0 };
    strv_push(&link, "g++");
    static const char *const mid[] = { "-shared", "-fPIC", "-o", "kernel.so", "work/host.o",
                                       "work/fatbin.o", "-Wl,--no-undefined" };
    for (size_t i = 0; i < sizeof mid / sizeof mid[0]; i++)
        strv_push(&link, mid[i]);
    for (int i = 0; i < d->libdirs.n; i++)
        strv_push(&link, d->libdirs.v[i]);
    strv_push(&link, "-lcudart");
    out = run_step(j, strv_argv(&link), env);
    strv_clear(&link);
    return out;
}

/* Returns the outcome, or -1 when the split pipeline is unavailable (why says why). */
static int build_split(job *j, strbuf *why)
{
    char *d_dir = xasprintf("%s/work/d", j->tmp), *h_dir = xasprintf("%s/work/h", j->tmp);
    int mk = mkdir_p(d_dir, 0755) | mkdir_p(h_dir, 0755);
    free(d_dir);
    free(h_dir);
    if (mk < 0) {
        strbuf_addf(why, "cannot create work directories in '%s': %s", j->tmp, strerror(errno));
        return -1;
    }
    device_task t;
    strv dev_argv = { 0 };
    char *env_tmp = NULL;
    pthread_t th;
    start_device(j, &t, &dev_argv, &env_tmp, &th);
    dryrun d;
    memset(&d, 0, sizeof d);
    enum step_outcome host = t.started == -2 ? STEP_FAILED : run_host_front(j, &d, why);
    if (t.started != -2)
        pthread_join(th, NULL);
    else
        strbuf_adds(why, "cannot start a thread");
    enum step_outcome dev = t.started == -2 ? STEP_FAILED : outcome_of(t.started, &t.r);
    int result;
    if (t.started == -2) {
        result = -1;
    } else {
        /* the device log goes first: its errors are what nvcc itself would print */
        strbuf host_errors = STRBUF_INIT;
        strbuf_add(&host_errors, j->errors.buf ? j->errors.buf : "", j->errors.len);
        strbuf_reset(&j->errors);
        record_step(j, strv_argv(&dev_argv), &t.r, dev);
        if (!j->errors.len)
            strbuf_add(&j->errors, host_errors.buf ? host_errors.buf : "", host_errors.len);
        strbuf_release(&host_errors);
        if (dev == STEP_TIMEOUT || host == STEP_TIMEOUT)
            result = STEP_TIMEOUT;
        else if (dev == STEP_NO_START)
            result = STEP_NO_START;
        else if (dev == STEP_FAILED)
            result = STEP_FAILED;
        else if (why->len)
            result = -1;
        else if (host != STEP_OK)
            result = host;
        else
            result = finish_split(j, &d, why);
    }
    proc_result_release(&t.r);
    strv_clear(&dev_argv);
    free(env_tmp);
    dryrun_release(&d);
    return result;
}

/* ===================================================================== */
/* the cache                                                              */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Fills r from a published directory; 0 when it holds a complete result. */
static int load_cached(const char *dir, build_result *r)
{
    char *meta_path = xasprintf("%s/meta.json", dir);
    json_t *meta = json_load_file(meta_path, 0, NULL);
    free(meta_path);
    int status = status_from_name(json_string_value(json_object_get(meta, "status")));
    json_decref(meta);
    if (status < 0)
        return -1;
    char *so = xasprintf("%s/kernel.so", dir);
    if (status == BUILD_OK && !file_exists(so)) {
        free(so);
        return -1;
    }
    r->status = (enum build_status)status;
    free(r->so_path);
    r->so_path = status == BUILD_OK ? so : NULL;
    if (status != BUILD_OK)
        free(so);
    free(r->log_path);
    r->log_path = xasprintf("%s/build.log", dir);
    char *digest = xasprintf("%s/digest.txt", dir);
    strbuf_reset(&r->digest);
    if (read_file(digest, &r->digest, 1 << 20) < 0)
        strbuf_reset(&r->digest);
    free(digest);
    return 0;
}

static int write_meta(const job *j, double seconds, const char *mode)
{
    const build_ctx *c = j->c;
    json_t *m = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:I}", "status",
                          build_status_name(j->r->status), "hash", j->r->hash, "source", j->base,
                          "arch", c->cfg->arch, "mode", mode, "nvcc", c->nvcc_version.buf,
                          "cutlass", c->cutlass_version.buf, "seconds", seconds, "created",
                          (json_int_t)time(NULL));
    json_t *flags = json_array();
    for (int i = 0; i < c->flags.n; i++)
        json_array_append_new(flags, json_string(c->flags.v[i]));
    json_object_set_new(m, "flags", flags);
    char *text = json_dumps(m, JSON_INDENT(2));
    json_decref(m);
    char *path = xasprintf("%s/meta.json", j->tmp);
    int rc = text ? write_file_atomic(path, text, strlen(text)) : -1;
    free(path);
    free(text);
    return rc;
}

static int write_outputs(job *j, double seconds, const char *mode)
{
    char *log = xasprintf("%s/build.log", j->tmp);
    char *digest = xasprintf("%s/digest.txt", j->tmp);
    int rc = write_file_atomic(log, strbuf_str(&j->log), j->log.len);
    if (rc == 0)
        rc = write_file_atomic(digest, strbuf_str(&j->r->digest), j->r->digest.len);
    if (rc == 0)
        rc = write_meta(j, seconds, mode);
    free(log);
    free(digest);
    return rc;
}

/* Moves the finished build to dir; when another process published the same hash
 * first, its result is taken instead (both are built from the same inputs). */
static int publish(job *j, const char *dir, bool replace)
{
    if (rename(j->tmp, dir) == 0)
        return 0;
    if (errno != EEXIST && errno != ENOTEMPTY)
        return -1;
    if (replace) {
        char *old = xasprintf("%s.old.%ld", dir, (long)getpid());
        if (rename(dir, old) == 0) {
            int rc = rename(j->tmp, dir);
            remove_tree(old);
            free(old);
            if (rc == 0)
                return 0;
        } else {
            free(old);
        }
    }
    remove_tree(j->tmp);
    return load_cached(dir, j->r) == 0 ? 1 : -1;
}

/* ===================================================================== */
/* driving one build                                                      */

static void set_tool_error(build_result *r, const char *msg)
{
    r->status = BUILD_TOOL_ERROR;
    strbuf_reset(&r->digest);
    strbuf_adds(&r->digest, msg);
}

static void digest_failure(job *j, enum step_outcome o)
{
    build_result *r = j->r;
    strbuf_reset(&r->digest);
    if (o == STEP_FAILED) {
        r->status = BUILD_COMPILE_ERROR;
        compile_digest_opts d = { .candidate = j->base, .source = strbuf_str(&j->src) };
        compile_digest(strbuf_str(&j->errors), &d, &r->digest);
    } else if (o == STEP_TIMEOUT) {
        r->status = BUILD_TIMEOUT;
        strbuf_addf(&r->digest, "the build ran past its time limit of %.0f s and was stopped: "
                                "instantiate fewer templates or unroll less, or allow more time "
                                "(--timeout)\n", j->c->timeout_s);
    } else {
        r->status = BUILD_TOOL_ERROR;
        strbuf_addf(&r->digest, "cannot run '%s': check the CUDA toolkit's installation "
                                "(cutegen doctor), or set CUDA_HOME\n",
                    j->no_start ? j->no_start : "the compiler");
    }
}

/* Compiles in j->tmp: split first (unless plain was asked for), plain as fallback. */
static const char *compile_in_tmp(job *j)
{
    enum step_outcome o;
    const char *mode = "plain";
    if (j->c->split) {
        strbuf why = STRBUF_INIT;
        int rc = build_split(j, &why);
        if (rc >= 0) {
            o = (enum step_outcome)rc;
            mode = "split";
        } else {
            strbuf_addf(&j->log, "[split build unavailable: %s; building with one nvcc call]\n",
                        why.buf ? why.buf : "");
            strbuf_reset(&j->errors);
            j->no_start = NULL;
            o = build_plain(j);
        }
        strbuf_release(&why);
    } else {
        o = build_plain(j);
    }
    char *so = xasprintf("%s/kernel.so", j->tmp);
    if (o == STEP_OK && !file_exists(so)) {
        strbuf_adds(&j->errors, "the compiler succeeded but wrote no kernel.so\n");
        o = STEP_FAILED;
    }
    free(so);
    if (o == STEP_OK) {
        j->r->status = BUILD_OK;
        strbuf_reset(&j->r->digest);
    } else {
        digest_failure(j, o);
    }
    return mode;
}

/* Makes the private build directory with the source in it. */
static int prepare_tmp(job *j)
{
    const char *cache = j->c->cfg->cache_dir;
    if (mkdir_p(cache, 0755) < 0)
        return -1;
    char *tmpl = xasprintf("%s/.tmp-%.12s-XXXXXX", cache, j->r->hash);
    if (!mkdtemp(tmpl)) {
        free(tmpl);
        return -1;
    }
    j->tmp = tmpl;
    char *src = xasprintf("%s/%s", j->tmp, j->base);
    char *work = xasprintf("%s/work", j->tmp);
    int rc = write_file_atomic(src, strbuf_str(&j->src), j->src.len);
    if (rc == 0)
        rc = mkdir_p(work, 0755);
    free(src);
    free(work);
    return rc;
}

static void hash_source(job *j)
{
    strbuf k = STRBUF_INIT;
    strbuf_adds(&k, j->c->key);
    strbuf_addf(&k, "source=%zu\n", j->src.len);
    strbuf_add(&k, strbuf_str(&j->src), j->src.len);
    sha256_hex(k.buf, k.len, j->r->hash);
    strbuf_release(&k);
}

static int build_one(build_ctx *c, const char *source_path, build_result *r)
{
    job j;
    memset(&j, 0, sizeof j);
    j.c = c;
    j.source_path = source_path;
    j.r = r;
    r->cached = false;
    r->seconds = 0;
    r->mode = NULL;
    if (c->setup_error.len) {
        set_tool_error(r, c->setup_error.buf);
        return 0;
    }
    if (read_file(source_path, &j.src, MAX_SOURCE) < 0) {
        strbuf_reset(&r->digest);
        strbuf_addf(&r->digest, "cannot read kernel '%s': %s", source_path, strerror(errno));
        strbuf_release(&j.src);
        return -1;
    }
    const char *slash = strrchr(source_path, '/');
    j.base = xstrdup(slash ? slash + 1 : source_path);
    if (!str_ends_with(j.base, ".cu")) { /* nvcc decides the language by the suffix */
        char *b = xasprintf("%s.cu", j.base);
        free(j.base);
        j.base = b;
    }
    hash_source(&j);
    char *final = xasprintf("%s/%s", c->cfg->cache_dir, r->hash);
    int rc = 0;
    if (!c->cfg->force && load_cached(final, r) == 0) {
        r->cached = true;
        r->mode = "cache";
    } else if (prepare_tmp(&j) < 0) {
        strbuf msg = STRBUF_INIT;
        strbuf_addf(&msg, "cache directory '%s' is not writable (%s): set CUTEGEN_CACHE_DIR to a "
                          "writable directory", c->cfg->cache_dir, strerror(errno));
        set_tool_error(r, msg.buf);
        strbuf_release(&msg);
        if (j.tmp)
            remove_tree(j.tmp);
    } else {
        double t0 = now_seconds();
        j.deadline = t0 + c->timeout_s;
        const char *mode = compile_in_tmp(&j);
        r->seconds = now_seconds() - t0;
        r->mode = mode;
        char *work = xasprintf("%s/work", j.tmp);
        remove_tree(work);
        free(work);
        bool cacheable = r->status == BUILD_OK || r->status == BUILD_COMPILE_ERROR;
        char *dir = cacheable ? xstrdup(final) : xasprintf("%s.%s", final, build_status_name(r->status));
        int pub = -1;
        if (write_outputs(&j, r->seconds, mode) == 0)
            pub = publish(&j, dir, !cacheable || c->cfg->force);
        if (pub < 0) {
            strbuf msg = STRBUF_INIT;
            strbuf_addf(&msg, "cannot store the build in '%s' (%s): set CUTEGEN_CACHE_DIR to a "
                              "writable directory with free space", dir, strerror(errno));
            set_tool_error(r, msg.buf);
            strbuf_release(&msg);
            remove_tree(j.tmp);
        } else {
            if (pub == 1) /* another process published the same hash first */
                r->cached = true;
            free(r->log_path);
            r->log_path = xasprintf("%s/build.log", dir);
            free(r->so_path);
            r->so_path = r->status == BUILD_OK ? xasprintf("%s/kernel.so", dir) : NULL;
        }
        free(dir);
    }
    free(final);
    free(j.tmp);
    free(j.base);
    strbuf_release(&j.src);
    strbuf_release(&j.log);
    strbuf_release(&j.errors);
    return rc;
}

/* ===================================================================== */
/* the pool                                                               */

typedef struct pool {
    build_ctx *c;
    const char *const *sources;
    build_result *results;
    int n, next, failed;
    pthread_mutex_t lock;
} pool;

static void *pool_worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int i = p->next < p->n ? p->next++ : -1;
        pthread_mutex_unlock(&p->lock);
        if (i < 0)
            return NULL;
        if (build_one(p->c, p->sources[i], &p->results[i]) < 0) {
            pthread_mutex_lock(&p->lock);
            p->failed++;
            pthread_mutex_unlock(&p->lock);
        }
    }
}

int build_many(const build_config *cfg, const char *const *sources, int n, build_result *results)
{
    build_ctx c;
    ctx_init(&c, cfg);
    pool p = { .c = &c, .sources = sources, .results = results, .n = n };
    pthread_mutex_init(&p.lock, NULL);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = cfg->jobs > 0 ? cfg->jobs : (cpus > 0 ? (int)cpus : 1);
    if (jobs > n)
        jobs = n;
    pthread_t *th = xcalloc((size_t)(jobs > 0 ? jobs : 1), sizeof *th);
    int started = 0;
    for (int i = 1; i < jobs; i++) {
        if (pthread_create(&th[i], NULL, pool_worker, &p) != 0)
            break;
        started = i;
    }
    pool_worker(&p); /* this thread works too */
    for (int i = 1; i <= started; i++)
        pthread_join(th[i], NULL);
    free(th);
    pthread_mutex_destroy(&p.lock);
    ctx_release(&c);
    return p.failed ? -1 : 0;
}

int build_kernel(const build_config *cfg, const char *source_path, build_result *r)
{
    const char *sources[] = { source_path };
    return build_many(cfg, sources, 1, r);
}
