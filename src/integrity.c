/* integrity: static checks of a candidate's shared object (see integrity.h). */
#include "integrity.h"

#include <stdlib.h>
#include <string.h>

#include "proc.h"
#include "util.h"

/* Symbols refused even though they match an allowed prefix, with the reason. */
static const struct {
    const char *prefix;
    const char *reason;
} denied[] = {
    { "cudaDeviceReset", "resets the device and destroys the harness's buffers" },
    { "cudaSetDevice", "changes the device the harness chose" },
    { "cudaIpc", "opens other processes' memory" },
    { "cudaSetDeviceFlags", "changes the device configuration" },
    { "cudaDeviceSetLimit", "changes device-wide limits" },
    { "_ZNSt6thread", "starts a thread" },
    { "_ZNSt14basic_ifstream", "reads files" },
    { "_ZNSt14basic_ofstream", "writes files" },
    { "_ZNSt13basic_fstream", "opens files" },
    { "_ZNSt13basic_filebuf", "opens files" },
    { "_ZNSt10filesystem", "touches the file system" },
    { "_ZNSt7__cxx1110filesystem", "touches the file system" },
};

/* Allowed undefined symbols: exact names, or prefixes ending in '*'. */
static const char *const allowed[] = {
    /* CUDA runtime */
    "cuda*", "__cuda*",
    /* C++ runtime pieces CuTe host code and static initialisers use */
    "_ZNSt*", "_ZNKSt*", "_ZSt*", "_ZTVN10__cxxabiv*", "_ZTI*", "_ZTS*", "_Znwm", "_Znam",
    "_ZdlPv*", "_ZdaPv*", "_ZnwmSt*", "_ZnamSt*", "__cxa_*", "__gxx_personality_v0",
    "_Unwind_Resume", "__dso_handle", "_ITM_*", "__gmon_start__",
    /* C: memory, strings, formatting to the console, assertions */
    "memcpy", "memmove", "memset", "memcmp", "strlen", "strcmp", "strncmp", "strchr",
    "malloc", "calloc", "realloc", "free", "abort", "__assert_fail", "__stack_chk_fail",
    "exit", /* host stubs of non-inline __device__ functions import it */
    "printf", "puts", "putchar", "__printf_chk", "snprintf", "__snprintf_chk", "vsnprintf",
    "__vsnprintf_chk", "fprintf", "__fprintf_chk", "fputs", "fputc", "fflush", "stderr",
    "stdout", "atoi", "strtol", "strtod", "qsort",
    /* math */
    "sqrt*", "cbrt*", "exp*", "log*", "pow*", "sin*", "cos*", "tan*", "asin*", "acos*",
    "atan*", "erf*", "fabs*", "fmax*", "fmin*", "floor*", "ceil*", "round*", "lround*",
    "trunc*", "fmod*", "frexp*", "ldexp*", "modf*", "hypot*", "tgamma*", "lgamma*",
    "nearbyint*", "rint*", "lrint*", "llrint*", "llround*", "copysign*", "__isnan*",
    "__isinf*", "__finite*", "__fpclassify*", "__signbit*",
    /* compiler support */
    "__cxa_atexit", "__cxa_finalize", "__tls_get_addr", "__popcountdi2",
};

static bool matches(const char *sym, const char *pattern)
{
    size_t n = strlen(pattern);
    if (n && pattern[n - 1] == '*')
        return strncmp(sym, pattern, n - 1) == 0;
    return strcmp(sym, pattern) == 0;
}

bool integrity_symbol_allowed(const char *sym, const char **reason)
{
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
        if (str_starts_with(sym, denied[i].prefix)) {
            *reason = denied[i].reason;
            return false;
        }
    }
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (matches(sym, allowed[i]))
            return true;
    *reason = "is outside what candidates may call (the CUDA runtime, C math, memory and "
              "console functions)";
    return false;
}

static int run_tool(const char *const *argv, strbuf *out, strbuf *why)
{
    proc_opts o = { .argv = argv, .timeout_s = 60, .max_output = 64u << 20 };
    proc_result r;
    proc_result_init(&r);
    int rc = proc_run(&o, &r);
    if (rc < 0 || r.exit_code != 0) {
        strbuf_addf(why, "'%s' failed (%s); install binutils (apt-get install binutils)",
                    argv[0], rc < 0 ? r.err.buf : "non-zero exit");
        proc_result_release(&r);
        return -1;
    }
    strbuf_add(out, r.out.buf, r.out.len);
    proc_result_release(&r);
    return 0;
}

/* Strips a "@VERSION" suffix nm prints. */
static void strip_version(char *sym)
{
    char *at = strchr(sym, '@');
    if (at)
        *at = '\0';
}

static enum integrity_result check_symbols(const char *so, strbuf *why)
{
    const char *undef_argv[] = { "nm", "-D", "--undefined-only", so, NULL };
    const char *def_argv[] = { "nm", "-D", "--defined-only", so, NULL };
    strbuf undef = STRBUF_INIT, def = STRBUF_INIT;
    enum integrity_result res = INTEGRITY_OK;
    if (run_tool(undef_argv, &undef, why) < 0 || run_tool(def_argv, &def, why) < 0) {
        res = INTEGRITY_TOOL_ERROR;
        goto out;
    }
    bool has_entry = false;
    char *save = NULL;
    for (char *line = strtok_r(def.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *sym = strrchr(line, ' ');
        if (sym && strcmp(sym + 1, "cg_forward") == 0 && strstr(line, " T "))
            has_entry = true;
    }
    if (!has_entry) {
        strbuf_adds(why, "the kernel exports no cg_forward function: define `CG_EXPORT int "
                         "cg_forward(...)` with the signature in cutegen/abi.h");
        res = INTEGRITY_NO_ENTRY;
        goto out;
    }
    int bad = 0;
    save = NULL;
    for (char *line = strtok_r(undef.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *sym = strrchr(line, ' ');
        sym = sym ? sym + 1 : line;
        strip_version(sym);
        const char *reason = NULL;
        if (!*sym || integrity_symbol_allowed(sym, &reason))
            continue;
        if (bad++ < 5)
            strbuf_addf(why, "%scalls '%s', which %s", bad > 1 ? "; " : "", sym, reason);
    }
    if (bad > 5)
        strbuf_addf(why, "; and %d more such symbols", bad - 5);
    if (bad)
        res = INTEGRITY_REJECTED;
out:
    strbuf_release(&undef);
    strbuf_release(&def);
    return res;
}

static bool library_allowed(const char *lib)
{
    static const char *const ok[] = { "libcudart.so", "libstdc++.so", "libgcc_s.so", "libc.so",
                                      "libm.so", "ld-linux", "libpthread.so", "libdl.so",
                                      "librt.so" };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (str_starts_with(lib, ok[i]))
            return true;
    return false;
}

static enum integrity_result check_libraries(const char *so, strbuf *why)
{
    const char *argv[] = { "readelf", "-d", so, NULL };
    strbuf out = STRBUF_INIT;
    if (run_tool(argv, &out, why) < 0) {
        strbuf_release(&out);
        return INTEGRITY_TOOL_ERROR;
    }
    enum integrity_result res = INTEGRITY_OK;
    char *save = NULL;
    for (char *line = strtok_r(out.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *open = strstr(line, "(NEEDED)");
        char *lb = open ? strchr(open, '[') : NULL;
        char *rb = lb ? strchr(lb, ']') : NULL;
        if (!rb)
            continue;
        *rb = '\0';
        if (!library_allowed(lb + 1)) {
            strbuf_addf(why, "%slinks '%s'; candidates are linked with the CUDA runtime only",
                        res ? "; " : "", lb + 1);
            res = INTEGRITY_REJECTED;
        }
    }
    strbuf_release(&out);
    return res;
}

/* Raw system calls in host code bypass every symbol check. */
static enum integrity_result check_instructions(const char *so, strbuf *why)
{
    const char *argv[] = { "objdump", "-d", "--no-show-raw-insn", "-j", ".text", so, NULL };
    strbuf out = STRBUF_INIT;
    if (run_tool(argv, &out, why) < 0) {
        strbuf_release(&out);
        return INTEGRITY_TOOL_ERROR;
    }
    enum integrity_result res = INTEGRITY_OK;
    char *save = NULL;
    for (char *line = strtok_r(out.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *tab = strchr(line, '\t');
        const char *insn = tab ? tab + 1 : line;
        while (*insn == ' ')
            insn++;
        if (str_starts_with(insn, "syscall") || str_starts_with(insn, "sysenter") ||
            str_starts_with(insn, "int    $0x80") || str_starts_with(insn, "int $0x80")) {
            strbuf_adds(why, "host code makes a raw system call; candidates may not");
            res = INTEGRITY_REJECTED;
            break;
        }
    }
    strbuf_release(&out);
    return res;
}

enum integrity_result integrity_check_object(const char *so_path, strbuf *why)
{
    enum integrity_result r = check_symbols(so_path, why);
    if (r != INTEGRITY_OK)
        return r;
    r = check_libraries(so_path, why);
    if (r != INTEGRITY_OK)
        return r;
    return check_instructions(so_path, why);
}

enum integrity_result integrity_check_link_log(const char *log, strbuf *why)
{
    int bad = 0;
    static const char *const markers[] = { "undefined reference to `", "undefined reference to '",
                                           "undefined symbol: " };
    for (size_t m = 0; m < sizeof markers / sizeof markers[0]; m++) {
        for (const char *p = log; (p = strstr(p, markers[m])) != NULL;) {
            p += strlen(markers[m]);
            size_t n = strcspn(p, "'` \n(");
            char *sym = xstrndup(p, n);
            strip_version(sym);
            const char *reason = NULL;
            if (*sym && !integrity_symbol_allowed(sym, &reason) && !strstr(why->buf ?: "", sym)) {
                strbuf_addf(why, "%scalls '%s', which %s", bad ? "; " : "", sym, reason);
                bad++;
            }
            free(sym);
            p += n;
        }
    }
    return bad ? INTEGRITY_REJECTED : INTEGRITY_OK;
}
