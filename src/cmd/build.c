/* cutegen build: compile a kernel into a shared object through the build cache. */
#include <stdio.h>

#include "cmd/commands.h"
#include "util.h"

int cmd_build(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    error("'cutegen build' is being written");
    return EXIT_INTERNAL;
}
