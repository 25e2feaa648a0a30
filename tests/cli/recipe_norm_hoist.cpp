// tests/cli/recipe_norm_hoist.cpp: checks, on the host, that a NORM kernel's expressions as
// the generator rewrites them (src/recipe_hoist.c: divisions by row values as products by
// reciprocals, row-uniform factors multiplied first, the statistics' own subexpressions
// as derived slots computed by cgr_derive once a row) compute what the expressions as
// recognised compute (CUTEGEN_RECIPE_PLAIN=1), to float rounding.
//
// How: PLAIN and HOIST are the generated parameter blocks of the two forms (from
// "#define CGR_GENERATED" to "end of recipe parameters"), each included into a namespace
// of its own. For random inputs and random statistics (means in [-3, 3], variances and sums
// positive), the plain form's epilogue (and each second-pass prologue) is evaluated on
// inputs + slots; the rewritten form's on inputs + slots + what cgr_derive adds, called
// after each statistic in the order the template's to_slots sets them (by pass, then
// index). Every value must agree to 2e-6 relative (or be NaN in both). The broadcast
// inputs' offsets (cgr_off, 32-bit in the rewritten form where they fit) must be equal,
// and constant over each run cgr_run says.
//
// Built by tests/cli/t0711-recipe-norm-hoist.sh:
//   c++ -std=c++17 -DPLAIN='"plain.h"' -DHOIST='"hoist.h"' -I include -I recipes -I CUTLASS -I CUDA/include this.cpp
// Prints the largest difference; exit 0 when all agree, 1 otherwise.
#include <cutegen/abi.h>
#include <cmath>
#include <cstdio>
#include <random>

#include "ops.cuh"

namespace plain {
#include PLAIN
constexpr int kNin = CGR_NIN, kNslot = CGR_NSLOT, kNstat = CGR_NSTAT, kLevels = CGR_LEVELS;
constexpr int64_t kO = CGR_OUTER, kR = CGR_R, kI = CGR_INNER;
}  // namespace plain
#undef CGR_NSLOT
namespace hoist {
#include HOIST
constexpr int kNin = CGR_NIN, kNslot = CGR_NSLOT, kNstat = CGR_NSTAT, kLevels = CGR_LEVELS;
}  // namespace hoist

static_assert(plain::kNin == hoist::kNin && plain::kNstat == hoist::kNstat, "the two forms of one plan");
static_assert(hoist::kNslot >= plain::kNslot, "derived slots come after the statistics' own");

static bool agree(float p, float h, double *worst)
{
    if (std::isnan(p) || std::isnan(h))
        return std::isnan(p) && std::isnan(h);
    if (std::isinf(p) || std::isinf(h))
        return p == h;
    double d = std::fabs(double(p) - double(h)) / std::fmax(1.0, std::fabs(double(p)));
    *worst = std::fmax(*worst, d);
    return d <= 2e-6;
}

int main()
{
    std::mt19937 rng(20261205);
    std::uniform_real_distribution<float> val(-3.f, 3.f), pos(0.05f, 40.f);
    constexpr int kNx = plain::kNin + hoist::kNslot;
    double worst = 0;
    int bad = 0, derived = hoist::kNslot - plain::kNslot;
    for (int trial = 0; trial < 20000; ++trial) {
        float xp[kNx + 1] = {}, xh[kNx + 1] = {};
        for (int i = 0; i < plain::kNin; ++i) xp[i] = xh[i] = val(rng);
        float s[hoist::kNslot + 1] = {};
        for (int k = 0; k < plain::kNstat; ++k) {
            int kind = plain::cgr_stat_kind(k), at = plain::cgr_stat_slot(k);
            if (kind == 3) {  // mean and variance
                s[at] = val(rng);
                s[at + 1] = pos(rng) * 0.1f;
            } else {
                s[at] = kind == 0 ? pos(rng) : val(rng);  // sums positive (of squares, of |x|); extremes any sign
            }
        }
        for (int q = 0; q < plain::kNslot; ++q) xp[plain::kNin + q] = s[q];
        // to_slots' order: pass by pass, statistic by statistic
        for (int l = 0; l < hoist::kLevels; ++l)
            for (int k = 0; k < hoist::kNstat; ++k)
                if (hoist::cgr_stat_level(k) == l) hoist::cgr_derive(k, s);
        for (int q = 0; q < hoist::kNslot; ++q) xh[hoist::kNin + q] = s[q];
        float p = plain::cgr_epi(xp), h = hoist::cgr_epi(xh);
        if (!agree(p, h, &worst) && bad++ < 5)
            std::printf("epilogue differs: plain %.9g, rewritten %.9g (trial %d)\n", p, h, trial);
        for (int k = 0; k < plain::kNstat; ++k) {
            if (plain::cgr_stat_level(k) == 0)
                continue;
            float pp = plain::cgr_pro(k, xp), ph = hoist::cgr_pro(k, xh);
            if (!agree(pp, ph, &worst) && bad++ < 5)
                std::printf("prologue %d differs: plain %.9g, rewritten %.9g (trial %d)\n", k, pp, ph, trial);
        }
    }
    // broadcast offsets: 32-bit where they fit (rewritten) against 64-bit (plain), at
    // random points of the (outer, r, inner) view and at its far corner
    std::uniform_int_distribution<int64_t> po(0, plain::kO - 1), pr(0, plain::kR - 1), pn(0, plain::kI - 1);
    for (int trial = 0; trial <= 20000; ++trial) {
        bool corner = trial == 20000;
        int64_t o = corner ? plain::kO - 1 : po(rng), r = corner ? plain::kR - 1 : pr(rng),
                n = corner ? plain::kI - 1 : pn(rng);
        for (int i = 0; i < plain::kNin; ++i) {
            // cgr_run: the offset is the same from the start of r's run to r
            const int64_t r0 = r - r % hoist::cgr_run(i);
            if (hoist::cgr_off(i, o, r0, n) != hoist::cgr_off(i, o, r, n) && bad++ < 5)
                std::printf("input %d: offset at r %lld differs from its run's start %lld (run %lld)\n", i,
                            (long long)r, (long long)r0, (long long)hoist::cgr_run(i));
            if (plain::cgr_off(i, o, r, n) != hoist::cgr_off(i, o, r, n) && bad++ < 5)
                std::printf("offset of input %d at (%lld, %lld, %lld) differs: %lld against %lld\n", i, (long long)o,
                            (long long)r, (long long)n, (long long)hoist::cgr_off(i, o, r, n),
                            (long long)plain::cgr_off(i, o, r, n));
        }
    }
    std::printf("%d derived slot(s), largest relative difference %.3g over 20000 points, offsets agree%s\n", derived,
                worst, bad ? ": MISMATCH" : "");
    return bad ? 1 : 0;
}
