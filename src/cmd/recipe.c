/*
 * cutegen recipe: the built-in proposer by hand. Reads a task spec (make_spec()'s JSON),
 * prints the recognised plan or why it is not covered, lists the tuning variants, and
 * writes the kernel of one variant. Exit 0 covered (and written), 1 not covered, 2 bad
 * usage, 3 a malformed or unreadable spec, 9 a template missing or an unwritable output.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "gpu.h"
#include "recipe.h"
#include "util.h"

static const char usage_text[] =
    "usage: cutegen recipe --spec SPEC.json [--variant K] [--out K.cu] [--list] [--gpu NAME]\n"
    "\n"
    "Recognises what a task spec computes (pointwise chains; reductions, logsumexp,\n"
    "softmax and log-softmax over one dim; normalisations by statistics broadcast back;\n"
    "a matrix product or a convolution (also transposed or grouped) with a pointwise\n"
    "epilogue; max and average pooling; cross-entropy and triplet-margin losses of\n"
    "whole rows; cumsum and cumprod, also reversed, exclusive or masked; and chains of\n"
    "these, up to 5 stages through the workspace, such as a convolution, then a pool,\n"
    "then a mean; scaled_dot_product_attention, rewritten as softmax(q @ k^T * scale)\n"
    "@ v first) and writes a CuTe kernel for it from the templates in recipes/. Prints\n"
    "the plan, or 'not covered: <why>'.\n"
    "\n"
    "  --spec FILE       the task spec (JSON, as the reference process makes it)\n"
    "  --variant K       which parameter set (0 = the first guess; see --list)\n"
    "  --out FILE        write the kernel here (default: print nothing but the plan)\n"
    "  --list            list the parameter sets worth trying, one a line\n"
    "  --recipes DIR     the templates (default: the project's recipes/)\n"
    "  --gpu NAME        choose the variants for this GPU instead of an H200: h200, h100,\n"
    "                    h100 pcie, a100, a100 80gb, l40s, 4090 (or a device name as CUDA\n"
    "                    reports it). Below sm_90 the SM80-class paths: no clusters, bulk\n"
    "                    copies or WGMMA. `cutegen run` asks the GPU it runs on itself.\n"
    "  -h, --help        this text\n"
    "\n"
    "Environment: CUTEGEN_RECIPE_PLAIN=1 writes a norm's expressions as recognised, without\n"
    "the rewrites that keep per-row work out of the per-element loop (for comparing them).\n"
    "\n"
    "Exit codes: 0 covered; 1 not covered; 2 bad usage; 3 bad spec; 9 template or\n"
    "output error.\n";

static const struct option long_opts[] = {
    { "spec", required_argument, NULL, 's' },
    { "variant", required_argument, NULL, 'v' },
    { "out", required_argument, NULL, 'o' },
    { "list", no_argument, NULL, 'l' },
    { "recipes", required_argument, NULL, 'r' },
    { "gpu", required_argument, NULL, 'g' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

int cmd_recipe(int argc, char **argv)
{
    const char *spec = NULL, *out_path = NULL, *dir = NULL, *gpu_name = NULL;
    int variant = 0, c;
    bool list = false;
    char *end;
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:v:o:lr:g:h", long_opts, NULL)) != -1) {
        switch (c) {
        case 's': spec = optarg; break;
        case 'o': out_path = optarg; break;
        case 'l': list = true; break;
        case 'r': dir = optarg; break;
        case 'g': gpu_name = optarg; break;
        case 'v':
            variant = (int)strtol(optarg, &end, 10);
            if (*end || variant < 0) {
                error("--variant wants a number from 0, not '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'h':
            fputs(usage_text, stdout);
            return EXIT_OK;
        default:
            fputs(usage_text, stderr);
            return EXIT_USAGE;
        }
    }
    if (!spec || optind < argc) {
        error("%s", !spec ? "no task spec given: cutegen recipe --spec SPEC.json" : "unexpected argument");
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const gpu_facts *gpu = NULL;
    if (gpu_name && !(gpu = gpu_lookup(gpu_name, 0, 0))) {
        error("unknown GPU '%s': give one of h200, h100, h100 pcie, a100, a100 80gb, l40s, 4090", gpu_name);
        return EXIT_USAGE;
    }
    recipe_plan plan;
    recipe_plan_init(&plan);
    strbuf why = STRBUF_INIT, text = STRBUF_INIT;
    int rc = recipe_recognise_file(spec, &plan, &why);
    if (rc < 0) {
        error("%s", why.buf);
        strbuf_release(&why);
        recipe_plan_release(&plan);
        return EXIT_BAD_TASK;
    }
    if (rc > 0) {
        printf("%s\n", why.buf);
        strbuf_release(&why);
        recipe_plan_release(&plan);
        return EXIT_VERDICT;
    }
    recipe_hw hw;
    recipe_hw_from_gpu(gpu, &hw);
    recipe_params vars[64];
    int nv = recipe_variants(&plan, &hw, vars, 64); /* first: a staged plan lists its stages' */
    recipe_describe(&plan, &text);
    fputs(text.buf, stdout);
    if (gpu)
        printf("gpu: %s (sm_%d, %d SMs, %d KB of shared memory a CTA)\n", gpu->name, hw.sm, hw.sms,
               hw.smem_per_block / 1024);
    if (list) {
        for (int i = 0; i < nv; i++) {
            strbuf_reset(&text);
            recipe_params_format(&vars[i], &text);
            printf("variant %d: %s\n", i, text.buf);
        }
    }
    int ret = EXIT_OK;
    if (variant >= nv) {
        error("variant %d does not exist: this plan has %d (0..%d)", variant, nv, nv - 1);
        ret = EXIT_USAGE;
    } else if (out_path) {
        strbuf cu = STRBUF_INIT, err = STRBUF_INIT;
        if (recipe_generate(&plan, &vars[variant], dir ? dir : recipe_dir(), &cu, &err) < 0) {
            error("%s", err.buf);
            ret = EXIT_INTERNAL;
        } else if (write_file_atomic(out_path, cu.buf, cu.len) < 0) {
            error("cannot write '%s': %s", out_path, strerror(errno));
            ret = EXIT_INTERNAL;
        } else {
            strbuf_reset(&text);
            recipe_params_format(&vars[variant], &text);
            printf("wrote %s (variant %d: %s)\n", out_path, variant, text.buf);
        }
        strbuf_release(&cu);
        strbuf_release(&err);
    }
    strbuf_release(&why);
    strbuf_release(&text);
    recipe_plan_release(&plan);
    return ret;
}
