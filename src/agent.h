/*
 * agent: the generate → test → refine tree search behind `cutegen run`.
 *
 * A run takes one problem to its best kernel. The tree's root is a first version (asked
 * of the model) or a seed kernel; each round picks the best correct nodes (the best,
 * plus a runner-up for exploration), asks the model for children of each, judges them
 * through one evaluation session (builds in parallel, GPU work one at a time), gives
 * each failed child a bounded number of fixes, and keeps the best. Every stop has a
 * recorded reason. Profiler digests join the prompts only once the best kernel's
 * structure fingerprint has held for a few accepted steps (delayed profiling).
 * Everything goes to a run directory (store.h) as it happens, so a killed run resumes.
 */
#ifndef CUTEGEN_AGENT_H
#define CUTEGEN_AGENT_H

#include <stdbool.h>

#include "eval.h"
#include "llm.h"
#include "strbuf.h"

typedef enum profile_mode { PROFILE_DELAYED = 0, PROFILE_NEVER, PROFILE_ALWAYS } profile_mode;

typedef struct agent_opts {
    const char *task_path;
    const char *run_dir;       /* NULL: runs/<date>-<problem> */
    bool resume;               /* continue the run in run_dir */
    const char *seed_kernel;   /* start the tree from this kernel instead of a first version;
                                  "builtin": from the best built-in recipe variant */
    bool recipes_only;         /* no model configured: the built-in recipes, autotuned */
    int recipe_variants;       /* judge at most this many recipe variants (0: all) */
    int children;              /* children asked per round (default 3) */
    int fix_attempts;          /* fixes per failed child (default 2) */
    int max_rounds;            /* default 6 */
    int max_depth;             /* default 8 */
    double plateau_gain;       /* a round that improves the best by less than this... (0.02) */
    int plateau_rounds;        /* ...this many times in a row stops the run (default 2) */
    double sol_stop;           /* stop once best time <= sol / this fraction (default 0.9) */
    profile_mode profile;
    int stable_steps;          /* delayed: fingerprint unchanged over this many accepted steps (2) */
    int profile_depth;         /* delayed: or from this depth on (0: off) */
    int kb_notes;              /* knowledge notes per prompt (default 3) */
    int kb_chars;              /* and their size cap (default 7000) */
    eval_opts eval;
    llm_config llm;
    llm_limits task_limits;
} agent_opts;

void agent_opts_init(agent_opts *o);

/* Runs (or resumes) the search. Returns 0 when it ended with a recorded stop reason
 * (whether or not a correct kernel was found), else an EXIT_* code with err set. */
int agent_run(agent_opts *o, strbuf *err);

#endif
