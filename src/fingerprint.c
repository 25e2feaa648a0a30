/*
 * fingerprint: structure fingerprints of compiled candidates from ptxas -v, PTX, SASS
 * and cuobjdump resource usage (see fingerprint.h).
 */
#include "fingerprint.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "util.h"

enum { SRC_PTXAS = 1, SRC_PTX = 2, SRC_SASS = 4, SRC_RES = 8 };

static const char *const family_names[FP_COUNT] = {
    "mma", "wgmma", "cp.async", "tma", "ldg128", "ldmatrix", "shfl", "atomic", "local"
};

const char *fp_family_name(fp_family fam)
{
    return (int)fam >= 0 && fam < FP_COUNT ? family_names[fam] : "?";
}

/* ================================================================ kernels */

void fingerprint_init(fingerprint *f)
{
    memset(f, 0, sizeof(*f));
}

void fingerprint_release(fingerprint *f)
{
    for (size_t i = 0; i < f->nkernels; i++) {
        free(f->kernels[i].name);
        free(f->kernels[i].demangled);
    }
    free(f->kernels);
    free(f->text);
    memset(f, 0, sizeof(*f));
}

static fp_kernel *kernel_get(fingerprint *f, const char *name, size_t len)
{
    for (size_t i = 0; i < f->nkernels; i++)
        if (strlen(f->kernels[i].name) == len && !strncmp(f->kernels[i].name, name, len))
            return &f->kernels[i];
    f->kernels = xrealloc(f->kernels, (f->nkernels + 1) * sizeof(*f->kernels));
    fp_kernel *k = &f->kernels[f->nkernels++];
    memset(k, 0, sizeof(*k));
    k->name = xstrndup(name, len);
    k->regs = k->smem = k->stack = k->spill_stores = k->spill_loads = k->barriers = -1;
    return k;
}

/* The next line; *line and *n describe it, without the newline. */
static bool next_line(const char **p, const char **line, size_t *n)
{
    if (!**p)
        return false;
    *line = *p;
    const char *e = strchr(*p, '\n');
    *n = e ? (size_t)(e - *p) : strlen(*p);
    *p = e ? e + 1 : *p + *n;
    return true;
}

/* Copies a line into a NUL-terminated buffer (truncated to cap-1). */
static void line_copy(char *buf, size_t cap, const char *line, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, line, n);
    buf[n] = '\0';
}

/* Integer that follows `key` in s (e.g. "Used " -> 13), or -1. */
static int int_before(const char *s, const char *word)
{
    const char *w = strstr(s, word);
    if (!w)
        return -1;
    const char *p = w;
    while (p > s && p[-1] == ' ')
        p--;
    while (p > s && isdigit((unsigned char)p[-1]))
        p--;
    return isdigit((unsigned char)*p) ? atoi(p) : -1;
}

/* ================================================================ ptxas -v */

int fingerprint_add_ptxas(fingerprint *f, const char *log, strbuf *err)
{
    const char *p = log, *line;
    size_t n;
    fp_kernel *cur = NULL;
    int named = 0;
    char buf[1024];
    while (next_line(&p, &line, &n)) {
        line_copy(buf, sizeof(buf), line, n);
        const char *q = strstr(buf, "Compiling entry function '");
        if (q) {
            q += strlen("Compiling entry function '");
            cur = kernel_get(f, q, strcspn(q, "'"));
            named++;
            continue;
        }
        if (strstr(buf, "Function properties for ")) {
            /* device functions have properties too: only entries count */
            const char *nm = strstr(buf, "for ") + 4;
            size_t l = strcspn(nm, " \r");
            if (!cur || strlen(cur->name) != l || strncmp(cur->name, nm, l))
                cur = NULL;
            continue;
        }
        if (!cur)
            continue;
        if (strstr(buf, "bytes stack frame")) {
            cur->stack = int_before(buf, "bytes stack frame");
            cur->spill_stores = int_before(buf, "bytes spill stores");
            cur->spill_loads = int_before(buf, "bytes spill loads");
        } else if (strstr(buf, "Used ") && strstr(buf, "registers")) {
            cur->regs = int_before(buf, "registers");
            int b = int_before(buf, "barriers");
            cur->barriers = b < 0 ? 0 : b;
            int s = int_before(buf, "bytes smem");
            cur->smem = s < 0 ? 0 : s;
        }
    }
    f->sources |= SRC_PTXAS;
    if (!named) {
        strbuf_adds(err, "no 'Compiling entry function' lines in the ptxas output: was it "
                         "compiled with -Xptxas -v?");
        return -1;
    }
    return named;
}

/* ================================================================ PTX */

static void set_ntid(int out[3], const char *s)
{
    int v[3] = { 1, 1, 1 };
    int got = sscanf(s, "%d , %d , %d", &v[0], &v[1], &v[2]);
    if (got < 1)
        got = sscanf(s, "%d,%d,%d", &v[0], &v[1], &v[2]);
    if (got >= 1)
        memcpy(out, v, sizeof(v));
}

/* Families a PTX instruction belongs to. */
static unsigned ptx_families(const char *ins)
{
    while (*ins == ' ' || *ins == '\t')
        ins++;
    if (*ins == '@') /* predicate */
        ins += strcspn(ins, " \t"), ins += strspn(ins, " \t");
    unsigned m = 0;
    if (str_starts_with(ins, "mma.sync"))
        m |= 1u << FP_MMA;
    if (str_starts_with(ins, "wgmma."))
        m |= 1u << FP_WGMMA;
    if (str_starts_with(ins, "cp.async.bulk") || str_starts_with(ins, "cp.reduce.async.bulk"))
        m |= 1u << FP_TMA;
    else if (str_starts_with(ins, "cp.async."))
        m |= 1u << FP_CP_ASYNC;
    if (str_starts_with(ins, "ld.global")) {
        size_t op = strcspn(ins, " \t");
        char opc[96];
        line_copy(opc, sizeof(opc), ins, op);
        if (strstr(opc, ".v4.") && (strstr(opc, "32") || strstr(opc, ".v4.f32")))
            m |= 1u << FP_LDG128;
        if (strstr(opc, ".v2.") && strstr(opc, "64"))
            m |= 1u << FP_LDG128;
    }
    if (str_starts_with(ins, "ldmatrix"))
        m |= 1u << FP_LDMATRIX;
    if (str_starts_with(ins, "shfl."))
        m |= 1u << FP_SHFL;
    if (str_starts_with(ins, "atom.") || str_starts_with(ins, "red."))
        m |= 1u << FP_ATOMIC;
    if (str_starts_with(ins, "ld.local") || str_starts_with(ins, "st.local"))
        m |= 1u << FP_LOCAL;
    return m;
}

int fingerprint_add_ptx(fingerprint *f, const char *ptx, strbuf *err)
{
    const char *p = ptx, *line;
    size_t n;
    fp_kernel *cur = NULL;
    bool in_body = false;
    int named = 0;
    char buf[1024];
    while (next_line(&p, &line, &n)) {
        line_copy(buf, sizeof(buf), line, n);
        const char *e = strstr(buf, ".entry ");
        if (e && !in_body) {
            e += strlen(".entry ");
            cur = kernel_get(f, e, strcspn(e, "( \t\r"));
            named++;
            continue;
        }
        if (!cur)
            continue;
        const char *t = buf + strspn(buf, " \t");
        if (!in_body) {
            if (str_starts_with(t, ".maxntid"))
                set_ntid(cur->maxntid, t + strlen(".maxntid"));
            else if (str_starts_with(t, ".reqntid"))
                set_ntid(cur->reqntid, t + strlen(".reqntid"));
            else if (str_starts_with(t, ".minnctapersm"))
                cur->minnctapersm = atoi(t + strlen(".minnctapersm"));
            else if (*t == '{')
                in_body = true;
            continue;
        }
        if (buf[0] == '}') { /* the entry's closing brace is at column 0 */
            in_body = false;
            cur = NULL;
            continue;
        }
        cur->families |= ptx_families(t);
    }
    f->sources |= SRC_PTX;
    if (!named) {
        strbuf_adds(err, "no .entry in the PTX: is it PTX (nvcc -ptx) of a file with "
                         "__global__ functions?");
        return -1;
    }
    return named;
}

/* ================================================================ SASS */

/* Families of a SASS line: address comment, optional predicate, opcode
 * ("@P0 LDG.E.128 R4, desc[UR6][R2.64] ;"). */
static unsigned sass_families(const char *line)
{
    const char *s = strstr(line, "*/");
    if (!s)
        return 0;
    s += 2;
    s += strspn(s, " \t");
    if (*s == '@')
        s += strcspn(s, " \t"), s += strspn(s, " \t");
    char op[64];
    line_copy(op, sizeof(op), s, strcspn(s, " \t;"));
    unsigned m = 0;
    if (str_starts_with(op, "HMMA") || str_starts_with(op, "IMMA") ||
        str_starts_with(op, "DMMA") || str_starts_with(op, "BMMA"))
        m |= 1u << FP_MMA;
    if (strstr(op, "GMMA") == op + 1 || str_starts_with(op, "WARPGROUP"))
        m |= 1u << FP_WGMMA;
    if (str_starts_with(op, "LDGSTS") || str_starts_with(op, "LDGDEPBAR"))
        m |= 1u << FP_CP_ASYNC;
    else if (str_starts_with(op, "LDG") && strstr(op, ".128"))
        m |= 1u << FP_LDG128;
    if (str_starts_with(op, "UTMA") || str_starts_with(op, "UBLKCP") ||
        str_starts_with(op, "UBLKRED"))
        m |= 1u << FP_TMA;
    if (str_starts_with(op, "LDSM"))
        m |= 1u << FP_LDMATRIX;
    if (str_starts_with(op, "SHFL"))
        m |= 1u << FP_SHFL;
    if (str_starts_with(op, "ATOM") || (str_starts_with(op, "RED") && !str_starts_with(op, "REDUX")))
        m |= 1u << FP_ATOMIC;
    if (str_starts_with(op, "LDL") || str_starts_with(op, "STL"))
        m |= 1u << FP_LOCAL;
    return m;
}

int fingerprint_add_sass(fingerprint *f, const char *sass, strbuf *err)
{
    const char *p = sass, *line;
    size_t n;
    fp_kernel *cur = NULL;
    int named = 0;
    char buf[1024];
    while (next_line(&p, &line, &n)) {
        line_copy(buf, sizeof(buf), line, n);
        const char *fn = strstr(buf, "Function : ");
        if (fn) {
            fn += strlen("Function : ");
            cur = kernel_get(f, fn, strcspn(fn, " \t\r"));
            named++;
            continue;
        }
        if (cur)
            cur->families |= sass_families(buf);
    }
    f->sources |= SRC_SASS;
    if (!named) {
        strbuf_adds(err, "no 'Function :' in the SASS: was it made by cuobjdump --dump-sass "
                         "of a file with kernels?");
        return -1;
    }
    return named;
}

/* ================================================================ resource usage */

static int field(const char *s, const char *key)
{
    const char *k = strstr(s, key);
    return k ? atoi(k + strlen(key)) : -1;
}

int fingerprint_add_resource_usage(fingerprint *f, const char *res, strbuf *err)
{
    const char *p = res, *line;
    size_t n;
    fp_kernel *cur = NULL;
    int named = 0;
    char buf[1024];
    while (next_line(&p, &line, &n)) {
        line_copy(buf, sizeof(buf), line, n);
        const char *t = buf + strspn(buf, " \t");
        if (str_starts_with(t, "Function ")) {
            t += strlen("Function ");
            cur = kernel_get(f, t, strcspn(t, ":"));
            named++;
            continue;
        }
        if (!cur || !strstr(t, "REG:"))
            continue;
        /* ptxas -v is preferred where both exist (SHARED here includes the 1 KB the
         * driver reserves per block) */
        if (cur->regs < 0)
            cur->regs = field(t, "REG:");
        if (cur->stack < 0)
            cur->stack = field(t, "STACK:");
        if (cur->smem < 0)
            cur->smem = field(t, "SHARED:");
        int local = field(t, "LOCAL:");
        if (local > 0)
            cur->families |= 1u << FP_LOCAL;
        cur = NULL;
    }
    f->sources |= SRC_RES;
    if (!named) {
        strbuf_adds(err, "no 'Function' entries in the resource usage: was it made by "
                         "cuobjdump --dump-resource-usage?");
        return -1;
    }
    return named;
}

/* ================================================================ canonical form */

static int cmp_kernel(const void *a, const void *b)
{
    return strcmp(((const fp_kernel *)a)->name, ((const fp_kernel *)b)->name);
}

/* Demangles every name with one c++filt run when c++filt is in PATH. */
static void demangle_all(fingerprint *f)
{
    char *filt = find_in_path("c++filt");
    if (!filt || !f->nkernels) {
        free(filt);
        return;
    }
    strbuf in = STRBUF_INIT;
    strbuf_init(&in);
    for (size_t i = 0; i < f->nkernels; i++)
        strbuf_addf(&in, "%s\n", f->kernels[i].name);
    const char *argv[] = { filt, NULL };
    proc_opts o;
    memset(&o, 0, sizeof(o));
    o.argv = argv;
    o.stdin_data = in.buf;
    o.stdin_len = in.len;
    o.timeout_s = 10;
    o.max_output = 1 << 20;
    proc_result r;
    proc_result_init(&r);
    if (proc_run(&o, &r) == 0 && r.exit_code == 0) {
        const char *p = strbuf_str(&r.out), *line;
        size_t n;
        for (size_t i = 0; i < f->nkernels && next_line(&p, &line, &n); i++)
            if (strncmp(line, f->kernels[i].name, n) || strlen(f->kernels[i].name) != n)
                f->kernels[i].demangled = xstrndup(line, n);
    }
    proc_result_release(&r);
    strbuf_release(&in);
    free(filt);
}

static void add_families(strbuf *sb, unsigned fams)
{
    bool any = false;
    for (int i = 0; i < FP_COUNT; i++)
        if (fams & (1u << i)) {
            strbuf_addf(sb, "%s%s", any ? "," : "", family_names[i]);
            any = true;
        }
    if (!any)
        strbuf_adds(sb, "-");
}

static void add_ntid(strbuf *sb, const char *what, const int v[3])
{
    if (v[0] > 0)
        strbuf_addf(sb, " %s %dx%dx%d", what, v[0], v[1], v[2]);
}

/* The hashed lines of one kernel. */
static void kernel_structure(const fp_kernel *k, strbuf *sb)
{
    strbuf_addf(sb, "kernel %s\n  shape", k->name);
    add_ntid(sb, "maxntid", k->maxntid);
    add_ntid(sb, "reqntid", k->reqntid);
    if (k->minnctapersm > 0)
        strbuf_addf(sb, " minblocks %d", k->minnctapersm);
    if (k->smem >= 0)
        strbuf_addf(sb, " smem %d", k->smem);
    if (k->spill_stores >= 0)
        strbuf_addf(sb, " spills %s", k->spill_stores + k->spill_loads > 0 ? "yes" : "no");
    strbuf_adds(sb, "\n  families ");
    add_families(sb, k->families);
    strbuf_addc(sb, '\n');
}

/* The unhashed line: resources that move with small changes. */
static void kernel_resources(const fp_kernel *k, strbuf *sb)
{
    strbuf_adds(sb, "  # ");
    if (k->demangled)
        strbuf_addf(sb, "%s; ", k->demangled);
    strbuf_addf(sb, "regs %d, stack %d, spill %d/%d bytes, barriers %d\n", k->regs,
                k->stack, k->spill_stores, k->spill_loads, k->barriers);
}

void fingerprint_finish(fingerprint *f)
{
    qsort(f->kernels, f->nkernels, sizeof(*f->kernels), cmp_kernel);
    demangle_all(f);
    strbuf structure = STRBUF_INIT, text = STRBUF_INIT;
    strbuf_init(&structure);
    strbuf_init(&text);
    for (size_t i = 0; i < f->nkernels; i++) {
        size_t at = structure.len;
        kernel_structure(&f->kernels[i], &structure);
        strbuf_add(&text, structure.buf + at, structure.len - at);
        kernel_resources(&f->kernels[i], &text);
    }
    sha256_hex(structure.buf, structure.len, f->hash);
    strbuf_addf(&text, "sources%s%s%s%s\nhash %s\n", f->sources & SRC_PTXAS ? " ptxas" : "",
                f->sources & SRC_PTX ? " ptx" : "", f->sources & SRC_SASS ? " sass" : "",
                f->sources & SRC_RES ? " resource-usage" : "", f->hash);
    free(f->text);
    f->text = strbuf_detach(&text);
    strbuf_release(&structure);
}

bool fingerprint_equal(const fingerprint *a, const fingerprint *b)
{
    return !strcmp(a->hash, b->hash);
}

static const fp_kernel *find_kernel(const fingerprint *f, const char *name)
{
    for (size_t i = 0; i < f->nkernels; i++)
        if (!strcmp(f->kernels[i].name, name))
            return &f->kernels[i];
    return NULL;
}

static const char *display(const fp_kernel *k)
{
    return k->demangled ? k->demangled : k->name;
}

static void diff_ntid(const char *nm, const char *what, const int a[3], const int b[3],
                      strbuf *out)
{
    if (memcmp(a, b, 3 * sizeof(int)))
        strbuf_addf(out, "%s: %s %dx%dx%d -> %dx%dx%d\n", nm, what, a[0], a[1], a[2], b[0],
                    b[1], b[2]);
}

static void diff_kernel(const fp_kernel *a, const fp_kernel *b, strbuf *out)
{
    const char *nm = display(b);
    unsigned gained = b->families & ~a->families, lost = a->families & ~b->families;
    if (gained || lost) {
        strbuf_addf(out, "%s:", nm);
        for (int i = 0; i < FP_COUNT; i++) {
            if (gained & (1u << i))
                strbuf_addf(out, " +%s", family_names[i]);
            if (lost & (1u << i))
                strbuf_addf(out, " -%s", family_names[i]);
        }
        strbuf_addc(out, '\n');
    }
    if (a->smem != b->smem)
        strbuf_addf(out, "%s: smem %d -> %d\n", nm, a->smem, b->smem);
    diff_ntid(nm, "maxntid", a->maxntid, b->maxntid, out);
    diff_ntid(nm, "reqntid", a->reqntid, b->reqntid, out);
    if (a->minnctapersm != b->minnctapersm)
        strbuf_addf(out, "%s: minblocks %d -> %d\n", nm, a->minnctapersm, b->minnctapersm);
    bool sa = a->spill_stores + a->spill_loads > 0, sb = b->spill_stores + b->spill_loads > 0;
    if (sa != sb)
        strbuf_addf(out, "%s: spills %s -> %s\n", nm, sa ? "yes" : "no", sb ? "yes" : "no");
    if (a->regs != b->regs)
        strbuf_addf(out, "%s: regs %d -> %d (not structural)\n", nm, a->regs, b->regs);
}

void fingerprint_diff(const fingerprint *a, const fingerprint *b, strbuf *out)
{
    for (size_t i = 0; i < a->nkernels; i++)
        if (!find_kernel(b, a->kernels[i].name))
            strbuf_addf(out, "-kernel %s\n", display(&a->kernels[i]));
    for (size_t i = 0; i < b->nkernels; i++) {
        const fp_kernel *ka = find_kernel(a, b->kernels[i].name);
        if (!ka)
            strbuf_addf(out, "+kernel %s\n", display(&b->kernels[i]));
        else
            diff_kernel(ka, &b->kernels[i], out);
    }
}

/* ================================================================ running tools */

static int run_tool(const char *const *argv, double timeout_s, proc_result *r, strbuf *err)
{
    proc_opts o;
    memset(&o, 0, sizeof(o));
    o.argv = argv;
    o.timeout_s = timeout_s;
    o.max_output = 64u << 20;
    if (proc_run(&o, r) != 0) {
        strbuf_addf(err, "could not start '%s': %s", argv[0], strbuf_str(&r->err));
        return -1;
    }
    if (r->timed_out) {
        strbuf_addf(err, "'%s' ran past its time limit of %.0f s", argv[0], timeout_s);
        return -1;
    }
    if (r->exit_code != 0) {
        strbuf_addf(err, "'%s' failed (exit status %d): ", argv[0], r->exit_code);
        const strbuf *msg = r->err.len ? &r->err : &r->out;
        strbuf_add(err, msg->buf, msg->len > 2000 ? 2000 : msg->len);
        strbuf_trim_end(err);
        return -1;
    }
    return 0;
}

/* nvcc flags... mode extra... -o out source */
static const char **nvcc_argv(const char *nvcc, const char *const *flags, const char *mode,
                              const char *extra, const char *out, const char *source)
{
    size_t nf = 0;
    while (flags && flags[nf])
        nf++;
    const char **v = xcalloc(nf + 8, sizeof(*v));
    size_t i = 0;
    v[i++] = nvcc;
    for (size_t j = 0; j < nf; j++)
        v[i++] = flags[j];
    v[i++] = mode;
    if (extra)
        v[i++] = extra;
    v[i++] = "-o";
    v[i++] = out;
    v[i++] = source;
    return v;
}

int fingerprint_compile(const char *nvcc, const char *const *flags, const char *source,
                        double timeout_s, fingerprint *f, strbuf *err)
{
    char dir[] = "/tmp/cutegen-fp-XXXXXX";
    if (!mkdtemp(dir)) {
        strbuf_adds(err, "could not make a temporary directory in /tmp");
        return -1;
    }
    char *ptx = xasprintf("%s/k.ptx", dir), *cubin = xasprintf("%s/k.cubin", dir);
    const char **a1 = nvcc_argv(nvcc, flags, "-ptx", NULL, ptx, source);
    const char **a2 = nvcc_argv(nvcc, flags, "-cubin", "-Xptxas=-v", cubin, source);
    proc_result r;
    proc_result_init(&r);
    int rc = run_tool(a1, timeout_s, &r, err);
    strbuf text = STRBUF_INIT;
    strbuf_init(&text);
    if (rc == 0 && read_file(ptx, &text, 256u << 20) != 0) {
        strbuf_addf(err, "nvcc wrote no PTX at '%s'", ptx);
        rc = -1;
    }
    if (rc == 0)
        rc = fingerprint_add_ptx(f, text.buf, err) < 0 ? -1 : 0;
    proc_result_release(&r);
    proc_result_init(&r);
    if (rc == 0)
        rc = run_tool(a2, timeout_s, &r, err);
    if (rc == 0) {
        /* ptxas -v writes to stderr; a kernel-free file is not an error here */
        strbuf log = STRBUF_INIT;
        strbuf_init(&log);
        strbuf_add(&log, strbuf_str(&r.out), r.out.len);
        strbuf_add(&log, strbuf_str(&r.err), r.err.len);
        strbuf ignore = STRBUF_INIT;
        strbuf_init(&ignore);
        fingerprint_add_ptxas(f, log.buf, &ignore);
        strbuf_release(&ignore);
        strbuf_release(&log);
    }
    if (rc == 0)
        fingerprint_finish(f);
    proc_result_release(&r);
    strbuf_release(&text);
    unlink(ptx);
    unlink(cubin);
    rmdir(dir);
    free(ptx);
    free(cubin);
    free(a1);
    free(a2);
    return rc;
}

static char *find_cuobjdump(const char *configured)
{
    if (configured)
        return is_executable(configured) ? xstrdup(configured) : NULL;
    char *p = find_in_path("cuobjdump");
    if (!p && is_executable("/usr/local/cuda/bin/cuobjdump"))
        p = xstrdup("/usr/local/cuda/bin/cuobjdump");
    return p;
}

int fingerprint_from_so(const char *cuobjdump, const char *so_path, const char *ptxas_log,
                        double timeout_s, fingerprint *f, strbuf *err)
{
    char *tool = find_cuobjdump(cuobjdump);
    if (!tool) {
        strbuf_adds(err, "cuobjdump not found (it comes with the CUDA toolkit, in "
                         "/usr/local/cuda/bin): fingerprint from nvcc's PTX and ptxas -v "
                         "output instead (fingerprint_compile)");
        return -1;
    }
    const char *sass_argv[] = { tool, "--dump-sass", so_path, NULL };
    const char *res_argv[] = { tool, "--dump-resource-usage", so_path, NULL };
    proc_result r;
    proc_result_init(&r);
    int rc = run_tool(sass_argv, timeout_s, &r, err);
    if (rc == 0)
        rc = fingerprint_add_sass(f, strbuf_str(&r.out), err) < 0 ? -1 : 0;
    proc_result_release(&r);
    proc_result_init(&r);
    if (rc == 0)
        rc = run_tool(res_argv, timeout_s, &r, err);
    if (rc == 0)
        rc = fingerprint_add_resource_usage(f, strbuf_str(&r.out), err) < 0 ? -1 : 0;
    if (rc == 0 && ptxas_log)
        rc = fingerprint_add_ptxas(f, ptxas_log, err) < 0 ? -1 : 0;
    if (rc == 0)
        fingerprint_finish(f);
    proc_result_release(&r);
    free(tool);
    return rc;
}
