/* Unit tests for prompt: the template language (substitution, sections, standalone tag
 * lines, strict errors with line numbers) and every shipped template in prompts/,
 * rendered with every variable set and with every variable empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "util.h"

/* Renders tmpl with v; asserts success and returns the malloc'd text. */
static char *render_ok(const char *tmpl, const prompt_vars *v)
{
    strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    int rc = prompt_render(tmpl, v, &out, &err);
    if (rc != 0)
        fail_msg("render failed: %s", strbuf_str(&err));
    strbuf_release(&err);
    char *s = xstrdup(strbuf_str(&out));
    strbuf_release(&out);
    return s;
}

/* Renders tmpl expecting failure; returns the malloc'd error. */
static char *render_err(const char *tmpl, const prompt_vars *v)
{
    strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(prompt_render(tmpl, v, &out, &err), -1);
    strbuf_release(&out);
    char *s = xstrdup(strbuf_str(&err));
    strbuf_release(&err);
    return s;
}

static void test_vars(void **state)
{
    (void)state;
    prompt_vars *v = prompt_vars_new();
    assert_null(prompt_vars_get(v, "kernel"));
    char buf[] = "abc";
    prompt_vars_set(v, "kernel", buf);
    buf[0] = 'x'; /* the value was copied */
    assert_string_equal(prompt_vars_get(v, "kernel"), "abc");
    prompt_vars_set(v, "kernel", "def");
    assert_string_equal(prompt_vars_get(v, "kernel"), "def");
    prompt_vars_set(v, "message", NULL);
    assert_string_equal(prompt_vars_get(v, "message"), "");
    prompt_vars_free(v);
    prompt_vars_free(NULL);
}

static void test_substitution_and_sections(void **state)
{
    (void)state;
    prompt_vars *v = prompt_vars_new();
    prompt_vars_set(v, "kernel", "int x = {{not_a_tag}};\n\n");
    prompt_vars_set(v, "time_ms", "1.5");
    prompt_vars_set(v, "message", "  \n");
    char *s = render_ok("A {{kernel}} B\n{{#time_ms}}t={{time_ms}}{{/time_ms}}"
                        "{{#message}}M{{/message}}{{^message}}noM{{/message}}"
                        "{{^time_ms}}never{{/time_ms}}[{{speedup}}]{{! a comment }}", v);
    /* values are verbatim (never parsed), minus trailing newlines; blank counts as unset */
    assert_string_equal(s, "A int x = {{not_a_tag}}; B\nt=1.5noM[]");
    free(s);

    /* nested sections; standalone tag lines vanish with their line */
    s = render_ok("a\n{{#time_ms}}\n  {{^speedup}}\nslow\n  {{/speedup}}\n{{/time_ms}}\n"
                  "{{! gone }}\nz\n", v);
    assert_string_equal(s, "a\nslow\nz\n");
    free(s);
    s = render_ok("{{#speedup}}\nhidden {{kernel}}\n{{/speedup}}\nend", v);
    assert_string_equal(s, "end");
    free(s);
    /* NULL vars: nothing set */
    s = render_ok("x{{kernel}}y{{^kernel}}!{{/kernel}}", NULL);
    assert_string_equal(s, "xy!");
    free(s);
    /* a name set by the caller is known even when it is not a project variable */
    prompt_vars_set(v, "extra", "E");
    s = render_ok("{{ extra }}", v);
    assert_string_equal(s, "E");
    free(s);
    prompt_vars_free(v);
}

static void test_errors_name_placeholder_and_line(void **state)
{
    (void)state;
    prompt_vars *v = prompt_vars_new();
    prompt_vars_set(v, "kernel", "k");
    char *e = render_err("line one\n{{kernal}}\n", v);
    assert_non_null(strstr(e, "line 2"));
    assert_non_null(strstr(e, "unknown placeholder '{{kernal}}'"));
    free(e);
    /* unknown names fail even inside a hidden section */
    e = render_err("{{#speedup}}\n\n{{speedupp}}\n{{/speedup}}", v);
    assert_non_null(strstr(e, "line 3"));
    free(e);
    e = render_err("a\nb {{kernel\n", v);
    assert_non_null(strstr(e, "line 2: unterminated placeholder '{{kernel'"));
    free(e);
    e = render_err("{{}}", v);
    assert_non_null(strstr(e, "malformed placeholder '{{}}'"));
    free(e);
    e = render_err("{{ker nel}}", v);
    assert_non_null(strstr(e, "malformed"));
    free(e);
    e = render_err("{{#9x}}{{/9x}}", v);
    assert_non_null(strstr(e, "malformed"));
    free(e);
    e = render_err("{{#kernel}}\nx\n", v);
    assert_non_null(strstr(e, "line 1: section '{{#kernel}}' is never closed"));
    free(e);
    e = render_err("{{#kernel}}{{^message}}\n{{/kernel}}{{/message}}", v);
    assert_non_null(strstr(e, "line 2: '{{/kernel}}' does not close '{{^message}}' opened at line 1"));
    free(e);
    e = render_err("x\n{{/kernel}}", v);
    assert_non_null(strstr(e, "line 2: '{{/kernel}}' closes no section"));
    free(e);
    prompt_vars_free(v);
}

static void test_template_vars(void **state)
{
    (void)state;
    char **n = prompt_template_vars("{{kernel}} {{#message}}{{message}}{{/message}} {{! c }}"
                                    "{{^history}}{{/history}}{{kernel}} {{bad");
    assert_non_null(n);
    assert_string_equal(n[0], "kernel");
    assert_string_equal(n[1], "message");
    assert_string_equal(n[2], "history");
    assert_null(n[3]);
    prompt_free_names(n);
    n = prompt_template_vars("plain text");
    assert_null(n[0]);
    prompt_free_names(n);
}

static void test_estimate_tokens(void **state)
{
    (void)state;
    assert_int_equal(prompt_estimate_tokens(""), 0);
    assert_int_equal(prompt_estimate_tokens("hello"), 1);
    size_t prose = prompt_estimate_tokens("The kernel reads each row once and writes it once.");
    assert_true(prose >= 9 && prose <= 14);
    /* code is denser in tokens than prose of the same length */
    const char *code = "auto t = make_layout(make_shape(Int<4>{}, _8{}), LayoutRight{});";
    assert_true(prompt_estimate_tokens(code) > strlen(code) / 4);
}

/* Sets every project variable to a value built from its name. */
static prompt_vars *all_vars(bool empty)
{
    prompt_vars *v = prompt_vars_new();
    for (const char *const *n = prompt_var_names(); *n; n++) {
        char *val = xasprintf("<value of %s>\nsecond line {with braces}", *n);
        prompt_vars_set(v, *n, empty ? "" : val);
        free(val);
    }
    return v;
}

static void test_every_template_renders(void **state)
{
    (void)state;
    prompt_vars *full = all_vars(false), *empty = all_vars(true);
    int kinds = 0;
    for (const char *const *k = prompt_kinds(); *k; k++, kinds++) {
        for (int pass = 0; pass < 3; pass++) {
            const prompt_vars *v = pass == 0 ? full : pass == 1 ? empty : NULL;
            strbuf out = STRBUF_INIT, err = STRBUF_INIT;
            int rc = prompt_render_kind(*k, v, &out, &err);
            if (rc != 0)
                fail_msg("%s: %s", *k, strbuf_str(&err));
            if (strstr(out.buf, "{{") || strstr(out.buf, "}}"))
                fail_msg("%s (pass %d) leaves a placeholder:\n%s", *k, pass, out.buf);
            assert_true(out.len > 200);
            assert_null(strstr(out.buf, "\n\n\n")); /* no holes where sections were */
            assert_true(out.buf[0] != '\n');
            strbuf_release(&out);
            strbuf_release(&err);
        }
    }
    assert_int_equal(kinds, 7);
    prompt_vars_free(full);
    prompt_vars_free(empty);
}

/* Reads prompts/<kind>.txt. */
static char *read_template(const char *kind)
{
    char *path = xasprintf("%s/prompts/%s.txt", cg_source_dir(), kind);
    strbuf sb = STRBUF_INIT;
    assert_int_equal(read_file(path, &sb, 1 << 20), 0);
    free(path);
    return strbuf_detach(&sb);
}

static bool uses(char **names, const char *name)
{
    for (char **n = names; *n; n++)
        if (strcmp(*n, name) == 0)
            return true;
    return false;
}

/* What each kind must carry (the brief), and what it must not. */
static void test_template_contents(void **state)
{
    (void)state;
    static const struct {
        const char *kind;
        const char *must[12];
    } want[] = {
        { "system", { "abi", "gpu_facts", NULL } },
        { "first", { "problem_source", "task_spec", "graph", "flops", "min_bytes", "sol_ms",
                     "eager_ms", "knowledge", "edit_error", NULL } },
        { "fix_compile", { "problem_source", "task_spec", "kernel", "message", "knowledge",
                           "history", "attempt", "edit_error", NULL } },
        { "fix_wrong", { "problem_source", "task_spec", "kernel", "message", "knowledge",
                         "history", "attempt", "edit_error", NULL } },
        { "fix_runtime", { "problem_source", "task_spec", "kernel", "message", "knowledge",
                           "history", "attempt", "edit_error", NULL } },
        { "optimise", { "problem_source", "kernel", "time_ms", "speedup", "sol_ms", "history",
                        "profile_digest", "knowledge", "edit_error", NULL } },
        { "tune", { "kernel", "time_ms", "speedup", "sol_ms", "history", "profile_digest",
                    "knowledge", "edit_error", NULL } },
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char *t = read_template(want[i].kind);
        char **names = prompt_template_vars(t);
        for (int j = 0; want[i].must[j]; j++)
            if (!uses(names, want[i].must[j]))
                fail_msg("prompts/%s.txt does not use {{%s}}", want[i].kind, want[i].must[j]);
        /* the reply format is stated once, in the system prompt only */
        bool is_system = strcmp(want[i].kind, "system") == 0;
        assert_int_equal(strstr(t, "<<<<<<< SEARCH") != NULL, is_system);
        assert_int_equal(strstr(t, ">>>>>>> REPLACE") != NULL, is_system);
        /* a fix prompt has no use for speed numbers; a first version has no kernel */
        if (str_starts_with(want[i].kind, "fix_")) {
            assert_false(uses(names, "profile_digest"));
            assert_false(uses(names, "sol_ms"));
        }
        if (strcmp(want[i].kind, "first") == 0)
            assert_false(uses(names, "kernel"));
        prompt_free_names(names);
        free(t);
    }
}

static void test_message_is_prominent(void **state)
{
    (void)state;
    prompt_vars *v = all_vars(true);
    prompt_vars_set(v, "message", "error: cute_template.cu:12: Mismatched Ranks");
    prompt_vars_set(v, "kernel", "KERNEL");
    strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(prompt_render_kind("fix_compile", v, &out, &err), 0);
    const char *m = strstr(out.buf, "## Compiler errors\nerror: cute_template.cu:12");
    assert_non_null(m);
    assert_true(m > strstr(out.buf, "KERNEL")); /* right after the kernel it refers to */
    strbuf_release(&out);
    prompt_vars_free(v);
}

static void test_render_kind_errors(void **state)
{
    (void)state;
    strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    assert_int_equal(prompt_render_kind("../etc/passwd", NULL, &out, &err), -1);
    assert_non_null(strstr(err.buf, "bad prompt kind"));
    strbuf_reset(&err);
    assert_int_equal(prompt_render_kind("no_such_kind", NULL, &out, &err), -1);
    assert_non_null(strstr(err.buf, "unable to read prompt template"));
    strbuf_release(&out);
    strbuf_release(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vars),
        cmocka_unit_test(test_substitution_and_sections),
        cmocka_unit_test(test_errors_name_placeholder_and_line),
        cmocka_unit_test(test_template_vars),
        cmocka_unit_test(test_estimate_tokens),
        cmocka_unit_test(test_every_template_renders),
        cmocka_unit_test(test_template_contents),
        cmocka_unit_test(test_message_is_prominent),
        cmocka_unit_test(test_render_kind_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
