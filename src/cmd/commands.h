/*
 * commands: the subcommand table of the cutegen CLI.
 *
 * To add a command: write src/cmd/<name>.c with `int cmd_<name>(int argc, char **argv)`
 * (argv[0] is the command name; parse with getopt_long; answer -h/--help with usage on
 * stdout and exit 0), declare it below and add a row to the table in src/main.c.
 * tests/cli/t0001-help.sh checks that every command in the table answers --help.
 */
#ifndef CUTEGEN_COMMANDS_H
#define CUTEGEN_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_ask(int argc, char **argv);
int cmd_recipe(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif
