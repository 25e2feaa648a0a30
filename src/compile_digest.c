/*
 * compile_digest: the digest of a compiler log (see compile_digest.h).
 *
 * DESIGN: one pass over the log's lines. A line that opens a diagnostic (EDG
 * "file(12): error: ...", gcc "file:12:5: error: ...", "ptxas error : ...", a linker
 * "undefined reference", "nvcc fatal : ...") starts a record; the lines after it (EDG's
 * "detected during ... at line N of file" notes) and, for gcc, the "required from" lines
 * before it, give the candidate line when the error itself sits in a header. Records
 * with the same message are merged (the other candidate lines are listed). Then the
 * first distinct records are printed, each with the candidate line quoted, until the
 * size cap.
 */
#include "compile_digest.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define DEFAULT_MAX_CHARS 2000
#define DEFAULT_MAX_ERRORS 5
#define MAX_MESSAGE 320
#define MAX_QUOTE 160
#define MAX_OTHER_LINES 6
#define MAX_DIAGS 256

typedef struct diag {
    char *msg;        /* the message, without location */
    char *where;      /* shortened header location when the error is not in the candidate */
    const char *tool; /* "ptxas", "link", "nvcc", or NULL for the compiler proper */
    char *echo;       /* the source line the compiler echoed, if any */
    int cand_line;    /* candidate line, 0 when unknown */
    int count;        /* how many times this message was reported */
    int other[MAX_OTHER_LINES];
    int n_other;
} diag;

typedef struct digest_state {
    const compile_digest_opts *o;
    diag d[MAX_DIAGS];
    int n;              /* distinct records */
    int total;          /* all error reports, repeats included */
    diag *cur;          /* the record the following note lines belong to */
    bool cur_fresh;     /* cur was created by the last header (not merged) */
    bool cur_mapped;    /* the last report already got its candidate line */
    bool want_echo;     /* the next line may be the echoed source line */
    int pending_line;   /* gcc: candidate line from "required from" lines before a header */
    char *link_fn;      /* linker: the function named by "in function `f':" */
} digest_state;

/* ---- small text helpers ---- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* True when file names the candidate (same path, or same base name). */
static bool is_candidate(const digest_state *st, const char *file, size_t len)
{
    const char *c = st->o->candidate;
    if (!c || !*c)
        return false;
    if (strlen(c) == len && !strncmp(c, file, len))
        return true;
    char *f = xstrndup(file, len);
    bool same = !strcmp(base_name(f), base_name(c));
    free(f);
    return same;
}

/* "…/include/cute/stride.hpp" -> "cute/stride.hpp"; other paths -> base name. */
static char *short_path(const char *file, size_t len)
{
    char *f = xstrndup(file, len);
    const char *inc = NULL;
    for (const char *p = strstr(f, "/include/"); p; p = strstr(p + 1, "/include/"))
        inc = p + strlen("/include/");
    char *s = xstrdup(inc ? inc : base_name(f));
    free(f);
    return s;
}

static char *trimmed_dup(const char *s, size_t max)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n <= max)
        return xstrndup(s, n);
    char *r = xmalloc(max + 4);
    memcpy(r, s, max);
    memcpy(r + max, "...", 4);
    return r;
}

/* Parses digits at s; returns the number and sets *end, or -1. */
static int parse_int(const char *s, const char **end)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    long v = strtol(s, (char **)end, 10);
    return v > 0 && v < 10000000 ? (int)v : -1;
}

/* ---- records ---- */

static diag *find_diag(digest_state *st, const char *msg)
{
    for (int i = 0; i < st->n; i++)
        if (!strcmp(st->d[i].msg, msg))
            return &st->d[i];
    return NULL;
}

static void note_other_line(diag *d, int line)
{
    if (line <= 0 || line == d->cand_line)
        return;
    for (int i = 0; i < d->n_other; i++)
        if (d->other[i] == line)
            return;
    if (d->n_other < MAX_OTHER_LINES)
        d->other[d->n_other++] = line;
}

/* Records one error report; takes msg and where. */
static void add_diag(digest_state *st, const char *tool, char *msg, char *where, int line)
{
    st->total++;
    diag *d = find_diag(st, msg);
    st->want_echo = false;
    st->cur_mapped = line > 0;
    if (d) {
        d->count++;
        free(msg);
        free(where);
        st->cur = d;
        st->cur_fresh = false;
        if (line > 0 && d->cand_line <= 0)
            d->cand_line = line;
        else
            note_other_line(d, line);
        return;
    }
    if (st->n == MAX_DIAGS) {
        free(msg);
        free(where);
        st->cur = NULL;
        return;
    }
    d = &st->d[st->n++];
    memset(d, 0, sizeof *d);
    d->msg = msg;
    d->where = where;
    d->tool = tool;
    d->cand_line = line;
    d->count = 1;
    st->cur = d;
    st->cur_fresh = true;
    st->want_echo = tool == NULL;
}

/* A candidate line learnt after the header (EDG notes): the innermost one wins. */
static void attach_line(digest_state *st, int line)
{
    diag *d = st->cur;
    if (!d || line <= 0 || st->cur_mapped)
        return;
    st->cur_mapped = true;
    if (d->cand_line <= 0)
        d->cand_line = line;
    else if (!st->cur_fresh)
        note_other_line(d, line);
}

/* ---- line parsers ---- */

/* Severity text after "): " or ": " that opens an error; returns the message start. */
static const char *error_message(const char *s)
{
    static const char *const kinds[] = { "catastrophic error", "fatal error", "error" };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t k = strlen(kinds[i]);
        if (strncmp(s, kinds[i], k) != 0)
            continue;
        s += k;
        if (*s == ' ' && s[1] == '#') { /* EDG "error #20-D:" */
            s = strchr(s, ':');
            if (!s)
                return NULL;
        }
        if (*s != ':')
            return NULL;
        return s + 1;
    }
    return NULL;
}

/* EDG: "file(12): error: msg". */
static bool parse_edg(digest_state *st, const char *line)
{
    for (const char *p = strchr(line, '('); p; p = strchr(p + 1, '(')) {
        const char *end;
        int n = parse_int(p + 1, &end);
        if (n < 0 || strncmp(end, "): ", 3) != 0)
            continue;
        const char *msg = error_message(end + 3);
        if (!msg)
            return false;
        bool cand = is_candidate(st, line, (size_t)(p - line));
        char *where = NULL;
        if (!cand) {
            char *sp = short_path(line, (size_t)(p - line));
            where = xasprintf("%s:%d", sp, n);
            free(sp);
        }
        add_diag(st, NULL, trimmed_dup(msg, MAX_MESSAGE), where, cand ? n : 0);
        return true;
    }
    return false;
}

/* gcc: "file:12:5: error: msg" (the column is optional). */
static bool parse_gcc(digest_state *st, const char *line)
{
    const char *colon = strstr(line, ": error: ");
    const char *fatal = strstr(line, ": fatal error: ");
    const char *at = colon && (!fatal || colon < fatal) ? colon : fatal;
    if (!at)
        return false;
    /* walk back over ":col" and ":line" */
    const char *p = at;
    int nums[2] = { 0, 0 }, k = 0;
    while (k < 2 && p > line && isdigit((unsigned char)p[-1])) {
        const char *q = p;
        while (q > line && isdigit((unsigned char)q[-1]))
            q--;
        if (q == line || q[-1] != ':')
            break;
        nums[k++] = atoi(q);
        p = q - 1;
    }
    if (k == 0 || p == line)
        return false;
    int lineno = k == 2 ? nums[1] : nums[0];
    const char *msg = error_message(at + 2);
    if (!msg)
        return false;
    bool cand = is_candidate(st, line, (size_t)(p - line));
    int mapped = cand ? lineno : st->pending_line;
    char *where = NULL;
    if (!cand) {
        char *sp = short_path(line, (size_t)(p - line));
        where = xasprintf("%s:%d", sp, lineno);
        free(sp);
    }
    add_diag(st, NULL, trimmed_dup(msg, MAX_MESSAGE), where, mapped);
    st->pending_line = 0;
    return true;
}

/* EDG note: "... at line 12 of relu.cu"; gcc note: "relu.cu:12:7:   required from here". */
static bool parse_note(digest_state *st, const char *line)
{
    const char *at = strstr(line, " at line ");
    if (at) {
        const char *end;
        int n = parse_int(at + 9, &end);
        if (n > 0 && !strncmp(end, " of ", 4)) {
            const char *file = end + 4;
            if (is_candidate(st, file, strcspn(file, " \t\r")))
                attach_line(st, n);
            return true;
        }
    }
    const char *req = strstr(line, "required from");
    if (!req)
        req = strstr(line, "In instantiation of");
    if (req) {
        const char *c = strchr(line, ':');
        if (c && is_candidate(st, line, (size_t)(c - line))) {
            const char *end;
            int n = parse_int(c + 1, &end);
            if (n > 0)
                st->pending_line = n;
        }
        return true;
    }
    return false;
}

/* ptxas, nvlink, nvcc driver and ld lines. */
static bool parse_tool(digest_state *st, const char *line)
{
    static const struct { const char *prefix, *tool; } tools[] = {
        { "ptxas error", "ptxas" }, { "ptxas fatal", "ptxas" },
        { "nvlink error", "nvlink" }, { "nvlink fatal", "nvlink" },
        { "nvcc fatal", "nvcc" }, { "nvcc error", "nvcc" },
    };
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        if (!str_starts_with(line, tools[i].prefix))
            continue;
        const char *msg = strchr(line, ':');
        add_diag(st, tools[i].tool, trimmed_dup(msg ? msg + 1 : line, MAX_MESSAGE), NULL, 0);
        return true;
    }
    const char *fn = strstr(line, "in function `");
    if (fn) {
        free(st->link_fn);
        fn += strlen("in function `");
        st->link_fn = xstrndup(fn, strcspn(fn, "'"));
        return true;
    }
    const char *undef = strstr(line, "undefined reference to `");
    if (undef) {
        undef += strlen("undefined reference to `");
        int len = (int)strcspn(undef, "'");
        add_diag(st, "link", st->link_fn
                 ? xasprintf("undefined reference to '%.*s' (called from %s)", len, undef, st->link_fn)
                 : xasprintf("undefined reference to '%.*s'", len, undef), NULL, 0);
        return true;
    }
    return false;
}

/* Noise: summaries and linker epilogues that add nothing. */
static bool is_noise(const char *line)
{
    return strstr(line, " detected in the compilation of ") || str_starts_with(line, "collect2:") ||
           str_starts_with(line, "compilation terminated") ||
           strstr(line, "ld returned 1 exit status");
}

static void parse_line(digest_state *st, const char *line)
{
    if (is_noise(line))
        return;
    if (parse_edg(st, line) || parse_gcc(st, line) || parse_tool(st, line))
        return;
    if (parse_note(st, line))
        return;
    if (st->want_echo && st->cur && !st->cur->echo && *line && !strstr(line, "detected during"))
        st->cur->echo = trimmed_dup(line, MAX_QUOTE);
    st->want_echo = false;
}

/* ---- output ---- */

/* Line n of the source (1-based), trimmed; NULL when out of range. */
static char *source_line(const char *src, int n)
{
    if (!src || n <= 0)
        return NULL;
    for (int i = 1; i < n; i++) {
        src = strchr(src, '\n');
        if (!src)
            return NULL;
        src++;
    }
    size_t len = strcspn(src, "\n");
    char *raw = xstrndup(src, len);
    char *t = trimmed_dup(raw, MAX_QUOTE);
    free(raw);
    return t;
}

/* First line of the source that mentions word (for ptxas and link errors). */
static int find_mention(const char *src, const char *word)
{
    if (!src || !word || !*word)
        return 0;
    int n = 1;
    size_t wl = strlen(word);
    for (const char *p = src; *p; n++) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        for (const char *q = p; q + wl <= p + len; q++) {
            bool left = q == p || !(isalnum((unsigned char)q[-1]) || q[-1] == '_');
            bool right = !(isalnum((unsigned char)q[wl]) || q[wl] == '_');
            if (left && right && !strncmp(q, word, wl))
                return n;
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    return 0;
}

/* The plain name inside a mangled '_Z1kPf' or a quoted 'helper'. */
static char *symbol_word(const char *msg)
{
    const char *q = strchr(msg, '\'');
    if (!q)
        return NULL;
    q++;
    if (q[0] == '_' && q[1] == 'Z') {
        const char *p = q + 2;
        if (*p == 'N') /* nested: take the first name */
            p++;
        const char *end;
        int len = parse_int(p, &end);
        return len > 0 ? xstrndup(end, (size_t)len) : NULL;
    }
    return xstrndup(q, strcspn(q, "'("));
}

static void format_diag(const digest_state *st, diag *d, strbuf *b)
{
    const char *cand = base_name(st->o->candidate ? st->o->candidate : "kernel.cu");
    if (d->cand_line <= 0 && d->tool) {
        char *w = symbol_word(d->msg);
        d->cand_line = find_mention(st->o->source, w);
        free(w);
    }
    if (d->tool)
        strbuf_addf(b, "error (%s): ", d->tool);
    else
        strbuf_adds(b, "error: ");
    if (d->cand_line > 0)
        strbuf_addf(b, "%s:%d: ", cand, d->cand_line);
    strbuf_addf(b, "%s\n", d->msg);
    if (d->where)
        strbuf_addf(b, "    (inside %s%s)\n", d->where,
                    d->cand_line > 0 ? ", instantiated from this candidate line" : "");
    char *q = source_line(st->o->source, d->cand_line);
    if (!q && d->echo && !d->where)
        q = xstrdup(d->echo);
    if (q && *q)
        strbuf_addf(b, "    %d | %s\n", d->cand_line, q);
    free(q);
    if (strstr(d->msg, "cg_forward"))
        strbuf_adds(b, "    (cutegen/abi.h declares: CG_EXPORT int cg_forward(const cg_tensor *inputs, int n_inputs, "
                       "cg_tensor *outputs, int n_outputs, void *workspace, size_t workspace_bytes, "
                       "cudaStream_t stream))\n");
    if (d->n_other > 0) {
        strbuf_adds(b, "    (also at line");
        strbuf_adds(b, d->n_other > 1 ? "s" : "");
        for (int i = 0; i < d->n_other; i++)
            strbuf_addf(b, "%s %d", i ? "," : "", d->other[i]);
        strbuf_adds(b, ")\n");
    }
}

/* No recognisable error: the log's last lines. */
static void digest_tail(const char *log, size_t cap, strbuf *out)
{
    size_t len = strlen(log);
    while (len > 0 && isspace((unsigned char)log[len - 1]))
        len--;
    size_t start = len > cap - 60 ? len - (cap - 60) : 0;
    int lines = 0;
    for (size_t i = len; i > start; i--)
        if (log[i - 1] == '\n' && ++lines == 15) {
            start = i;
            break;
        }
    if (len == 0) {
        strbuf_adds(out, "the compiler failed without a message\n");
        return;
    }
    strbuf_adds(out, "the compiler failed; the end of its output:\n");
    strbuf_add(out, log + start, len - start);
    strbuf_addc(out, '\n');
}

static void release_state(digest_state *st)
{
    for (int i = 0; i < st->n; i++) {
        free(st->d[i].msg);
        free(st->d[i].where);
        free(st->d[i].echo);
    }
    free(st->link_fn);
}

void compile_digest(const char *log, const compile_digest_opts *o, strbuf *out)
{
    digest_state st;
    memset(&st, 0, sizeof st);
    st.o = o;
    size_t cap = o->max_chars ? o->max_chars : DEFAULT_MAX_CHARS;
    int max_errors = o->max_errors > 0 ? o->max_errors : DEFAULT_MAX_ERRORS;

    for (const char *p = log; *p;) {
        size_t len = strcspn(p, "\n");
        char *line = xstrndup(p, len);
        size_t l = strlen(line);
        if (l > 0 && line[l - 1] == '\r')
            line[l - 1] = '\0';
        parse_line(&st, line);
        free(line);
        p += len;
        if (*p == '\n')
            p++;
    }
    if (st.n == 0) {
        digest_tail(log, cap, out);
        release_state(&st);
        return;
    }

    size_t start = out->len;
    strbuf_addf(out, "%d error%s (%d distinct)\n", st.total, st.total == 1 ? "" : "s", st.n);
    int shown = 0;
    strbuf block = STRBUF_INIT;
    for (; shown < st.n && shown < max_errors; shown++) {
        strbuf_reset(&block);
        format_diag(&st, &st.d[shown], &block);
        size_t used = out->len - start;
        if (shown > 0 && used + block.len + 80 > cap)
            break;
        if (used + block.len + 80 > cap) { /* the first error alone is too long: cut it */
            strbuf_truncate(&block, cap > used + 80 ? cap - used - 80 : 0);
            strbuf_adds(&block, "...\n");
        }
        strbuf_add(out, block.buf, block.len);
    }
    strbuf_release(&block);
    if (shown < st.n)
        strbuf_addf(out, "(%d more distinct error%s not shown: fix these first, or read the full log)\n",
                    st.n - shown, st.n - shown == 1 ? "" : "s");
    release_state(&st);
}
