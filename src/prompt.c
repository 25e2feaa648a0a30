/*
 * prompt: renders the prompt templates in prompts/ (the language is described in
 * prompt.h), lists the variables a template uses, and estimates token counts.
 *
 * DESIGN: one pass over the template with a stack of open sections. Every tag is
 * checked whether or not its section is shown, so a typo in a rarely shown section
 * still fails the template tests. Text and values are appended only while every
 * enclosing section is shown.
 */
#include "prompt.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------ */

static const char *const var_names[] = {
    "problem_source", "task_spec", "graph",   "flops",      "min_bytes",      "sol_ms",
    "sol_bound",      "gpu_facts", "abi",     "kernel",     "verdict",        "time_ms",
    "eager_ms",       "compile_ms", "speedup", "message",   "history",        "profile_digest",
    "knowledge",      "attempt",   "max_attempts", "edit_error", NULL,
};

static const char *const kinds[] = {
    "system", "first", "fix_compile", "fix_wrong", "fix_runtime", "optimise", "tune", NULL,
};

const char *const *prompt_var_names(void)
{
    return var_names;
}

const char *const *prompt_kinds(void)
{
    return kinds;
}

static bool is_known_name(const char *name, size_t len)
{
    for (const char *const *n = var_names; *n; n++)
        if (strlen(*n) == len && memcmp(*n, name, len) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------------------------------------
 * Variables
 * ------------------------------------------------------------------------------------ */

struct prompt_vars {
    char **names;
    char **values;
    size_t n, alloc;
};

prompt_vars *prompt_vars_new(void)
{
    return xcalloc(1, sizeof(prompt_vars));
}

static long vars_find(const prompt_vars *v, const char *name, size_t len)
{
    if (!v)
        return -1;
    for (size_t i = 0; i < v->n; i++)
        if (strlen(v->names[i]) == len && memcmp(v->names[i], name, len) == 0)
            return (long)i;
    return -1;
}

void prompt_vars_set(prompt_vars *v, const char *name, const char *value)
{
    long i = vars_find(v, name, strlen(name));
    char *copy = xstrdup(value ? value : "");
    if (i >= 0) {
        free(v->values[i]);
        v->values[i] = copy;
        return;
    }
    if (v->n == v->alloc) {
        v->alloc = v->alloc ? 2 * v->alloc : 16;
        v->names = xrealloc(v->names, v->alloc * sizeof(char *));
        v->values = xrealloc(v->values, v->alloc * sizeof(char *));
    }
    v->names[v->n] = xstrdup(name);
    v->values[v->n] = copy;
    v->n++;
}

const char *prompt_vars_get(const prompt_vars *v, const char *name)
{
    long i = vars_find(v, name, strlen(name));
    return i >= 0 ? v->values[i] : NULL;
}

void prompt_vars_free(prompt_vars *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        free(v->names[i]);
        free(v->values[i]);
    }
    free(v->names);
    free(v->values);
    free(v);
}

/* ------------------------------------------------------------------------------------
 * Tags
 * ------------------------------------------------------------------------------------ */

enum tag_kind { TAG_VAR, TAG_IF, TAG_UNLESS, TAG_END, TAG_COMMENT };

typedef struct tag {
    enum tag_kind kind;
    const char *start; /* the first '{' */
    const char *end;   /* just past the closing '}}' */
    const char *name;  /* not NUL-terminated */
    size_t name_len;
} tag;

static bool is_name_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static bool is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static int line_of(const char *text, const char *p)
{
    int line = 1;
    for (const char *q = text; q < p; q++)
        if (*q == '\n')
            line++;
    return line;
}

/* The text of a tag for a message, cut at the line's end. */
static void quote_tag(strbuf *err, const char *start)
{
    const char *e = start;
    while (*e && *e != '\n' && e - start < 60) {
        if (e > start + 1 && e[-1] == '}' && e[-2] == '}')
            break;
        e++;
    }
    strbuf_add(err, start, (size_t)(e - start));
}

/* Parses the tag at s (which points at "{{"). Returns 0, or -1 with a message. */
static int parse_tag(const char *text, const char *s, tag *t, strbuf *err)
{
    const char *p = s + 2;
    const char *close = NULL;
    for (const char *q = p; *q && *q != '\n'; q++)
        if (q[0] == '}' && q[1] == '}') {
            close = q;
            break;
        }
    t->start = s;
    if (!close) {
        strbuf_addf(err, "prompt template line %d: unterminated placeholder '", line_of(text, s));
        quote_tag(err, s);
        strbuf_adds(err, "' (no '}}' on its line)");
        return -1;
    }
    t->end = close + 2;
    if (*p == '!') {
        t->kind = TAG_COMMENT;
        t->name = p;
        t->name_len = 0;
        return 0;
    }
    t->kind = TAG_VAR;
    if (*p == '#')
        t->kind = TAG_IF;
    else if (*p == '^')
        t->kind = TAG_UNLESS;
    else if (*p == '/')
        t->kind = TAG_END;
    if (t->kind != TAG_VAR)
        p++;
    while (p < close && *p == ' ')
        p++;
    const char *n = p;
    while (p < close && is_name_char(*p))
        p++;
    const char *ne = p;
    while (p < close && *p == ' ')
        p++;
    if (ne == n || !is_name_start(*n) || p != close) {
        strbuf_addf(err, "prompt template line %d: malformed placeholder '", line_of(text, s));
        strbuf_add(err, s, (size_t)(t->end - s));
        strbuf_adds(err, "' (expected {{name}}, {{#name}}, {{^name}} or {{/name}})");
        return -1;
    }
    t->name = n;
    t->name_len = (size_t)(ne - n);
    return 0;
}

/* A section tag or comment alone on its line (only blanks around it) is "standalone":
 * the line disappears with it. Sets *line_start and *line_end (past the newline). */
static bool standalone(const char *text, const tag *t, const char **line_start,
                       const char **line_end)
{
    if (t->kind == TAG_VAR)
        return false;
    const char *b = t->start;
    while (b > text && (b[-1] == ' ' || b[-1] == '\t'))
        b--;
    if (b > text && b[-1] != '\n')
        return false;
    const char *e = t->end;
    while (*e == ' ' || *e == '\t' || *e == '\r')
        e++;
    if (*e != '\n' && *e != '\0')
        return false;
    *line_start = b;
    *line_end = *e == '\n' ? e + 1 : e;
    return true;
}

static bool is_blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}

/* ------------------------------------------------------------------------------------
 * Rendering
 * ------------------------------------------------------------------------------------ */

#define MAX_DEPTH 32

int prompt_render(const char *template_text, const prompt_vars *v, strbuf *out, strbuf *err)
{
    const char *text = template_text;
    const char *p = text;
    tag open[MAX_DEPTH];
    bool shown[MAX_DEPTH + 1];
    int depth = 0;
    shown[0] = true;

    for (;;) {
        const char *s = strstr(p, "{{");
        if (!s) {
            if (shown[depth])
                strbuf_adds(out, p);
            break;
        }
        tag t;
        if (parse_tag(text, s, &t, err) < 0)
            return -1;
        if (t.kind != TAG_COMMENT && !is_known_name(t.name, t.name_len) &&
            vars_find(v, t.name, t.name_len) < 0) {
            strbuf_addf(err, "prompt template line %d: unknown placeholder '", line_of(text, s));
            strbuf_add(err, s, (size_t)(t.end - s));
            strbuf_adds(err, "' (not a prompt variable)");
            return -1;
        }
        const char *ls, *le;
        bool alone = standalone(text, &t, &ls, &le);
        if (shown[depth])
            strbuf_add(out, p, (size_t)((alone ? ls : s) - p));
        p = alone ? le : t.end;

        switch (t.kind) {
        case TAG_COMMENT:
            break;
        case TAG_VAR:
            if (shown[depth]) {
                long i = vars_find(v, t.name, t.name_len);
                if (i >= 0) {
                    const char *val = v->values[i];
                    size_t n = strlen(val);
                    while (n > 0 && (val[n - 1] == '\n' || val[n - 1] == '\r'))
                        n--;
                    strbuf_add(out, val, n);
                }
            }
            break;
        case TAG_IF:
        case TAG_UNLESS: {
            if (depth == MAX_DEPTH) {
                strbuf_addf(err, "prompt template line %d: sections nested deeper than %d",
                            line_of(text, s), MAX_DEPTH);
                return -1;
            }
            long i = vars_find(v, t.name, t.name_len);
            bool set = i >= 0 && !is_blank(v->values[i]);
            open[depth] = t;
            depth++;
            shown[depth] = shown[depth - 1] && (t.kind == TAG_IF ? set : !set);
            break;
        }
        case TAG_END:
            if (depth == 0) {
                strbuf_addf(err, "prompt template line %d: '", line_of(text, s));
                strbuf_add(err, s, (size_t)(t.end - s));
                strbuf_adds(err, "' closes no section");
                return -1;
            }
            if (open[depth - 1].name_len != t.name_len ||
                memcmp(open[depth - 1].name, t.name, t.name_len) != 0) {
                strbuf_addf(err, "prompt template line %d: '", line_of(text, s));
                strbuf_add(err, s, (size_t)(t.end - s));
                strbuf_adds(err, "' does not close '");
                strbuf_add(err, open[depth - 1].start,
                           (size_t)(open[depth - 1].end - open[depth - 1].start));
                strbuf_addf(err, "' opened at line %d", line_of(text, open[depth - 1].start));
                return -1;
            }
            depth--;
            break;
        }
    }
    if (depth > 0) {
        const tag *t = &open[depth - 1];
        strbuf_addf(err, "prompt template line %d: section '", line_of(text, t->start));
        strbuf_add(err, t->start, (size_t)(t->end - t->start));
        strbuf_adds(err, "' is never closed");
        return -1;
    }
    return 0;
}

int prompt_render_kind(const char *kind, const prompt_vars *v, strbuf *out, strbuf *err)
{
    bool plain = kind && *kind;
    for (const char *c = kind; plain && *c; c++)
        if (!is_name_char(*c))
            plain = false;
    if (!plain) {
        strbuf_addf(err, "bad prompt kind '%s'", kind ? kind : "(null)");
        return -1;
    }
    char *path = xasprintf("%s/prompts/%s.txt", cg_source_dir(), kind);
    strbuf text = STRBUF_INIT;
    if (read_file(path, &text, 1 << 20) < 0) {
        strbuf_addf(err, "unable to read prompt template '%s': %s", path, strerror(errno));
        free(path);
        strbuf_release(&text);
        return -1;
    }
    strbuf msg = STRBUF_INIT;
    int rc = prompt_render(strbuf_str(&text), v, out, &msg);
    if (rc < 0)
        strbuf_addf(err, "prompts/%s.txt: %s", kind, strbuf_str(&msg));
    strbuf_release(&msg);
    strbuf_release(&text);
    free(path);
    return rc;
}

char **prompt_template_vars(const char *template_text)
{
    size_t n = 0, alloc = 8;
    char **names = xmalloc(alloc * sizeof(char *));
    const char *p = template_text;
    strbuf ignored = STRBUF_INIT;
    const char *s;
    while ((s = strstr(p, "{{")) != NULL) {
        tag t;
        strbuf_reset(&ignored);
        if (parse_tag(template_text, s, &t, &ignored) < 0) {
            p = s + 2;
            continue;
        }
        p = t.end;
        if (t.kind == TAG_COMMENT || t.kind == TAG_END)
            continue;
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++)
            seen = strlen(names[i]) == t.name_len && memcmp(names[i], t.name, t.name_len) == 0;
        if (seen)
            continue;
        if (n + 1 == alloc) {
            alloc *= 2;
            names = xrealloc(names, alloc * sizeof(char *));
        }
        names[n++] = xstrndup(t.name, t.name_len);
    }
    strbuf_release(&ignored);
    names[n] = NULL;
    return names;
}

void prompt_free_names(char **names)
{
    if (!names)
        return;
    for (char **n = names; *n; n++)
        free(*n);
    free(names);
}

/* ------------------------------------------------------------------------------------
 * Token estimate
 *
 * chars/3.6 is right on average and wrong in both directions: C++ with CuTe is dense in
 * punctuation ("<_1, _4>{}", "::", "(_, _, k)") that BPE vocabularies split into a
 * token or two each, while English words are mostly single tokens. So count by
 * character class, the way GPT- and Claude-style tokenisers split text:
 *   - a word (letters, split at a lower-to-upper case change, an underscore riding with
 *     the word after it): one token, plus one per 7 letters past the first;
 *   - a run of digits: one token per 3 digits (numbers are chunked by three);
 *   - punctuation: one token per character, except that the common pairs ("::", "->",
 *     "==", "<<", ">>", "//", "{}", "()", "++", "&&", ...) count as one;
 *   - a newline: one token; a run of two or more blanks: one token; a single space is
 *     absorbed by the word that follows it.
 * It gives about 3.8 characters a token on this project's prose and 2.8 on its kernels,
 * near the published rules of thumb (4 for English, 3 or less for code). It is an
 * estimate for size reports and budgets (expect +-20%), not a tokeniser.
 * ------------------------------------------------------------------------------------ */

static bool common_pair(char a, char b)
{
    static const char *const pairs[] = { "::", "->", "==", "<<", ">>", "//", "{}", "()",
                                         "++", "&&", "||", "!=", "<=", ">=", "*/", "/*" };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
        if (pairs[i][0] == a && pairs[i][1] == b)
            return true;
    return false;
}

size_t prompt_estimate_tokens(const char *text)
{
    size_t tokens = 0;
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        if (isalpha(*p) || *p >= 0x80) {
            /* one word: letters up to a lower-to-upper case change ("TiledCopy") */
            size_t n = 0;
            do {
                p++;
                n++;
            } while ((isalpha(*p) || *p >= 0x80) && !(isupper(*p) && islower(p[-1])));
            tokens += 1 + (n - 1) / 7;
        } else if (*p == '_' && isalpha(p[1])) {
            p++; /* "_copy": the underscore rides with the word after it */
        } else if (isdigit(*p)) {
            size_t n = 0;
            while (isdigit(*p)) {
                p++;
                n++;
            }
            tokens += (n + 2) / 3;
        } else if (*p == '\n') {
            tokens++;
            p++;
        } else if (*p == ' ' || *p == '\t' || *p == '\r') {
            size_t n = 0;
            while (*p == ' ' || *p == '\t' || *p == '\r') {
                p++;
                n++;
            }
            if (n > 1)
                tokens++;
        } else {
            if (p[1] && common_pair((char)p[0], (char)p[1]))
                p += 2;
            else
                p++;
            tokens++;
        }
    }
    return tokens;
}
