/* cutegen doctor: placeholder. */
#include "cmd/commands.h"
#include "util.h"

int cmd_doctor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    error("'cutegen doctor' is being written");
    return EXIT_INTERNAL;
}
