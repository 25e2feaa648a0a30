/*
 * ncu: building Nsight Compute's command lines, running them with time limits and
 * classifying what went wrong, and parsing its raw CSV page and the advice lines of its
 * details page (see ncu.h).
 *
 * DESIGN: the profiling run and the imports are separate processes. The profiling run
 * writes a report file (--export), so a digest can be recomputed and the full report
 * kept on disk; the imports read that file and never touch the GPU. Captured output is
 * capped (a program that prints without end cannot exhaust memory). ncu auto-scales
 * units on the raw page (us or ms, Kbyte or Mbyte, Tbyte/s), so every number is
 * normalised through its column's unit before anyone uses it.
 */
#include "ncu.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "util.h"

/* Sections a digest needs; SourceCounters is optional (ncu_opts.source_counters). */
static const char *const ncu_sections[] = {
    "SpeedOfLight", "MemoryWorkloadAnalysis", "ComputeWorkloadAnalysis", "Occupancy",
    "LaunchStats", "WarpStateStats", NULL
};

/* Metrics beyond the sections: executed FP instructions (FLOP counts), tensor-path
 * operations, DRAM bytes, shared-memory bank conflicts, global sectors per request and
 * local-memory traffic. ncu skips names a chip does not have (ncu 2025.3 on gh100
 * names the fp16 tensor path "src_fp16" where others have "src_fp16_dst_fp32"). */
static const char ncu_extra_metrics[] =
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum,"
    "sm__ops_path_tensor_src_fp16.sum,"
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum,"
    "sm__ops_path_tensor_src_fp16_dst_fp16.sum,"
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum,"
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum,"
    "sm__ops_path_tensor_src_fp64.sum,"
    "sm__ops_path_tensor_src_fp8.sum,"
    "dram__bytes_read.sum,dram__bytes_write.sum,"
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,"
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,"
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,"
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,"
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,"
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,"
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum,"
    "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum,"
    "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts_cache_access.sum,"
    "l1tex__m_xbar2l1tex_read_bytes_pipe_tma.sum";

#define NCU_LOG_MAX ((size_t)4 << 20)
#define NCU_PAGE_MAX ((size_t)256 << 20)

/* ================================================================ command lines */

typedef struct argv_builder {
    char **v;
    size_t n, alloc;
} argv_builder;

static void argv_push(argv_builder *b, char *s)
{
    if (b->n + 2 > b->alloc) {
        b->alloc = b->alloc ? 2 * b->alloc : 32;
        b->v = xrealloc(b->v, b->alloc * sizeof(*b->v));
    }
    b->v[b->n++] = s;
    b->v[b->n] = NULL;
}

static void argv_push_dup(argv_builder *b, const char *s)
{
    argv_push(b, xstrdup(s));
}

char **ncu_profile_argv(const ncu_opts *o, const char *ncu_path)
{
    argv_builder b = { NULL, 0, 0 };
    argv_push_dup(&b, ncu_path ? ncu_path : "ncu");
    /* The worker brackets the one call to profile with cudaProfilerStart/Stop. */
    argv_push_dup(&b, "--profile-from-start");
    argv_push_dup(&b, "off");
    /* Keep the clocks the timing runs see. */
    argv_push_dup(&b, "--clock-control");
    argv_push_dup(&b, "none");
    argv_push_dup(&b, "--target-processes");
    argv_push_dup(&b, "all");
    for (const char *const *s = ncu_sections; *s; s++) {
        argv_push_dup(&b, "--section");
        argv_push_dup(&b, *s);
    }
    if (o->source_counters) {
        argv_push_dup(&b, "--section");
        argv_push_dup(&b, "SourceCounters");
    }
    argv_push_dup(&b, "--metrics");
    argv_push_dup(&b, ncu_extra_metrics);
    if (o->kernel_regex) {
        argv_push_dup(&b, "--kernel-name");
        argv_push(&b, xasprintf("regex:%s", o->kernel_regex));
    }
    argv_push_dup(&b, "--export");
    argv_push_dup(&b, o->report_base);
    argv_push_dup(&b, "--force-overwrite");
    for (const char *const *a = o->target_argv; a && *a; a++)
        argv_push_dup(&b, *a);
    return b.v;
}

char **ncu_import_argv(const char *ncu_path, const char *report_path, const char *page)
{
    argv_builder b = { NULL, 0, 0 };
    argv_push_dup(&b, ncu_path ? ncu_path : "ncu");
    argv_push_dup(&b, "--import");
    argv_push_dup(&b, report_path);
    if (!strcmp(page, "raw"))
        argv_push_dup(&b, "--csv");
    argv_push_dup(&b, "--page");
    argv_push_dup(&b, page);
    return b.v;
}

void ncu_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **a = argv; *a; a++)
        free(*a);
    free(argv);
}

char *ncu_find(const char *configured)
{
    if (configured)
        return is_executable(configured) ? xstrdup(configured) : NULL;
    char *p = find_in_path("ncu");
    if (p)
        return p;
    if (is_executable("/usr/local/cuda/bin/ncu"))
        return xstrdup("/usr/local/cuda/bin/ncu");
    return NULL;
}

/* ================================================================ running */

void ncu_capture_init(ncu_capture *c)
{
    memset(c, 0, sizeof(*c));
    strbuf_init(&c->log);
    strbuf_init(&c->raw_csv);
    strbuf_init(&c->details);
}

void ncu_capture_release(ncu_capture *c)
{
    free(c->report_path);
    strbuf_release(&c->log);
    strbuf_release(&c->raw_csv);
    strbuf_release(&c->details);
    memset(c, 0, sizeof(*c));
}

const char *ncu_status_name(ncu_status s)
{
    static const char *const names[] = { "ok", "ncu_not_found", "no_permission",
                                         "target_failed", "timeout", "no_kernels",
                                         "failed" };
    return (int)s >= 0 && (size_t)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/* Appends the first line of output that starts with prefix (without the newline). */
static bool add_line_with(const char *output, const char *needle, strbuf *out)
{
    const char *p = strstr(output, needle);
    if (!p)
        return false;
    const char *start = p;
    while (start > output && start[-1] != '\n')
        start--;
    size_t n = strcspn(start, "\n");
    if (n > 300)
        n = 300;
    strbuf_add(out, start, n);
    return true;
}

ncu_status ncu_classify(const char *output, int exit_code, bool timed_out, strbuf *err)
{
    const char *out = output ? output : "";
    if (strstr(out, "ERR_NVGPUCTRPERM")) {
        strbuf_adds(err, "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): "
                         "run as root, or allow all users with "
                         "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in "
                         "/etc/modprobe.d/nvidia-profiling.conf and reload the driver or "
                         "reboot (https://developer.nvidia.com/ERR_NVGPUCTRPERM); "
                         "in a container, start it with --cap-add=SYS_ADMIN");
        return NCU_NO_PERMISSION;
    }
    if (timed_out) {
        strbuf_adds(err, "profiling ran past its time limit and was stopped: profile "
                         "fewer kernels (a kernel filter) or raise the limit; ncu replays "
                         "each kernel once per counter pass, so a slow kernel costs ~30x");
        return NCU_TIMEOUT;
    }
    if (strstr(out, "The application returned an error code") ||
        strstr(out, "application terminated") || strstr(out, "Application terminated") ||
        (exit_code >= 128 && !strstr(out, "==PROF== Disconnected"))) {
        strbuf_adds(err, "the profiled program failed under ncu: ");
        if (!add_line_with(out, "==ERROR==", err))
            strbuf_addf(err, "exit status %d", exit_code);
        strbuf_adds(err, "; the kernel may crash only under the profiler's replay "
                         "(uninitialised memory, a race): run it under compute-sanitizer");
        return NCU_TARGET_FAILED;
    }
    if (strstr(out, "No kernels were profiled")) {
        strbuf_adds(err, "ncu profiled no kernels: the candidate launched nothing between "
                         "cudaProfilerStart and cudaProfilerStop, or the kernel filter "
                         "matched none");
        return NCU_NO_KERNELS;
    }
    if (exit_code != 0 || strstr(out, "==ERROR==")) {
        strbuf_adds(err, "ncu failed: ");
        if (!add_line_with(out, "==ERROR==", err))
            strbuf_addf(err, "exit status %d", exit_code);
        return NCU_FAILED;
    }
    return NCU_OK;
}

/* Runs argv with a limit; stdout and stderr of the child both land in *combined
 * (stdout first). Returns proc_run's result; r is filled for the caller. */
static int run_capture(char **argv, const char *const *env_add, double timeout_s,
                       size_t cap, proc_result *r)
{
    proc_opts po;
    memset(&po, 0, sizeof(po));
    po.argv = (const char *const *)argv;
    po.env_add = env_add;
    po.timeout_s = timeout_s;
    po.max_output = cap;
    return proc_run(&po, r);
}

static int import_page(const char *ncu, const char *rep, const char *page, double limit,
                       strbuf *out, strbuf *err)
{
    char **argv = ncu_import_argv(ncu, rep, page);
    proc_result r;
    proc_result_init(&r);
    int rc = run_capture(argv, NULL, limit, NCU_PAGE_MAX, &r);
    int ok = rc == 0 && !r.timed_out && r.exit_code == 0 && !r.truncated;
    if (ok) {
        strbuf_add(out, r.out.buf ? r.out.buf : "", r.out.len);
    } else {
        strbuf_addf(err, "reading the %s page of '%s' failed: ", page, rep);
        if (r.timed_out)
            strbuf_addf(err, "time limit of %.0f s reached", limit);
        else if (r.truncated)
            strbuf_adds(err, "output over the size limit");
        else if (r.err.len)
            strbuf_add(err, r.err.buf, r.err.len > 300 ? 300 : r.err.len);
        else
            strbuf_addf(err, "exit status %d", r.exit_code);
    }
    proc_result_release(&r);
    ncu_argv_free(argv);
    return ok ? 0 : -1;
}

static int profile_once(const ncu_opts *o, const char *ncu, ncu_capture *cap, strbuf *err)
{
    double limit = o->timeout_s > 0 ? o->timeout_s : 600;
    char **argv = ncu_profile_argv(o, ncu);
    proc_result r;
    proc_result_init(&r);
    double t0 = now_seconds();
    int rc = run_capture(argv, o->env_add, limit, NCU_LOG_MAX, &r);
    cap->profile_s = now_seconds() - t0;
    ncu_argv_free(argv);
    strbuf_add(&cap->log, strbuf_str(&r.out), r.out.len);
    strbuf_add(&cap->log, strbuf_str(&r.err), r.err.len);
    cap->target_exit = r.exit_code;
    if (rc != 0) {
        cap->status = NCU_NOT_FOUND;
        strbuf_addf(err, "could not start '%s': %s", ncu, strbuf_str(&r.err));
        proc_result_release(&r);
        return -1;
    }
    cap->status = ncu_classify(strbuf_str(&cap->log), r.exit_code, r.timed_out, err);
    proc_result_release(&r);
    if (cap->status == NCU_OK && !file_exists(cap->report_path)) {
        cap->status = NCU_FAILED;
        strbuf_addf(err, "ncu finished but wrote no report at '%s'", cap->report_path);
    }
    return cap->status == NCU_OK ? 0 : -1;
}

int ncu_run(const ncu_opts *o, ncu_capture *cap, strbuf *err)
{
    double t0 = now_seconds();
    char *ncu = ncu_find(o->ncu);
    if (!ncu) {
        cap->status = NCU_NOT_FOUND;
        if (o->ncu)
            strbuf_addf(err, "ncu not found at '%s': check the path", o->ncu);
        else
            strbuf_adds(err, "ncu (Nsight Compute) not found in PATH or /usr/local/cuda/bin: "
                             "install it with the CUDA toolkit (package "
                             "'cuda-nsight-compute-<version>' or 'nsight-compute') and put "
                             "its directory on PATH");
        return -1;
    }
    free(cap->report_path);
    cap->report_path = xasprintf("%s.ncu-rep", o->report_base);
    double ilimit = o->import_timeout_s > 0 ? o->import_timeout_s : 120;
    int rc = profile_once(o, ncu, cap, err);
    if (rc == 0)
        rc = import_page(ncu, cap->report_path, "raw", ilimit, &cap->raw_csv, err);
    if (rc == 0)
        rc = import_page(ncu, cap->report_path, "details", ilimit, &cap->details, err);
    if (rc != 0 && cap->status == NCU_OK)
        cap->status = NCU_FAILED;
    cap->total_s = now_seconds() - t0;
    free(ncu);
    return rc;
}

/* ================================================================ numbers and units */

double ncu_parse_number(const char *s)
{
    char buf[64];
    size_t n = 0;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return NAN;
    for (; *s && n + 1 < sizeof(buf); s++) {
        if (*s == ',')
            continue;
        if (!(isdigit((unsigned char)*s) || strchr("+-.eE", *s)))
            break;
        buf[n++] = *s;
    }
    while (isspace((unsigned char)*s))
        s++;
    if (*s || n == 0)
        return NAN;
    buf[n] = '\0';
    char *end = NULL;
    double v = strtod(buf, &end);
    if (!end || *end)
        return NAN;
    return v;
}

/* SI prefix value of c, or 0 when c is no prefix. ncu's "Kbyte" is 1000 bytes. */
static double si_prefix(char c)
{
    switch (c) {
    case 'n': return 1e-9;
    case 'u': return 1e-6;
    case 'm': return 1e-3;
    case 'k': case 'K': return 1e3;
    case 'M': return 1e6;
    case 'G': return 1e9;
    case 'T': return 1e12;
    case 'P': return 1e15;
    default: return 0;
    }
}

/* Normalises one unit word (no '/'): returns the base name and the scale. */
static const char *unit_word(const char *w, size_t n, double *scale)
{
    static const struct { const char *word; const char *base; double scale; } fixed[] = {
        { "ns", "s", 1e-9 }, { "us", "s", 1e-6 }, { "ms", "s", 1e-3 }, { "s", "s", 1 },
        { "sec", "s", 1 }, { "second", "s", 1 }, { "nsecond", "s", 1e-9 },
        { "usecond", "s", 1e-6 }, { "msecond", "s", 1e-3 },
        { "B", "byte", 1 }, { "KB", "byte", 1e3 }, { "MB", "byte", 1e6 },
        { "GB", "byte", 1e9 }, { "TB", "byte", 1e12 },
        { "KiB", "byte", 1024.0 }, { "MiB", "byte", 1048576.0 },
        { "GiB", "byte", 1073741824.0 },
    };
    static const char *const bases[] = { "byte", "hz", "cycle", "inst", "sector",
                                         "warp", "thread", "block", "request", "wavefront" };
    *scale = 1;
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        if (strlen(fixed[i].word) == n && !strncmp(w, fixed[i].word, n)) {
            *scale = fixed[i].scale;
            return fixed[i].base;
        }
    for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        size_t bl = strlen(bases[i]);
        if (n == bl + 1 && si_prefix(w[0]) != 0 && !strncasecmp(w + 1, bases[i], bl)) {
            *scale = si_prefix(w[0]);
            return bases[i];
        }
        if (n == bl && !strncasecmp(w, bases[i], bl))
            return bases[i];
    }
    return NULL;
}

void ncu_unit_normalise(const char *unit, strbuf *out, double *scale)
{
    *scale = 1;
    const char *p = unit ? unit : "";
    bool first = true;
    while (*p) {
        size_t n = strcspn(p, "/");
        double s = 1;
        const char *base = unit_word(p, n, &s);
        if (!first)
            strbuf_addc(out, '/');
        if (base) {
            strbuf_adds(out, base);
            *scale = first ? *scale * s : *scale / s;
        } else {
            strbuf_add(out, p, n);
        }
        first = false;
        p += n;
        if (*p == '/')
            p++;
    }
}

/* ================================================================ CSV rows */

/* Splits one CSV line of quoted fields ("a","b,c","d""e") into fields. Unquoted
 * fields are accepted too. Returns the number of fields. */
static size_t csv_split(const char *line, size_t len, char ***fields_out)
{
    char **fields = NULL;
    size_t n = 0, alloc = 0;
    size_t i = 0;
    while (i <= len) {
        strbuf f = STRBUF_INIT;
        strbuf_init(&f);
        if (i < len && line[i] == '"') {
            i++;
            while (i < len) {
                if (line[i] == '"' && i + 1 < len && line[i + 1] == '"') {
                    strbuf_addc(&f, '"');
                    i += 2;
                } else if (line[i] == '"') {
                    i++;
                    break;
                } else {
                    strbuf_addc(&f, line[i++]);
                }
            }
            while (i < len && line[i] != ',')
                i++;
        } else {
            while (i < len && line[i] != ',')
                strbuf_addc(&f, line[i++]);
        }
        if (n + 1 > alloc) {
            alloc = alloc ? 2 * alloc : 64;
            fields = xrealloc(fields, alloc * sizeof(*fields));
        }
        fields[n++] = f.buf ? strbuf_detach(&f) : xstrdup("");
        i++; /* the comma, or past the end */
    }
    *fields_out = fields;
    return n;
}

static void free_fields(char **f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(f[i]);
    free(f);
}

/* The next line of text[*pos..len): its start and length without "\r\n"/"\n". */
static bool next_line(const char *text, size_t len, size_t *pos, const char **line,
                      size_t *n)
{
    if (*pos >= len)
        return false;
    const char *s = text + *pos;
    const char *e = memchr(s, '\n', len - *pos);
    size_t l = e ? (size_t)(e - s) : len - *pos;
    *pos += l + (e ? 1 : 0);
    if (l && s[l - 1] == '\r')
        l--;
    *line = s;
    *n = l;
    return true;
}

static bool is_header(const char *line, size_t n)
{
    return n > 6 && !strncmp(line, "\"ID\",", 5);
}

static const ncu_table *sort_table;

static int cmp_col(const void *a, const void *b)
{
    return strcmp(sort_table->names[*(const size_t *)a], sort_table->names[*(const size_t *)b]);
}

static void build_index(ncu_table *t)
{
    t->order = xmalloc((t->ncols ? t->ncols : 1) * sizeof(*t->order));
    for (size_t i = 0; i < t->ncols; i++)
        t->order[i] = i;
    sort_table = t;
    qsort(t->order, t->ncols, sizeof(*t->order), cmp_col);
    sort_table = NULL;
}

static void set_units(ncu_table *t, char **units, size_t n)
{
    t->units = xcalloc(t->ncols, sizeof(*t->units));
    t->scale = xcalloc(t->ncols, sizeof(*t->scale));
    for (size_t i = 0; i < t->ncols; i++) {
        strbuf u = STRBUF_INIT;
        strbuf_init(&u);
        ncu_unit_normalise(i < n ? units[i] : "", &u, &t->scale[i]);
        t->units[i] = u.buf ? strbuf_detach(&u) : xstrdup("");
    }
}

static void add_launch(ncu_table *t, char **fields)
{
    t->launches = xrealloc(t->launches, (t->nlaunches + 1) * sizeof(*t->launches));
    ncu_launch *l = &t->launches[t->nlaunches++];
    l->text = fields;
    l->value = xmalloc(t->ncols * sizeof(*l->value));
    for (size_t i = 0; i < t->ncols; i++)
        l->value[i] = ncu_parse_number(fields[i]) * t->scale[i];
    long kc = ncu_table_col(t, "Kernel Name");
    l->kernel = kc >= 0 ? fields[kc] : "";
    long ic = ncu_table_col(t, "ID");
    l->id = ic >= 0 && !isnan(l->value[ic]) ? (int)l->value[ic] : (int)t->nlaunches - 1;
}

int ncu_table_parse(const char *text, size_t len, ncu_table *t, strbuf *err)
{
    memset(t, 0, sizeof(*t));
    size_t pos = 0;
    const char *line;
    size_t n;
    bool found = false;
    while (next_line(text, len, &pos, &line, &n))
        if (is_header(line, n)) {
            found = true;
            break;
        }
    if (!found) {
        strbuf_adds(err, "no ncu CSV header (a line starting with \"ID\",) in the output: "
                         "was it made with 'ncu --csv --page raw'?");
        return -1;
    }
    t->ncols = csv_split(line, n, &t->names);
    build_index(t);
    if (!next_line(text, len, &pos, &line, &n) || n == 0 || line[0] != '"') {
        strbuf_adds(err, "the ncu CSV has a header but no units row after it");
        ncu_table_release(t);
        return -1;
    }
    char **units;
    size_t nu = csv_split(line, n, &units);
    set_units(t, units, nu);
    free_fields(units, nu);
    size_t row = 2;
    while (next_line(text, len, &pos, &line, &n)) {
        row++;
        if (n == 0 || line[0] != '"')
            continue; /* trailing ==PROF== lines or program output */
        char **fields;
        size_t nf = csv_split(line, n, &fields);
        if (nf != t->ncols) {
            strbuf_addf(err, "ncu CSV row %zu has %zu fields where the header has %zu",
                        row, nf, t->ncols);
            free_fields(fields, nf);
            ncu_table_release(t);
            return -1;
        }
        add_launch(t, fields);
    }
    return 0;
}

void ncu_table_release(ncu_table *t)
{
    for (size_t l = 0; l < t->nlaunches; l++) {
        free_fields(t->launches[l].text, t->ncols);
        free(t->launches[l].value);
    }
    free(t->launches);
    if (t->names)
        free_fields(t->names, t->ncols);
    if (t->units)
        free_fields(t->units, t->ncols);
    free(t->scale);
    free(t->order);
    memset(t, 0, sizeof(*t));
}

long ncu_table_col(const ncu_table *t, const char *name)
{
    size_t lo = 0, hi = t->ncols;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->names[t->order[mid]], name);
        if (c == 0)
            return (long)t->order[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

double ncu_value(const ncu_table *t, const ncu_launch *l, const char *name)
{
    long c = ncu_table_col(t, name);
    return c >= 0 ? l->value[c] : NAN;
}

const char *ncu_text(const ncu_table *t, const ncu_launch *l, const char *name)
{
    long c = ncu_table_col(t, name);
    return c >= 0 ? l->text[c] : NULL;
}

/* ================================================================ the details page */

void ncu_details_release(ncu_details *d)
{
    for (size_t k = 0; k < d->nkernels; k++) {
        ncu_details_kernel *dk = &d->kernels[k];
        for (size_t a = 0; a < dk->nadvice; a++) {
            free(dk->advice[a].section);
            free(dk->advice[a].text);
        }
        free(dk->advice);
        free(dk->name);
    }
    free(d->kernels);
    memset(d, 0, sizeof(*d));
}

static size_t indent_of(const char *line, size_t n)
{
    size_t i = 0;
    while (i < n && line[i] == ' ')
        i++;
    return i;
}

/* "  name (8, 8, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 9.0": the name. */
static char *kernel_header_name(const char *line, size_t n)
{
    strbuf l = STRBUF_INIT;
    strbuf_init(&l);
    strbuf_add(&l, line, n);
    char *ctx = strstr(l.buf, ", Context ");
    char *name = NULL;
    if (ctx) {
        *ctx = '\0';
        char *x = strstr(l.buf, ")x(");
        char *cut = NULL;
        if (x) {
            /* back up to the " (" that opens the grid tuple */
            for (char *p = x; p > l.buf; p--)
                if (p[0] == '(' && p[-1] == ' ') {
                    cut = p - 1;
                    break;
                }
        }
        if (cut)
            *cut = '\0';
        const char *s = l.buf;
        while (*s == ' ')
            s++;
        name = xstrdup(s);
    }
    strbuf_release(&l);
    return name;
}

static void collapse_append(strbuf *sb, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (isspace((unsigned char)c)) {
            if (sb->len && sb->buf[sb->len - 1] != ' ')
                strbuf_addc(sb, ' ');
        } else {
            strbuf_addc(sb, c);
        }
    }
}

static ncu_advice *new_advice(ncu_details_kernel *k, const char *kind, const char *section)
{
    k->advice = xrealloc(k->advice, (k->nadvice + 1) * sizeof(*k->advice));
    ncu_advice *a = &k->advice[k->nadvice++];
    memset(a, 0, sizeof(*a));
    memcpy(a->kind, kind, 3);
    a->section = xstrdup(section ? section : "");
    a->est_speedup = NAN;
    return a;
}

/* Pulls "Est. Speedup: 51.52%" / "Est. Local Speedup: 75%" off the front of text. */
static void take_estimate(ncu_advice *a, strbuf *text)
{
    const char *s = text->buf;
    bool local = str_starts_with(s, "Est. Local Speedup:");
    if (!local && !str_starts_with(s, "Est. Speedup:"))
        return;
    const char *num = strchr(s, ':') + 1;
    char *end = NULL;
    double v = strtod(num, &end);
    if (end == num)
        return;
    a->est_speedup = v;
    a->local = local;
    if (*end == '%')
        end++;
    while (*end == ' ')
        end++;
    size_t off = (size_t)(end - s);
    memmove(text->buf, text->buf + off, text->len - off + 1);
    text->len -= off;
}

static void finish_advice(ncu_advice *a, strbuf *text)
{
    if (!a)
        return;
    strbuf_trim_end(text);
    take_estimate(a, text);
    a->text = text->buf ? strbuf_detach(text) : xstrdup("");
    strbuf_init(text);
}

int ncu_details_parse(const char *text, ncu_details *d, strbuf *err)
{
    memset(d, 0, sizeof(*d));
    size_t len = strlen(text), pos = 0, n;
    const char *line;
    ncu_details_kernel *cur = NULL;
    ncu_advice *adv = NULL;
    strbuf atext = STRBUF_INIT, section = STRBUF_INIT;
    strbuf_init(&atext);
    strbuf_init(&section);
    while (next_line(text, len, &pos, &line, &n)) {
        size_t ind = indent_of(line, n);
        bool advice_start = ind == 4 && n >= 10 &&
                            (!strncmp(line + 4, "OPT ", 4) || !strncmp(line + 4, "WRN ", 4) ||
                             !strncmp(line + 4, "INF ", 4));
        if (adv && ind >= 10 && !advice_start) {
            collapse_append(&atext, line, n);
            continue;
        }
        if (adv) {
            finish_advice(adv, &atext);
            adv = NULL;
        }
        if (ind == 2 && n > 2 && strstr(line, ", Context ") && memmem(line, n, "CC ", 3)) {
            d->kernels = xrealloc(d->kernels, (d->nkernels + 1) * sizeof(*d->kernels));
            cur = &d->kernels[d->nkernels++];
            memset(cur, 0, sizeof(*cur));
            cur->name = kernel_header_name(line, n);
            if (!cur->name)
                cur->name = xstrdup("?");
            strbuf_reset(&section);
        } else if (cur && ind == 4 && n > 13 && !strncmp(line + 4, "Section: ", 9)) {
            strbuf_reset(&section);
            strbuf_add(&section, line + 13, n - 13);
            strbuf_trim_end(&section);
        } else if (cur && advice_start) {
            adv = new_advice(cur, line + 4, strbuf_str(&section));
            collapse_append(&atext, line + 7, n - 7);
            /* drop the leading space collapse_append may have kept */
            if (atext.len && atext.buf[0] == ' ')
                memmove(atext.buf, atext.buf + 1, atext.len--);
        }
    }
    if (adv)
        finish_advice(adv, &atext);
    strbuf_release(&atext);
    strbuf_release(&section);
    (void)err;
    return 0;
}

/* ================================================================ names */

void ncu_short_name(const char *kernel, strbuf *out)
{
    const char *s = kernel ? kernel : "";
    if (str_starts_with(s, "void "))
        s += 5;
    int depth = 0;
    size_t start = out->len;
    for (; *s; s++) {
        if (*s == '<')
            depth++;
        else if (*s == '>')
            depth--;
        else if (depth == 0 && *s == '(')
            break;
        else if (depth == 0)
            strbuf_addc(out, *s);
    }
    strbuf_trim_end(out);
    if (out->len == start)
        strbuf_adds(out, kernel ? kernel : "?");
}
