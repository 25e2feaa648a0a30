/*
 * cutegen: turns a PyTorch reference program into a faster CuTe kernel.
 * This file is only the front end: it finds the subcommand in the table and runs it.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "util.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    { "run", cmd_run, "search for the fastest correct kernel of a problem (LLM tree search)" },
    { "eval", cmd_eval, "judge a kernel against a PyTorch problem: verdict, time, speedup" },
    { "build", cmd_build, "compile a kernel into a shared object through the build cache" },
    { "ask", cmd_ask, "send one prompt to a model: reply on stdout, usage and cost on stderr" },
    { "profile", cmd_profile, "profiler digest of a kernel (Nsight Compute), and its structure" },
    { "bench", cmd_bench, "run many problems at once (a KernelBench sweep): GPU lanes, shared builds, resumable" },
    { "report", cmd_report, "tables and plots of one or more runs: speedups, fast_p, cost (md, csv, html, json)" },
    { "export", cmd_export, "each task's best kernel as a KernelBench ModelNew file (load_inline)" },
    { "recipe", cmd_recipe, "recognise a task spec and write a kernel from the built-in recipes" },
    { "doctor", cmd_doctor, "say what is installed, what is missing, and how to get it" },
};

static void usage(FILE *f)
{
    fprintf(f, "usage: cutegen <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'cutegen <command> --help' tells more. Exit codes: docs/exit-codes.md.\n");
}

/* Like git: a full disk or closed pipe on stdout is an error, not silence. */
static int check_stdout(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("cutegen: error: cannot write standard output");
        return rc ? rc : EXIT_INTERNAL;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
        usage(stdout);
        return check_stdout(EXIT_OK);
    }
    if (!strcmp(name, "--version") || !strcmp(name, "version")) {
        printf("cutegen %s\n", CUTEGEN_VERSION);
        return check_stdout(EXIT_OK);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(name, commands[i].name) == 0)
            return check_stdout(commands[i].fn(argc - 1, argv + 1));
    }
    error("unknown command '%s'", name);
    usage(stderr);
    return EXIT_USAGE;
}
