/*
 * edit: the reply parser and edit applier (see edit.h and docs/edits.md).
 *
 * DESIGN. The reply is copied once with CRLF turned into LF and cut into lines (views
 * into that copy). SEARCH/REPLACE markers are looked for on every line, inside a fence
 * or not; if there is any marker the reply is blocks, else it is a whole file taken
 * from its fenced code. The kernel being edited is an array of line views too, each
 * remembering where it came from (a line number of the kernel the model was shown, or
 * the block that inserted it), so that every report speaks in the line numbers the
 * model saw even after earlier blocks moved things. Applying a block splices that
 * array; nothing is copied until the end. A block is matched exactly first, then with
 * trailing whitespace ignored, then with all indentation ignored; only a unique match
 * is used. For a block that matches nowhere, every SEARCH line is compared with every
 * kernel line (normalised edit distance) and each window of the kernel as many lines
 * long as the SEARCH is scored by the best order-keeping pairing of its lines (a
 * weighted longest common subsequence), so that one missing or extra line does not hide
 * the place the model meant.
 */
#include "edit.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

#define ERROR_CAP 1500       /* r->error, in bytes */
#define EXPLANATION_CAP 1000 /* r->explanation, in bytes */
#define SHOW_COLS 100        /* longest kernel or SEARCH line quoted in a report */
#define SIM_COLS 160         /* line prefix compared for similarity */
#define SIM_BUDGET 20000000  /* edit-distance cells spent on one failed block */
#define WINDOW_SLACK 2       /* kernel lines a window has beyond the SEARCH's count */
#define LISTING_LINES 8      /* most kernel lines quoted as the nearest text */
#define MAX_DIFFS 3          /* differences described per failed block */
#define MAX_MATCHES_SHOWN 8  /* places listed for an ambiguous block */

/* ---------------------------------------------------------------- lines */

typedef struct line {
    const char *s;
    size_t len;
    int origin; /* > 0: line number in the kernel shown to the model; < 0: -block */
} line;

typedef struct lines {
    line *v;
    size_t n, alloc;
} lines;

static void lines_push(lines *l, const char *s, size_t len, int origin)
{
    if (l->n == l->alloc) {
        l->alloc = l->alloc ? 2 * l->alloc : 64;
        l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
    }
    l->v[l->n++] = (line){ s, len, origin };
}

/* Cuts text (LF line ends) into lines; a final newline does not start a line. */
static void lines_split(lines *l, const char *text, bool number)
{
    const char *p = text;
    int no = 1;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lines_push(l, p, len, number ? no : 0);
        no++;
        if (!nl)
            break;
        p = nl + 1;
    }
}

/* A copy of s with every CR that ends a line removed. */
static char *without_cr(const char *s)
{
    size_t n = strlen(s);
    char *out = xmalloc(n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r' && (s[i + 1] == '\n' || s[i + 1] == '\0'))
            continue;
        *o++ = s[i];
    }
    *o = '\0';
    return out;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_ident(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Leading whitespace of a line, in bytes. */
static size_t indent_of(const line *l)
{
    size_t i = 0;
    while (i < l->len && is_space(l->s[i]))
        i++;
    return i;
}

/* The line without trailing whitespace (and, when lead, without leading whitespace). */
static void trimmed(const line *l, bool lead, const char **s, size_t *len)
{
    size_t a = lead ? indent_of(l) : 0, b = l->len;
    while (b > a && is_space(l->s[b - 1]))
        b--;
    *s = l->s + a;
    *len = b - a;
}

static bool is_blank(const line *l)
{
    return indent_of(l) == l->len;
}

/* Matching passes, from strict to lenient. */
enum pass { PASS_EXACT, PASS_TRAILING, PASS_INDENT, PASS_COUNT };

static const char *const pass_words[PASS_COUNT] = {
    "exactly", "ignoring trailing whitespace", "ignoring indentation"
};

static bool line_eq(const line *a, const line *b, enum pass p)
{
    if (p == PASS_EXACT)
        return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
    const char *as, *bs;
    size_t al, bl;
    trimmed(a, p == PASS_INDENT, &as, &al);
    trimmed(b, p == PASS_INDENT, &bs, &bl);
    return al == bl && memcmp(as, bs, al) == 0;
}

/* Start indices in text where all n lines of pat match; returns the count (all of
 * them), storing at most max starts. */
static size_t find_all(const lines *text, const line *pat, size_t n, enum pass p,
                       size_t *starts, size_t max)
{
    size_t count = 0;
    for (size_t w = 0; n <= text->n && w + n <= text->n; w++) {
        size_t i = 0;
        while (i < n && line_eq(&pat[i], &text->v[w + i], p))
            i++;
        if (i == n) {
            if (count < max)
                starts[count] = w;
            count++;
        }
    }
    return count;
}

/* ---------------------------------------------------------------- reply parsing */

typedef struct fence {
    size_t open, close; /* reply line indices of the fence lines; close == lines.n if unclosed */
    char lang[16];      /* the info string's first word, lowercased ("" for a bare fence) */
    bool accepted;      /* a language the kernel may be written in */
} fence;

typedef struct block {
    size_t start;                   /* reply line of the SEARCH marker */
    size_t search, n_search;        /* first line and count of the SEARCH section */
    size_t replace, n_replace;      /* first line and count of the REPLACE section */
} block;

enum marker { MARK_NONE, MARK_SEARCH, MARK_DIVIDER, MARK_REPLACE };

/* <<<<<<< SEARCH, =======, >>>>>>> REPLACE: 5-9 marker characters, surrounding
 * whitespace tolerated. */
static enum marker marker_of(const line *l)
{
    const char *s, *e;
    size_t len;
    trimmed(l, true, &s, &len);
    e = s + len;
    char c = len ? s[0] : 0;
    if (c != '<' && c != '=' && c != '>')
        return MARK_NONE;
    size_t k = 0;
    while (s + k < e && s[k] == c)
        k++;
    if (k < 5 || k > 9)
        return MARK_NONE;
    const char *rest = s + k;
    while (rest < e && is_space(*rest))
        rest++;
    size_t rl = (size_t)(e - rest);
    if (c == '=')
        return rl == 0 ? MARK_DIVIDER : MARK_NONE;
    if (c == '<' && rl == 6 && strncasecmp(rest, "SEARCH", 6) == 0)
        return MARK_SEARCH;
    if (c == '>' && rl == 7 && strncasecmp(rest, "REPLACE", 7) == 0)
        return MARK_REPLACE;
    return MARK_NONE;
}

/* An opening or closing fence: returns the number of backticks (0: not a fence) and
 * points info at what follows them. */
static size_t fence_ticks(const line *l, const char **info, size_t *info_len)
{
    size_t i = indent_of(l), k = 0;
    while (i + k < l->len && l->s[i + k] == '`')
        k++;
    if (k < 3)
        return 0;
    line rest = { l->s + i + k, l->len - i - k, 0 };
    trimmed(&rest, true, info, info_len);
    if (memchr(*info, '`', *info_len))
        return 0; /* inline code such as ```x``` is not a fence */
    return k;
}

static const char *const accepted_langs[] = { "", "cuda", "cu", "cpp", "c++" };

static void find_fences(const lines *rl, fence **out, size_t *n_out)
{
    fence *f = NULL;
    size_t n = 0;
    for (size_t i = 0; i < rl->n; i++) {
        const char *info;
        size_t il;
        size_t ticks = fence_ticks(&rl->v[i], &info, &il);
        if (!ticks)
            continue;
        fence fc = { .open = i, .close = rl->n };
        size_t w = 0;
        while (w < il && !is_space(info[w]) && w + 1 < sizeof(fc.lang)) {
            fc.lang[w] = (char)tolower((unsigned char)info[w]);
            w++;
        }
        fc.lang[w] = '\0';
        for (size_t a = 0; a < sizeof(accepted_langs) / sizeof(accepted_langs[0]); a++)
            if (strcmp(fc.lang, accepted_langs[a]) == 0)
                fc.accepted = true;
        for (size_t j = i + 1; j < rl->n; j++) {
            const char *ci;
            size_t cl;
            if (fence_ticks(&rl->v[j], &ci, &cl) >= ticks && cl == 0) {
                fc.close = j;
                break;
            }
        }
        f = xrealloc(f, (n + 1) * sizeof(*f));
        f[n++] = fc;
        i = fc.close; /* continue after the closing fence */
    }
    *out = f;
    *n_out = n;
}

/* Quotes a line for a report: at most SHOW_COLS bytes, no trailing whitespace. */
static void add_quoted(strbuf *sb, const char *s, size_t len)
{
    while (len && is_space(s[len - 1]))
        len--;
    if (len > SHOW_COLS) {
        strbuf_add(sb, s, SHOW_COLS);
        strbuf_adds(sb, "...");
    } else {
        strbuf_add(sb, s, len);
    }
}

/* Keeps the first cap bytes of sb (cut at a UTF-8 character boundary), marking the cut. */
static void cap_text(strbuf *sb, size_t cap)
{
    if (sb->len <= cap)
        return;
    size_t keep = cap - 3;
    while (keep > 0 && ((unsigned char)sb->buf[keep] & 0xC0) == 0x80)
        keep--;
    strbuf_truncate(sb, keep);
    strbuf_adds(sb, "...");
}

/* The prose: reply lines not marked as code, trimmed, blank runs collapsed, capped. */
static void take_explanation(const lines *rl, const bool *code, strbuf *out)
{
    bool pending_blank = false;
    for (size_t i = 0; i < rl->n; i++) {
        if (code[i])
            continue;
        const line *l = &rl->v[i];
        if (is_blank(l)) {
            pending_blank = out->len > 0;
            continue;
        }
        if (out->len)
            strbuf_adds(out, pending_blank ? "\n\n" : "\n");
        pending_blank = false;
        const char *s;
        size_t len;
        trimmed(l, false, &s, &len);
        strbuf_add(out, s, len);
    }
    cap_text(out, EXPLANATION_CAP);
}

/* ---------------------------------------------------------------- whole file */

/* Does the text define cg_forward ("int cg_forward(")? */
static bool defines_cg_forward(const char *s, size_t len)
{
    static const char name[] = "cg_forward";
    const size_t nl = sizeof(name) - 1;
    for (size_t i = 0; i + nl <= len; i++) {
        if (memcmp(s + i, name, nl) != 0)
            continue;
        if ((i > 0 && is_ident(s[i - 1])) || (i + nl < len && is_ident(s[i + nl])))
            continue;
        size_t j = i + nl;
        while (j < len && isspace((unsigned char)s[j]))
            j++;
        if (j >= len || s[j] != '(')
            continue;
        size_t k = i;
        while (k > 0 && isspace((unsigned char)s[k - 1]))
            k--;
        if (k >= 3 && memcmp(s + k - 3, "int", 3) == 0 && (k == 3 || !is_ident(s[k - 4])))
            return true;
    }
    return false;
}

/* Bytes of the body of fence f, and the body's start and end pointers. */
static size_t fence_body(const lines *rl, const fence *f, const char **start, const char **end)
{
    if (f->close <= f->open + 1) {
        *start = *end = rl->v[f->open].s + rl->v[f->open].len;
        return 0;
    }
    const line *first = &rl->v[f->open + 1], *last = &rl->v[f->close - 1];
    *start = first->s;
    *end = last->s + last->len;
    return (size_t)(*end - *start);
}

static bool body_blank(const char *s, const char *e)
{
    for (; s < e; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}

static void ask_for_code(strbuf *err, bool have_kernel)
{
    if (have_kernel)
        strbuf_adds(err, "answer with the whole kernel file in one ```cuda code block, or with "
                         "SEARCH/REPLACE blocks (<<<<<<< SEARCH, exact lines of the current "
                         "kernel, =======, the new lines, >>>>>>> REPLACE)");
    else
        strbuf_adds(err, "answer with the whole kernel file (it must define cg_forward) in one "
                         "```cuda code block");
}

static void whole_file(const lines *rl, const fence *f, size_t nf, bool have_kernel,
                       edit_result *r)
{
    size_t nacc = 0, ndef = 0, best = nf, best_len = 0;
    bool best_def = false;
    for (size_t i = 0; i < nf; i++) {
        if (!f[i].accepted)
            continue;
        nacc++;
        const char *s, *e;
        size_t len = fence_body(rl, &f[i], &s, &e);
        if (body_blank(s, e))
            continue;
        bool def = defines_cg_forward(s, len);
        ndef += def;
        if (best == nf || (def && !best_def) || (def == best_def && len > best_len)) {
            best = i;
            best_len = len;
            best_def = def;
        }
    }
    if (nacc == 0) {
        r->kind = EDIT_NONE;
        if (nf > 0)
            strbuf_addf(&r->error, "the reply held code only in a ```%s block, which is not "
                        "a kernel language: ", f[0].lang);
        else
            strbuf_adds(&r->error, "the reply held no code: ");
        ask_for_code(&r->error, have_kernel);
        return;
    }
    r->kind = EDIT_WHOLE_FILE;
    if (best == nf) {
        strbuf_adds(&r->error, nacc == 1 ? "the reply's code block is empty: "
                                         : "every code block of the reply is empty: ");
        ask_for_code(&r->error, have_kernel);
        return;
    }
    const char *s, *e;
    fence_body(rl, &f[best], &s, &e);
    strbuf_add(&r->source, s, (size_t)(e - s));
    if (r->source.buf[r->source.len - 1] != '\n')
        strbuf_addc(&r->source, '\n');
    r->ok = true;

    size_t ordinal = 1;
    for (size_t i = 0; i < best; i++)
        ordinal += f[i].accepted;
    if (nacc > 1) {
        strbuf_addf(&r->notes, "the reply held %zu code blocks; took block %zu (reply lines "
                    "%zu-%zu), ", nacc, ordinal, f[best].open + 2, f[best].close);
        if (ndef == 1)
            strbuf_adds(&r->notes, "the one that defines cg_forward\n");
        else if (ndef > 1)
            strbuf_addf(&r->notes, "the longest of the %zu that define cg_forward\n", ndef);
        else
            strbuf_adds(&r->notes, "the longest (none defines cg_forward)\n");
    } else if (!best_def) {
        strbuf_adds(&r->notes, "the code block does not define cg_forward\n");
    }
    if (f[best].close == rl->n)
        strbuf_adds(&r->notes, "the code block is not closed (reply cut short?); took the "
                               "text to the end of the reply\n");
}

/* ---------------------------------------------------------------- blocks: parsing */

/* Parses every block; on a malformed one writes the error and returns -1. */
static int parse_blocks(const lines *rl, bool *code, block **out, size_t *n_out, strbuf *err)
{
    enum { OUTSIDE, IN_SEARCH, IN_REPLACE } state = OUTSIDE;
    block *b = NULL, cur = { 0 };
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < rl->n && rc == 0; i++) {
        enum marker m = marker_of(&rl->v[i]);
        if (state != OUTSIDE || m == MARK_SEARCH || m == MARK_REPLACE)
            code[i] = true;
        switch (state) {
        case OUTSIDE:
            if (m == MARK_SEARCH) {
                cur = (block){ .start = i, .search = i + 1 };
                state = IN_SEARCH;
            } else if (m == MARK_REPLACE) {
                strbuf_addf(err, "malformed SEARCH/REPLACE block: the '>>>>>>> REPLACE' line at "
                            "line %zu of your reply has no '<<<<<<< SEARCH' line before it", i + 1);
                rc = -1;
            }
            break; /* a stray ======= outside a block may be a markdown heading */
        case IN_SEARCH:
            if (m == MARK_DIVIDER) {
                cur.n_search = i - cur.search;
                cur.replace = i + 1;
                state = IN_REPLACE;
            } else if (m != MARK_NONE) {
                strbuf_addf(err, "malformed SEARCH/REPLACE block %zu (line %zu of your reply): "
                            "its SEARCH section has no '=======' line before the '%s' at line %zu",
                            n + 1, cur.start + 1,
                            m == MARK_SEARCH ? "<<<<<<< SEARCH" : ">>>>>>> REPLACE", i + 1);
                rc = -1;
            }
            break;
        case IN_REPLACE:
            if (m == MARK_REPLACE) {
                cur.n_replace = i - cur.replace;
                b = xrealloc(b, (n + 1) * sizeof(*b));
                b[n++] = cur;
                state = OUTSIDE;
            } else if (m != MARK_NONE) {
                strbuf_addf(err, "malformed SEARCH/REPLACE block %zu (line %zu of your reply): "
                            "a '%s' line at line %zu comes before its '>>>>>>> REPLACE' line",
                            n + 1, cur.start + 1,
                            m == MARK_SEARCH ? "<<<<<<< SEARCH" : "=======", i + 1);
                rc = -1;
            }
            break;
        }
    }
    if (rc == 0 && state != OUTSIDE) {
        strbuf_addf(err, "malformed SEARCH/REPLACE block %zu (line %zu of your reply): it has no "
                    "'%s' line (was the reply cut short?)", n + 1, cur.start + 1,
                    state == IN_SEARCH ? "=======" : ">>>>>>> REPLACE");
        rc = -1;
    }
    *out = b;
    *n_out = n + (rc != 0 || state != OUTSIDE);
    return rc;
}

/* ---------------------------------------------------------------- blocks: reporting */

/* "line 12", "a line added by block 1" */
static void add_where(strbuf *sb, const line *l)
{
    if (l->origin > 0)
        strbuf_addf(sb, "line %d", l->origin);
    else
        strbuf_addf(sb, "a line added by block %d", -l->origin);
}

/* "lines 12-14" for a span of the working text, in the model's line numbers. */
static void add_span(strbuf *sb, const lines *text, size_t first, size_t n)
{
    int a = 0, b = 0;
    bool added = false;
    for (size_t i = first; i < first + n && i < text->n; i++) {
        if (text->v[i].origin > 0) {
            if (!a)
                a = text->v[i].origin;
            b = text->v[i].origin;
        } else {
            added = true;
        }
    }
    if (!a)
        strbuf_addf(sb, "lines added by block %d", -text->v[first].origin);
    else if (a == b)
        strbuf_addf(sb, "line %d", a);
    else
        strbuf_addf(sb, "lines %d-%d", a, b);
    if (a && added)
        strbuf_adds(sb, " with lines added by an earlier block");
}

static void add_listing_line(strbuf *sb, const line *l)
{
    if (l->origin > 0)
        strbuf_addf(sb, "  %4d | ", l->origin);
    else
        strbuf_adds(sb, "     + | ");
    add_quoted(sb, l->s, l->len);
    strbuf_addc(sb, '\n');
}

/* Normalised similarity of two lines with their indentation and trailing whitespace
 * ignored: 1 - edit distance / longer length, over the first SIM_COLS bytes. */
static double line_similarity(const line *a, const line *b, int *row)
{
    const char *as, *bs;
    size_t al, bl;
    trimmed(a, true, &as, &al);
    trimmed(b, true, &bs, &bl);
    if (al > SIM_COLS)
        al = SIM_COLS;
    if (bl > SIM_COLS)
        bl = SIM_COLS;
    if (al == 0 && bl == 0)
        return 1.0;
    if (al == 0 || bl == 0)
        return 0.0;
    for (size_t j = 0; j <= bl; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= al; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= bl; j++) {
            int up = row[j];
            int best = diag + (as[i - 1] != bs[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t longer = al > bl ? al : bl;
    return 1.0 - (double)row[bl] / (double)longer;
}

#define PAIR_MIN 0.5 /* lines less similar than this are not paired */

/* Best order-keeping pairing of pattern lines 0..n with text lines w..w+wn, each pair
 * worth its similarity. Fills dp ((n+1) x (wn+1)) and returns the total. */
static double window_score(const double *sim, size_t m, size_t n, size_t w, size_t wn,
                           double *dp)
{
    for (size_t j = 0; j <= wn; j++)
        dp[j] = 0;
    for (size_t i = 1; i <= n; i++) {
        dp[i * (wn + 1)] = 0;
        for (size_t j = 1; j <= wn; j++) {
            double best = dp[(i - 1) * (wn + 1) + j];
            double left = dp[i * (wn + 1) + j - 1];
            if (left > best)
                best = left;
            double s = sim[(i - 1) * m + w + j - 1];
            if (s >= PAIR_MIN && dp[(i - 1) * (wn + 1) + j - 1] + s > best)
                best = dp[(i - 1) * (wn + 1) + j - 1] + s;
            dp[i * (wn + 1) + j] = best;
        }
    }
    return dp[n * (wn + 1) + wn];
}

/* Where two lines first differ, with their indentation ignored: a column (1-based, of
 * the kernel line) and short quotes of both from a little before that point. */
static void describe_line_diff(strbuf *sb, const line *pat, size_t pi, const line *k)
{
    const char *as, *bs;
    size_t al, bl;
    trimmed(pat, true, &as, &al);
    trimmed(k, true, &bs, &bl);
    size_t c = 0;
    while (c < al && c < bl && as[c] == bs[c])
        c++;
    size_t from = c > 20 ? c - 20 : 0;
    while (from > 0 && from < bl && ((unsigned char)bs[from] & 0xC0) == 0x80)
        from--;
    size_t la = al - from < 60 ? al - from : 60, lb = bl - from < 60 ? bl - from : 60;
    strbuf_addf(sb, "  - SEARCH line %zu differs from kernel ", pi + 1);
    add_where(sb, k);
    strbuf_addf(sb, " at column %zu: you have \"%s", indent_of(k) + c + 1, from ? "..." : "");
    strbuf_add(sb, as + from, la);
    strbuf_addf(sb, "%s\", the kernel has \"%s", from + la < al ? "..." : "", from ? "..." : "");
    strbuf_add(sb, bs + from, lb);
    strbuf_addf(sb, "%s\"\n", from + lb < bl ? "..." : "");
}

/* The report for a block that matches nowhere: nearest window, listing, differences. */
static void report_nowhere(strbuf *sb, const lines *text, const line *pat, size_t n,
                           const lines *original, bool earlier_blocks)
{
    size_t m = text->n;
    size_t wn = n + (n > 1 ? WINDOW_SLACK : 0); /* room for lines the SEARCH left out */
    if (wn > m)
        wn = m;
    if (m == 0) {
        strbuf_adds(sb, "there is no kernel yet, so its SEARCH text cannot match anything. "
                        "Answer with the whole kernel file in one ```cuda block.\n");
        return;
    }
    strbuf_adds(sb, "its SEARCH text matches nothing in the current kernel (not even with "
                    "whitespace and indentation ignored).\n");
    /* an elided SEARCH ("// ...") can never match */
    for (size_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        trimmed(&pat[i], true, &s, &len);
        if ((len == 3 && memcmp(s, "...", 3) == 0) ||
            (len >= 6 && memcmp(s, "// ...", 6) == 0)) {
            strbuf_addf(sb, "  SEARCH line %zu elides text (\"", i + 1);
            add_quoted(sb, s, len);
            strbuf_adds(sb, "\"): SEARCH must copy every line, with nothing left out.\n");
            break;
        }
    }
    /* the text is in the kernel shown to the model, but an earlier block changed it */
    if (earlier_blocks) {
        size_t at;
        for (int p = PASS_EXACT; p < PASS_COUNT; p++) {
            if (find_all(original, pat, n, (enum pass)p, &at, 1) == 1) {
                strbuf_addf(sb, "  It is at line %d of the kernel you were shown, but an earlier "
                            "block of this reply changed those lines: blocks apply in order, "
                            "each to the result of the ones before it.\n",
                            original->v[at].origin);
                break;
            }
        }
    }

    /* every SEARCH line against every kernel line: a cheap upper bound first (length and
     * character counts), the edit distance only where the bound allows a pairing and
     * while the budget lasts, the bound itself after that */
    size_t nh = n + m;
    unsigned short (*hist)[64] = xcalloc(nh, sizeof(*hist));
    for (size_t h = 0; h < nh; h++) {
        const line *l = h < n ? &pat[h] : &text->v[h - n];
        const char *ts;
        size_t tl;
        trimmed(l, true, &ts, &tl);
        for (size_t c = 0; c < tl && c < SIM_COLS; c++)
            hist[h][(unsigned char)ts[c] & 63]++;
    }
    long budget = SIM_BUDGET;
    double *sim = xmalloc(n * m * sizeof(*sim));
    int *row = xmalloc((SIM_COLS + 1) * sizeof(*row));
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < m; j++) {
            size_t la = 0, lb = 0, l1 = 0;
            for (int c = 0; c < 64; c++) {
                la += hist[i][c];
                lb += hist[n + j][c];
                l1 += (size_t)abs((int)hist[i][c] - (int)hist[n + j][c]);
            }
            size_t longer = la > lb ? la : lb;
            double bound = longer ? 1.0 - (double)((l1 + 1) / 2) / (double)longer : 1.0;
            if (bound >= PAIR_MIN && budget > 0) {
                budget -= (long)(la * lb);
                sim[i * m + j] = line_similarity(&pat[i], &text->v[j], row);
            } else {
                sim[i * m + j] = bound;
            }
        }
    }
    free(hist);
    double *dp = xmalloc((n + 1) * (wn + 1) * sizeof(*dp));
    size_t best_w = 0;
    double best = -1;
    for (size_t w = 0; w + wn <= m; w++) {
        double s = window_score(sim, m, n, w, wn, dp);
        if (s > best + 1e-9) {
            best = s;
            best_w = w;
        }
    }
    window_score(sim, m, n, best_w, wn, dp); /* again, to walk back through it */

    /* walk the pairing back to front, then describe the first differences */
    size_t i = n, j = wn, k = 0;
    size_t *pi = xmalloc((n + wn + 1) * sizeof(*pi)), *pj = xmalloc((n + wn + 1) * sizeof(*pj));
    while (i > 0 || j > 0) {
        double here = dp[i * (wn + 1) + j];
        if (i > 0 && j > 0) {
            double s = sim[(i - 1) * m + best_w + j - 1];
            if (s >= PAIR_MIN && here == dp[(i - 1) * (wn + 1) + j - 1] + s) {
                pi[k] = i - 1;
                pj[k++] = j - 1;
                i--, j--;
                continue;
            }
        }
        if (i > 0 && here == dp[(i - 1) * (wn + 1) + j]) {
            pi[k] = i - 1; /* a SEARCH line with no partner */
            pj[k++] = (size_t)-1;
            i--;
        } else {
            pi[k] = (size_t)-1; /* a kernel line with no partner */
            pj[k++] = j - 1;
            j--;
        }
    }
    /* kernel lines outside the paired span are just the window's width, not news */
    size_t jlo = (size_t)-1, jhi = 0;
    for (size_t t = 0; t < k; t++) {
        if (pi[t] != (size_t)-1 && pj[t] != (size_t)-1) {
            jlo = pj[t] < jlo ? pj[t] : jlo;
            jhi = pj[t] > jhi ? pj[t] : jhi;
        }
    }
    if (jlo == (size_t)-1) {
        strbuf_adds(sb, "  Nothing in the current kernel resembles it.\n");
        goto out;
    }

    /* the nearest text: the paired span of the best window */
    size_t span = jhi - jlo + 1, first = best_w + jlo;
    int pct = (int)(200.0 * best / (double)(n + span) + 0.5);
    int shown = 0, more = 0;
    strbuf diffs = STRBUF_INIT;
    for (size_t t = k; t-- > 0;) {
        if (pi[t] != (size_t)-1 && pj[t] != (size_t)-1) {
            const line *kl = &text->v[best_w + pj[t]];
            if (line_eq(&pat[pi[t]], kl, PASS_EXACT))
                continue;
            if (shown >= MAX_DIFFS) {
                more++;
                continue;
            }
            if (line_eq(&pat[pi[t]], kl, PASS_INDENT)) {
                strbuf_addf(&diffs, "  - SEARCH line %zu differs from kernel ", pi[t] + 1);
                add_where(&diffs, kl);
                strbuf_adds(&diffs, " only in whitespace\n");
            } else {
                describe_line_diff(&diffs, &pat[pi[t]], pi[t], kl);
            }
            shown++;
            continue;
        }
        if (pi[t] == (size_t)-1 && (jlo == (size_t)-1 || pj[t] < jlo || pj[t] > jhi))
            continue;
        if (shown >= MAX_DIFFS) {
            more++;
            continue;
        }
        if (pi[t] != (size_t)-1) {
            strbuf_addf(&diffs, "  - SEARCH line %zu is not in the kernel: \"", pi[t] + 1);
            add_quoted(&diffs, pat[pi[t]].s + indent_of(&pat[pi[t]]),
                       pat[pi[t]].len - indent_of(&pat[pi[t]]));
            strbuf_adds(&diffs, "\"\n");
        } else {
            const line *kl = &text->v[best_w + pj[t]];
            strbuf_adds(&diffs, "  - kernel ");
            add_where(&diffs, kl);
            strbuf_adds(&diffs, " is missing from your SEARCH: \"");
            add_quoted(&diffs, kl->s + indent_of(kl), kl->len - indent_of(kl));
            strbuf_adds(&diffs, "\"\n");
        }
        shown++;
    }
    /* differences first: when the report must be cut, the listing goes */
    strbuf_adds(sb, pct < 50 ? "  The kernel's text most like it is at " : "  Nearest text in the kernel: ");
    add_span(sb, text, first, span);
    strbuf_addf(sb, " (%d%% similar)%s\n", pct, diffs.len ? ". What differs:" : ".");
    strbuf_add(sb, diffs.buf, diffs.len);
    if (more)
        strbuf_addf(sb, "  - and %d more difference%s\n", more, more > 1 ? "s" : "");
    strbuf_release(&diffs);
    strbuf_adds(sb, "  The kernel there:\n");
    if (span <= LISTING_LINES) {
        for (size_t j2 = 0; j2 < span; j2++)
            add_listing_line(sb, &text->v[first + j2]);
    } else {
        size_t head = LISTING_LINES / 2, tail = LISTING_LINES - head - 1;
        for (size_t j2 = 0; j2 < head; j2++)
            add_listing_line(sb, &text->v[first + j2]);
        strbuf_addf(sb, "        ... (%zu more lines)\n", span - head - tail);
        for (size_t j2 = span - tail; j2 < span; j2++)
            add_listing_line(sb, &text->v[first + j2]);
    }
out:
    free(pi);
    free(pj);
    free(dp);
    free(row);
    free(sim);
}

/* ---------------------------------------------------------------- blocks: applying */

/* Strings made while applying (re-indented REPLACE lines), freed at the end. */
typedef struct pool {
    char **v;
    size_t n;
} pool;

static const char *pool_add(pool *p, char *s)
{
    p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
    p->v[p->n++] = s;
    return s;
}

/*
 * After an indentation-blind match, shifts the REPLACE lines by the same prefix that
 * separates the SEARCH lines from the kernel lines, when that prefix is the same on
 * every non-blank line. Returns 1 when shifted, 0 when the REPLACE lines are kept as
 * they are, and fills out (nr lines).
 */
static int reindent(const line *pat, const line *k, size_t n, const line *rep, size_t nr,
                    int block_no, pool *pl, line *out)
{
    const char *prefix = NULL;
    size_t plen = 0;
    int dir = 0; /* +1: add prefix to REPLACE lines, -1: remove it */
    bool consistent = true;
    for (size_t i = 0; i < n && consistent; i++) {
        if (is_blank(&pat[i]))
            continue;
        size_t fi = indent_of(&k[i]), si = indent_of(&pat[i]);
        int d = fi > si ? 1 : fi < si ? -1 : 0;
        const line *longer = d > 0 ? &k[i] : &pat[i];
        const line *shorter = d > 0 ? &pat[i] : &k[i];
        size_t ll = d > 0 ? fi : si, sl = d > 0 ? si : fi;
        if (d != 0 && memcmp(longer->s + ll - sl, shorter->s, sl) != 0) {
            consistent = false; /* e.g. tabs against spaces */
            break;
        }
        if (!prefix) {
            prefix = longer->s;
            plen = ll - sl;
            dir = d;
        } else if (d != dir || ll - sl != plen || memcmp(longer->s, prefix, plen) != 0) {
            consistent = false;
        }
    }
    for (size_t i = 0; i < nr; i++)
        out[i] = (line){ rep[i].s, rep[i].len, -block_no };
    if (!consistent || dir == 0 || plen == 0)
        return 0;
    for (size_t i = 0; i < nr; i++) {
        if (is_blank(&rep[i]))
            continue;
        if (dir > 0) {
            char *s = xmalloc(plen + rep[i].len + 1);
            memcpy(s, prefix, plen);
            memcpy(s + plen, rep[i].s, rep[i].len);
            s[plen + rep[i].len] = '\0';
            out[i].s = pool_add(pl, s);
            out[i].len = plen + rep[i].len;
        } else if (rep[i].len >= plen && memcmp(rep[i].s, prefix, plen) == 0) {
            out[i].s += plen;
            out[i].len -= plen;
        }
    }
    return 1;
}

/* Replaces text lines [at, at+n) with the given lines. */
static void splice(lines *text, size_t at, size_t n, const line *with, size_t nw)
{
    lines out = { 0 };
    for (size_t i = 0; i < at; i++)
        lines_push(&out, text->v[i].s, text->v[i].len, text->v[i].origin);
    for (size_t i = 0; i < nw; i++)
        lines_push(&out, with[i].s, with[i].len, with[i].origin);
    for (size_t i = at + n; i < text->n; i++)
        lines_push(&out, text->v[i].s, text->v[i].len, text->v[i].origin);
    free(text->v);
    *text = out;
}

/* The block's first SEARCH line, for reports ("" if the section is empty). */
static void add_first_search_line(strbuf *sb, const line *pat, size_t n)
{
    size_t i = 0;
    while (i + 1 < n && is_blank(&pat[i]))
        i++;
    strbuf_adds(sb, "\"");
    if (n)
        add_quoted(sb, pat[i].s + indent_of(&pat[i]), pat[i].len - indent_of(&pat[i]));
    strbuf_adds(sb, "\"");
}

/* Applies one block to text. 0: applied; -1: a report for the model is in rep. */
static int apply_block(lines *text, const lines *original, const lines *rl, const block *b,
                       int no, int total, pool *pl, strbuf *rep, strbuf *notes)
{
    const line *pat = &rl->v[b->search], *with = &rl->v[b->replace];
    size_t n = b->n_search;
    bool empty = true;
    for (size_t i = 0; i < n; i++)
        empty = empty && is_blank(&pat[i]);

    strbuf_addf(rep, "Block %d of %d (SEARCH starting ", no, total);
    add_first_search_line(rep, pat, n);
    strbuf_adds(rep, "): ");

    if (empty) {
        bool text_empty = true;
        for (size_t i = 0; i < text->n; i++)
            text_empty = text_empty && is_blank(&text->v[i]);
        if (!text_empty) {
            strbuf_adds(rep, "its SEARCH section is empty. An empty SEARCH only starts a kernel "
                             "when there is none yet; copy the exact lines to replace into "
                             "SEARCH, or answer with the whole file.\n");
            return -1;
        }
        line *nl = xmalloc((b->n_replace + 1) * sizeof(*nl));
        for (size_t i = 0; i < b->n_replace; i++)
            nl[i] = (line){ with[i].s, with[i].len, -no };
        splice(text, 0, text->n, nl, b->n_replace);
        free(nl);
        strbuf_addf(notes, "block %d: empty SEARCH on an empty kernel: its REPLACE is the "
                    "kernel\n", no);
        return 0;
    }

    size_t starts[MAX_MATCHES_SHOWN];
    for (int p = PASS_EXACT; p < PASS_COUNT; p++) {
        size_t count = find_all(text, pat, n, (enum pass)p, starts, MAX_MATCHES_SHOWN);
        if (count == 0)
            continue;
        if (count > 1) {
            strbuf_addf(rep, "its SEARCH text matches %zu places in the current kernel%s%s: ",
                        count, p == PASS_EXACT ? "" : " ", p == PASS_EXACT ? "" : pass_words[p]);
            size_t shown = count < MAX_MATCHES_SHOWN ? count : MAX_MATCHES_SHOWN;
            for (size_t i = 0; i < shown; i++) {
                if (i)
                    strbuf_adds(rep, i + 1 == shown && shown == count ? " and " : ", ");
                add_span(rep, text, starts[i], n);
            }
            if (shown < count)
                strbuf_addf(rep, " and %zu more", count - shown);
            strbuf_adds(rep, ". Add lines of context before or after (copied exactly) so that "
                             "it matches exactly one place.\n");
            return -1;
        }
        line *nl = xmalloc((b->n_replace + 1) * sizeof(*nl));
        strbuf where = STRBUF_INIT;
        add_span(&where, text, starts[0], n);
        if (p == PASS_INDENT) {
            int shifted = reindent(pat, &text->v[starts[0]], n, with, b->n_replace, no, pl, nl);
            strbuf_addf(notes, "block %d: matched %s at %s; %s\n", no, pass_words[p], where.buf,
                        shifted ? "REPLACE lines re-indented to match"
                                : "REPLACE lines kept as given");
        } else {
            for (size_t i = 0; i < b->n_replace; i++)
                nl[i] = (line){ with[i].s, with[i].len, -no };
            if (p != PASS_EXACT)
                strbuf_addf(notes, "block %d: matched %s at %s\n", no, pass_words[p], where.buf);
        }
        strbuf_release(&where);
        splice(text, starts[0], n, nl, b->n_replace);
        free(nl);
        return 0;
    }
    report_nowhere(rep, text, pat, n, original, no > 1);
    return -1;
}

/* Joins lines into out, each ending with a newline. */
static void lines_join(const lines *text, strbuf *out)
{
    for (size_t i = 0; i < text->n; i++) {
        strbuf_add(out, text->v[i].s, text->v[i].len);
        strbuf_addc(out, '\n');
    }
}

static void apply_blocks(const char *current, const lines *rl, const block *b, size_t nb,
                         edit_result *r)
{
    lines text = { 0 }, original = { 0 };
    lines_split(&text, current, true);
    lines_split(&original, current, true);
    pool pl = { 0 };
    strbuf *reports = xcalloc(nb, sizeof(*reports));
    int failed = 0;
    for (size_t i = 0; i < nb; i++) {
        strbuf_init(&reports[i]);
        if (apply_block(&text, &original, rl, &b[i], (int)i + 1, (int)nb, &pl, &reports[i],
                        &r->notes) < 0)
            failed++;
        else
            strbuf_reset(&reports[i]);
    }
    if (failed == 0) {
        lines_join(&text, &r->source);
        r->ok = r->source.len > 0;
        r->blocks_applied = (int)nb;
        if (!r->ok)
            strbuf_adds(&r->error, "the SEARCH/REPLACE blocks leave the kernel empty: answer "
                                   "with the whole kernel file in one ```cuda code block");
        else if (strcmp(r->source.buf, current) == 0)
            strbuf_adds(&r->notes, "the blocks change nothing\n");
    } else {
        static const char footer[] =
            "Nothing was applied (all or nothing): the current kernel is unchanged. Send all "
            "your blocks again with SEARCH lines copied exactly from the current kernel, "
            "enough of them to match one place, or answer with the whole file in one ```cuda "
            "block.";
        strbuf_addf(&r->error, "%d of %zu SEARCH/REPLACE block%s failed.\n", failed, nb,
                    nb > 1 ? "s" : "");
        size_t room = ERROR_CAP - (sizeof(footer) - 1) - 60;
        int left = 0;
        for (size_t i = 0; i < nb; i++) {
            if (!reports[i].len)
                continue;
            if (r->error.len + reports[i].len <= room) {
                strbuf_add(&r->error, reports[i].buf, reports[i].len);
            } else if (left == 0 && r->error.len + 200 < room) {
                /* the first report that does not fit: its first lines at least */
                strbuf rest = STRBUF_INIT;
                strbuf_add(&rest, reports[i].buf, reports[i].len);
                cap_text(&rest, room - r->error.len);
                while (rest.len && rest.buf[rest.len - 1] != '\n')
                    rest.len--;
                rest.buf[rest.len] = '\0';
                strbuf_add(&r->error, rest.buf, rest.len);
                strbuf_release(&rest);
                left = -1; /* partly shown: not counted below */
            } else {
                left = left < 0 ? 1 : left + 1;
            }
        }
        if (left > 0)
            strbuf_addf(&r->error, "(%d more failed block%s not shown)\n", left,
                        left > 1 ? "s" : "");
        strbuf_adds(&r->error, footer);
        strbuf_reset(&r->source);
        for (size_t i = 0; i < nb; i++)
            if (!reports[i].len)
                strbuf_addf(&r->notes, "block %zu matched\n", i + 1);
        strbuf_addf(&r->notes, "%d of %zu blocks failed; nothing applied\n", failed, nb);
    }
    for (size_t i = 0; i < nb; i++)
        strbuf_release(&reports[i]);
    free(reports);
    for (size_t i = 0; i < pl.n; i++)
        free(pl.v[i]);
    free(pl.v);
    free(text.v);
    free(original.v);
}

/* ---------------------------------------------------------------- API */

void edit_result_init(edit_result *r)
{
    r->kind = EDIT_NONE;
    r->ok = false;
    strbuf_init(&r->source);
    strbuf_init(&r->error);
    strbuf_init(&r->notes);
    r->blocks_total = 0;
    r->blocks_applied = 0;
    strbuf_init(&r->explanation);
}

void edit_result_release(edit_result *r)
{
    strbuf_release(&r->source);
    strbuf_release(&r->error);
    strbuf_release(&r->notes);
    strbuf_release(&r->explanation);
    r->kind = EDIT_NONE;
    r->ok = false;
    r->blocks_total = r->blocks_applied = 0;
}

int edit_apply(const char *current, const char *reply, edit_result *r)
{
    strbuf_reset(&r->source);
    strbuf_reset(&r->error);
    strbuf_reset(&r->notes);
    strbuf_reset(&r->explanation);
    r->kind = EDIT_NONE;
    r->ok = false;
    r->blocks_total = r->blocks_applied = 0;

    char *cur = without_cr(current ? current : "");
    char *rep = without_cr(reply ? reply : "");
    bool have_kernel = false;
    for (const char *p = cur; *p && !have_kernel; p++)
        have_kernel = !isspace((unsigned char)*p);
    lines rl = { 0 };
    lines_split(&rl, rep, false);
    bool *code = xcalloc(rl.n + 1, sizeof(*code));

    bool any_marker = false;
    for (size_t i = 0; i < rl.n && !any_marker; i++) {
        enum marker m = marker_of(&rl.v[i]);
        any_marker = m == MARK_SEARCH || m == MARK_REPLACE;
    }
    fence *f;
    size_t nf;
    find_fences(&rl, &f, &nf);

    if (any_marker) {
        r->kind = EDIT_BLOCKS;
        block *b;
        size_t nb;
        int rc = parse_blocks(&rl, code, &b, &nb, &r->error);
        r->blocks_total = (int)nb;
        if (rc == 0)
            apply_blocks(cur, &rl, b, nb, r);
        else
            strbuf_adds(&r->error, ". Nothing was applied. Each block is exactly: "
                                   "<<<<<<< SEARCH, the exact lines, =======, the new lines, "
                                   ">>>>>>> REPLACE, each marker on a line of its own.");
        free(b);
    } else {
        whole_file(&rl, f, nf, have_kernel, r);
    }
    for (size_t i = 0; i < nf; i++) /* fenced text (blocks may sit in a fence) is not prose */
        for (size_t j = f[i].open; j <= f[i].close && j < rl.n; j++)
            code[j] = true;
    take_explanation(&rl, code, &r->explanation);
    cap_text(&r->error, ERROR_CAP);

    free(f);
    free(code);
    free(rl.v);
    free(rep);
    free(cur);
    return 0;
}
