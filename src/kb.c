/*
 * kb: loads the notes in knowledge/ and ranks the notes against a query with BM25 (see kb.h).
 *
 * DESIGN: a few dozen short notes, so no inverted index: each note keeps its terms
 * sorted with their counts, and a query looks each of its terms up in every note by
 * binary search. Document frequencies are computed at query time (a few dozen notes).
 * Stop words are English function words plus the boilerplate every PyTorch problem and
 * every candidate carries (torch, nn, forward, inputs, tensor, cg_...), so that a whole
 * problem or kernel used as a query ranks notes by what is specific to it.
 */
#include "kb.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define BM25_K1 1.2
#define BM25_B 0.75
#define FIELD_BOOST 2      /* title and tags count this many times */
#define MIN_REL_SCORE 0.2  /* notes under this fraction of the best score are dropped */
#define MAX_NOTE_BYTES (64 * 1024)

typedef struct term_count {
    char *term;
    int tf;
} term_count;

typedef struct note {
    char *name;  /* file name, e.g. "tiled-copy.md" */
    char *text;  /* the whole note */
    term_count *terms; /* sorted by term */
    size_t n_terms;
    size_t length;     /* number of terms, with repeats */
} note;

struct kb {
    note *notes;
    size_t n;
    double avg_len;
};

/* ------------------------------------------------------------------------------------
 * Tokeniser
 * ------------------------------------------------------------------------------------ */

typedef struct term_list {
    char **v;
    size_t n, alloc;
} term_list;

static void list_push(term_list *l, const char *s, size_t len)
{
    if (l->n == l->alloc) {
        l->alloc = l->alloc ? 2 * l->alloc : 64;
        l->v = xrealloc(l->v, l->alloc * sizeof(char *));
    }
    char *t = xstrndup(s, len);
    for (char *c = t; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    l->v[l->n++] = t;
}

static bool is_stopword(const char *s, size_t len)
{
    static const char *const stop[] = {
        "the", "and", "of", "to", "in", "is", "it", "for", "on", "with", "that", "this",
        "as", "be", "by", "are", "at", "or", "from", "an", "not", "no", "its", "into",
        "if", "so", "do", "one", "each", "all", "can", "has", "have", "than", "then",
        "when", "which", "what", "you", "your", "we", "our", "but", "only", "use", "used",
        /* the boilerplate of every PyTorch problem and every candidate: no signal */
        "import", "torch", "nn", "class", "model", "module", "def", "self", "super", "init",
        "return", "forward", "get", "inputs", "outputs", "tensor", "cg",
        NULL,
    };
    for (const char *const *w = stop; *w; w++)
        if (strlen(*w) == len && strncasecmp(*w, s, len) == 0)
            return true;
    return false;
}

static void push_part(term_list *l, const char *s, size_t len)
{
    if (len < 2 && !isdigit((unsigned char)s[0]))
        return;
    if (is_stopword(s, len))
        return;
    list_push(l, s, len);
}

/* Splits one identifier (letters, digits, '_') into parts at '_', lower-to-upper case
 * changes ("tiledCopy"), the end of an upper-case run before a capitalised word
 * ("TMACopy": TMA, Copy) and letter/digit boundaries; adds the parts and, when there
 * are several, the whole identifier. */
static void push_identifier(term_list *l, const char *s, size_t len)
{
    size_t parts = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && s[i] == '_')
            i++;
        if (i == len)
            break;
        size_t b = i;
        if (isdigit((unsigned char)s[i])) {
            while (i < len && isdigit((unsigned char)s[i]))
                i++;
        } else if (isupper((unsigned char)s[i])) {
            i++;
            if (i < len && isupper((unsigned char)s[i])) {
                while (i < len && isupper((unsigned char)s[i]))
                    i++;
                if (i < len && islower((unsigned char)s[i]) && i - b > 1)
                    i--; /* "TMACopy": the C starts the next word */
            } else {
                while (i < len && islower((unsigned char)s[i]))
                    i++;
            }
        } else {
            while (i < len && islower((unsigned char)s[i]))
                i++;
        }
        push_part(l, s + b, i - b);
        parts++;
    }
    if (parts > 1) {
        /* the whole name, without leading or trailing underscores */
        size_t b = 0, e = len;
        while (b < e && s[b] == '_')
            b++;
        while (e > b && s[e - 1] == '_')
            e--;
        list_push(l, s + b, e - b);
    }
}

static void tokenise(const char *text, term_list *l)
{
    const char *p = text;
    while (*p) {
        if (isalnum((unsigned char)*p) || *p == '_') {
            const char *b = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            if (p - b <= 64)
                push_identifier(l, b, (size_t)(p - b));
        } else {
            p++;
        }
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the list and counts it into unique terms. */
static term_count *count_terms(term_list *l, size_t *n_out)
{
    qsort(l->v, l->n, sizeof(char *), cmp_str);
    term_count *tc = xmalloc((l->n ? l->n : 1) * sizeof(term_count));
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (n > 0 && strcmp(tc[n - 1].term, l->v[i]) == 0) {
            tc[n - 1].tf++;
            free(l->v[i]);
        } else {
            tc[n].term = l->v[i];
            tc[n].tf = 1;
            n++;
        }
    }
    free(l->v);
    l->v = NULL;
    l->n = l->alloc = 0;
    *n_out = n;
    return tc;
}

static int note_tf(const note *nt, const char *term)
{
    size_t lo = 0, hi = nt->n_terms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(nt->terms[mid].term, term);
        if (c == 0)
            return nt->terms[mid].tf;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------
 * Loading
 * ------------------------------------------------------------------------------------ */

/* Checks the note's header and indexes it. Returns 0, or -1 with a message. */
static int index_note(note *nt, const char *path, strbuf *err)
{
    const char *t = nt->text;
    if (strncmp(t, "# ", 2) != 0) {
        strbuf_addf(err, "knowledge note '%s' does not start with a '# Title' line", path);
        return -1;
    }
    const char *title_end = strchr(t, '\n');
    if (!title_end) {
        strbuf_addf(err, "knowledge note '%s' has nothing after its title", path);
        return -1;
    }
    const char *tags = title_end + 1;
    while (*tags == '\n')
        tags++;
    if (strncmp(tags, "tags:", 5) != 0) {
        strbuf_addf(err, "knowledge note '%s' has no 'tags:' line after its title", path);
        return -1;
    }
    const char *tags_end = strchr(tags, '\n');
    if (!tags_end)
        tags_end = tags + strlen(tags);

    term_list l = { 0 };
    char *title = xstrndup(t + 2, (size_t)(title_end - t - 2));
    char *tagline = xstrndup(tags + 5, (size_t)(tags_end - tags - 5));
    for (int i = 0; i < FIELD_BOOST; i++) {
        tokenise(title, &l);
        tokenise(tagline, &l);
    }
    tokenise(tags_end, &l);
    free(title);
    free(tagline);
    nt->length = l.n;
    nt->terms = count_terms(&l, &nt->n_terms);
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void note_release(note *nt)
{
    for (size_t i = 0; i < nt->n_terms; i++)
        free(nt->terms[i].term);
    free(nt->terms);
    free(nt->name);
    free(nt->text);
}

int kb_load(const char *dir, kb **out, strbuf *err)
{
    char *owned = NULL;
    if (!dir) {
        owned = xasprintf("%s/knowledge", cg_source_dir());
        dir = owned;
    }
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) {
        strbuf_addf(err, "unable to open knowledge directory '%s': %s", dir, strerror(errno));
        free(owned);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, alloc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || !str_ends_with(e->d_name, ".md"))
            continue;
        if (n == alloc) {
            alloc = alloc ? 2 * alloc : 32;
            names = xrealloc(names, alloc * sizeof(char *));
        }
        names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof(char *), cmp_name);

    kb *k = xcalloc(1, sizeof(kb));
    k->notes = xcalloc(n ? n : 1, sizeof(note));
    int rc = 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        char *path = xasprintf("%s/%s", dir, names[i]);
        strbuf sb = STRBUF_INIT;
        if (read_file(path, &sb, MAX_NOTE_BYTES) < 0) {
            strbuf_addf(err, "unable to read knowledge note '%s': %s", path, strerror(errno));
            strbuf_release(&sb);
            free(path);
            rc = -1;
            break;
        }
        note *nt = &k->notes[k->n];
        strbuf_trim_end(&sb);
        nt->text = strbuf_detach(&sb);
        nt->name = xstrdup(names[i]);
        k->n++;
        if (index_note(nt, path, err) < 0) {
            free(path);
            rc = -1;
            break;
        }
        total += nt->length;
        free(path);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(owned);
    if (rc < 0) {
        kb_free(k);
        return -1;
    }
    k->avg_len = k->n ? (double)total / (double)k->n : 0.0;
    *out = k;
    return 0;
}

void kb_free(kb *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->n; i++)
        note_release(&k->notes[i]);
    free(k->notes);
    free(k);
}

size_t kb_size(const kb *k)
{
    return k ? k->n : 0;
}

/* ------------------------------------------------------------------------------------
 * Search
 * ------------------------------------------------------------------------------------ */

typedef struct scored {
    size_t index;
    double score;
} scored;

static int cmp_scored(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int kb_search(const kb *k, const char *query, int max_notes, size_t max_chars, strbuf *out)
{
    if (!k || k->n == 0 || !query || max_notes <= 0)
        return 0;
    term_list l = { 0 };
    tokenise(query, &l);
    size_t nq;
    term_count *q = count_terms(&l, &nq);

    scored *s = xcalloc(k->n, sizeof(scored));
    for (size_t i = 0; i < k->n; i++)
        s[i].index = i;
    double n_docs = (double)k->n;
    for (size_t t = 0; t < nq; t++) {
        int df = 0;
        for (size_t i = 0; i < k->n; i++)
            if (note_tf(&k->notes[i], q[t].term) > 0)
                df++;
        if (df == 0)
            continue;
        double idf = log(1.0 + (n_docs - df + 0.5) / (df + 0.5));
        for (size_t i = 0; i < k->n; i++) {
            const note *nt = &k->notes[i];
            int tf = note_tf(nt, q[t].term);
            if (tf == 0)
                continue;
            double norm = BM25_K1 * (1.0 - BM25_B + BM25_B * (double)nt->length / k->avg_len);
            s[i].score += idf * (tf * (BM25_K1 + 1.0)) / (tf + norm);
        }
    }
    for (size_t t = 0; t < nq; t++)
        free(q[t].term);
    free(q);

    qsort(s, k->n, sizeof(scored), cmp_scored);
    int added = 0;
    size_t used = 0;
    double best = s[0].score;
    for (size_t r = 0; r < k->n && added < max_notes; r++) {
        if (s[r].score <= 0.0 || s[r].score < MIN_REL_SCORE * best)
            break;
        const note *nt = &k->notes[s[r].index];
        size_t len = strlen(nt->text) + 1 + (added > 0 ? 1 : 0);
        if (used + len > max_chars)
            continue;
        if (added > 0)
            strbuf_addc(out, '\n');
        strbuf_adds(out, nt->text);
        strbuf_addc(out, '\n');
        used += len;
        added++;
    }
    free(s);
    return added;
}
