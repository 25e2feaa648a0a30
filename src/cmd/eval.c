/* cutegen eval: placeholder until the evaluation pipeline lands. */
#include "cmd/commands.h"
#include "util.h"

int cmd_eval(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    error("'cutegen eval' is being written");
    return EXIT_INTERNAL;
}
