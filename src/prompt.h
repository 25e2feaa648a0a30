/*
 * prompt: the prompt templates (prompts/<kind>.txt) and the tiny language they are
 * written in.
 *
 *   {{name}}              the variable's value (trailing newlines dropped)
 *   {{#name}}...{{/name}} kept only when the variable is set and not blank
 *   {{^name}}...{{/name}} kept only when the variable is unset or blank
 *   {{! words }}          a comment, dropped
 *
 * A tag alone on its line (sections, their ends, comments) takes the whole line with
 * it, so templates can be laid out one tag a line without leaving blank lines behind.
 * Values are inserted verbatim and never parsed again: a kernel full of braces is safe.
 *
 * DESIGN: rendering is strict so that no template ships with a leftover. A name must be
 * one of the project's prompt variables (prompt_var_names()) or set in the variables;
 * a malformed tag, an unknown name, an unclosed or mismatched section all fail with the
 * placeholder and its template line in err. An unset known variable renders as empty:
 * the lead may leave any variable out.
 */
#ifndef CUTEGEN_PROMPT_H
#define CUTEGEN_PROMPT_H

#include <stddef.h>

#include "strbuf.h"

typedef struct prompt_vars prompt_vars;

prompt_vars *prompt_vars_new(void);
/* Sets name to a copy of value (NULL value: ""); replaces an earlier value. */
void prompt_vars_set(prompt_vars *v, const char *name, const char *value);
/* The value, or NULL when unset. */
const char *prompt_vars_get(const prompt_vars *v, const char *name);
void prompt_vars_free(prompt_vars *v);

/* Renders template_text into out (appended). Returns 0, or -1 with a message in err
 * ("prompt template line 12: unknown placeholder '{{kernal}}'"); out then holds a
 * partial rendering the caller should discard. v may be NULL (nothing set). */
int prompt_render(const char *template_text, const prompt_vars *v, strbuf *out, strbuf *err);

/* Renders prompts/<kind>.txt under cg_source_dir(); the kinds are listed by
 * prompt_kinds(). A kind that is not a plain name, or a missing file, is an error. */
int prompt_render_kind(const char *kind, const prompt_vars *v, strbuf *out, strbuf *err);

/* The variables a template uses (substitutions and sections, each once, in order of
 * first use), NULL-terminated, malloc'd: free each string and the array. Malformed tags
 * are skipped. */
char **prompt_template_vars(const char *template_text);
void prompt_free_names(char **names);

/* A rough token count for prompt-size reports: words, numbers, punctuation and
 * indentation counted the way BPE tokenisers split code and prose (see prompt.c). */
size_t prompt_estimate_tokens(const char *text);

/* The variables templates may use (the names the lead sets), NULL-terminated. */
const char *const *prompt_var_names(void);
/* The template kinds shipped in prompts/, NULL-terminated. */
const char *const *prompt_kinds(void);

#endif
