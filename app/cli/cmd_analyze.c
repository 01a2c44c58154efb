/* tcnla analyze formats: [Ootomo & Yokota 2023] Table 1 and Fig. 2, computed for any
 * floating-point format eXmY (app/analysis/format_analysis.c). */
#include "cli.h"
#include "analysis/exmy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FORMATS 32
#define MAX_SWEEP_X 16
#define MAX_DRAWS 1000000000LL /* --samples times the formats: about 100 s */

static void usage(FILE *f) {
    fprintf(f,
        "usage: tcnla analyze formats [--format F]... [--samples N] [--seed N] [--json|--csv]\n"
        "       tcnla analyze formats --variance-sweep [--x X]... [--ymax N] [--json]\n\n"
        "Computes Table 1 (section 3.2) of [Ootomo & Yokota 2023] for floating-point formats\n"
        "eXmY: a g ~ N(0,1) value rounded to the format with RN (ties to even). For each format:\n"
        "max, min normal, min subnormal; p_of, the overflow probability; p_not_normalized,\n"
        "the probability of a subnormal or zero; p_uf, the underflow probability; the\n"
        "number of values with |v| < 1, 2, 4 (Table 1's N^sigma, N^2sigma, N^4sigma); the\n"
        "variance alpha_Y = E[RN(g)^2]. Each is computed from the IEEE definitions; where\n"
        "the paper's printed formula differs, its value is shown too and a footnote says\n"
        "why. Formats are IEEE-style (bias 2^(X-1)-1, subnormals, top exponent for\n"
        "Inf/NaN) except e4m3, which is OCP FP8 E4M3 (no Inf, S.1111.111 = NaN, max 448).\n\n"
        "options (defaults in brackets):\n"
        "  --format F        eXmY with X exponent bits in 2..11 and Y fraction bits in\n"
        "                    0..52; e4m3 (OCP FP8), e4m3ieee (IEEE-style, max 240); aliases\n"
        "                    fp16, bf16, tf32, fp32, fp64. Repeatable.\n"
        "                    [e4m3 e5m2 e5m10 e8m7 e8m10 e8m23]\n"
        "  --samples N       Monte-Carlo check: N draws of N(0,1) in double (Box-Muller on\n"
        "                    53-bit uniforms from the project's Philox generator), rounded\n"
        "                    with RN; prints the empirical variance, alpha_Y - 1 estimated\n"
        "                    from the paired differences RN(g)^2 - g^2, and the empirical\n"
        "                    not-normalized, zero and overflow fractions next to the computed\n"
        "                    ones. N in 1..10^9, and N times the number of formats at most\n"
        "                    10^9 (about 100 s of work) [0: off]\n"
        "  --seed N          seed of the Monte-Carlo draws [1]\n"
        "  --variance-sweep  Fig. 2: alpha_Y for Y = 1..ymax as CSV with the columns\n"
        "                    x,y,variance,one_minus_variance,one_minus_variance_paper_formula\n"
        "                    (the last: the paper's printed formula, see its footnote)\n"
        "  --x X             exponent bits of the sweep, 2..11, repeatable [8 5]\n"
        "  --ymax N          last Y of the sweep, 1..52 [23]\n"
        "  --json            one JSON object on stdout\n"
        "  --csv             CSV: a header line, then one line per format\n\n"
        "The variance sums v^2 P(RN(g) = v) over the finite values v; draws that overflow\n"
        "contribute 0 (their probability is p_of). Probabilities below 1e-300 print as\n"
        "<1e-300 in the table; --json and --csv also give log10 of the overflow ones.\n"
        "Exit status: 0 ok, 2 usage error.\n");
}

/* ------------------------------------------------------------ formatting */

static void fmt_p(char *b, size_t n, long double p) {
    if (p < 1e-300L) snprintf(b, n, "<1e-300"); /* 0: below long double's range */
    else snprintf(b, n, "%.3Le", p);
}

/* 2^k for an exact power of two */
static void fmt_pow2(char *b, size_t n, long double v) {
    int e;
    long double m = frexpl(v, &e);
    if (m == 0.5L) snprintf(b, n, "2^%d", e - 1);
    else snprintf(b, n, "%.8Lg", v);
}

/* JSON number from long double (null when not finite) */
static void jnum(long double v) {
    if (isfinite(v)) printf("%.10Le", v);
    else printf("null");
}

/* -------------------------------------------------------------- table */

#define NROWS 40
typedef struct {
    char label[48];
    char cell[MAX_FORMATS][48];
} row_t;

static int cmd_table(const tn_exmy *fm, int nf, int64_t samples, uint64_t seed, int json,
                     int csv) {
    tn_format_stats *st = calloc((size_t)nf, sizeof *st);
    tn_format_mc *mc = calloc((size_t)nf, sizeof *mc);
    if (!st || !mc) {
        fprintf(stderr, "tcnla analyze: out of memory\n");
        free(st);
        free(mc);
        return EXIT_BADINPUT;
    }
    for (int i = 0; i < nf; i++) {
        tn_format_analyze(&fm[i], &st[i], 0);
        if (samples > 0) tn_format_montecarlo(&fm[i], samples, seed, &mc[i]);
    }

    if (json) {
        printf("{\"command\":\"analyze\",\"subcommand\":\"formats\",\"rounding\":\"RN\","
               "\"variance_definition\":\"sum over finite v of v^2 P(RN(g)=v); overflow "
               "contributes 0\",\"formats\":[");
        for (int i = 0; i < nf; i++) {
            const tn_format_stats *s = &st[i];
            char name[32];
            tn_exmy_name(&fm[i], name, sizeof name);
            printf("%s{\"format\":\"%s\",\"label\":\"%s\",\"ebits\":%d,\"mbits\":%d,"
                   "\"ocp_e4m3\":%s,\"bias\":%d,\"emin\":%d,\"emax\":%d,",
                   i ? "," : "", name, tn_exmy_label(&fm[i]), fm[i].ebits, fm[i].mbits,
                   fm[i].ocp_e4m3 ? "true" : "false", s->bias, s->emin, s->emax);
            printf("\"max\":%.17g,\"max_paper_eq15\":%.17g,\"min_normal\":%.17g,"
                   "\"min_subnormal\":%.17g,\"min_subnormal_paper\":",
                   s->max, s->max_paper, s->min_normal, s->min_sub);
            jnum(s->min_sub_paper);
            printf(",\"overflow_threshold\":");
            jnum(s->of_threshold);
            printf(",\"p_of\":");
            jnum(s->p_of);
            printf(",\"p_of_log10\":");
            jnum(s->p_of_log10);
            printf(",\"p_of_eq16\":");
            jnum(s->p_of_eq16);
            printf(",\"p_of_eq16_log10\":");
            jnum(s->p_of_eq16_log10);
            printf(",\"p_not_normalized\":");
            jnum(s->p_nn);
            printf(",\"p_not_normalized_rn\":");
            jnum(s->p_nn_rn);
            printf(",\"p_not_normalized_one_sided\":");
            jnum(s->p_nn / 2);
            printf(",\"p_uf\":");
            jnum(s->p_uf);
            printf(",\"p_below_min_subnormal\":");
            jnum(s->p_below_min_sub);
            const char *nk[3] = {"n_normal_and_zero", "n_all", "n_eq18"};
            const uint64_t *nv[3] = {s->n_normal, s->n_all, s->n_eq18};
            for (int k = 0; k < 3; k++)
                printf(",\"%s\":[%llu,%llu,%llu]", nk[k], (unsigned long long)nv[k][0],
                       (unsigned long long)nv[k][1], (unsigned long long)nv[k][2]);
            printf(",\"n_enumerated\":%s", s->n_enumerated ? (s->n_enum_ok ? "true" : "false")
                                                           : "null");
            printf(",\"variance\":%.18Lf,\"one_minus_variance\":", s->alpha);
            jnum(-s->alpha_minus_1);
            printf(",\"one_minus_variance_paper_formula\":");
            jnum(-s->alpha_paper_minus_1);
            if (samples > 0) { /* values that are not finite print as null */
                cli_json j;
                printf(",\"montecarlo\":");
                cli_jbegin(&j, stdout);
                cli_jint(&j, "samples", (long long)mc[i].n);
                cli_jint(&j, "seed", (long long)seed);
                cli_jnum(&j, "variance", "%.10e", mc[i].var);
                cli_jnum(&j, "variance_se", "%.3e", mc[i].var_se);
                cli_jnum(&j, "variance_minus_1_paired", "%.6e", mc[i].delta);
                cli_jnum(&j, "variance_minus_1_paired_se", "%.3e", mc[i].delta_se);
                cli_jnum(&j, "frac_not_normalized", "%.6e", mc[i].frac_nn);
                cli_jnum(&j, "frac_zero", "%.6e", mc[i].frac_zero);
                cli_jnum(&j, "frac_overflow", "%.6e", mc[i].frac_of);
                fputc('}', stdout);
            }
            printf("}");
        }
        printf("]}\n");
    } else if (csv) {
        printf("format,ebits,mbits,ocp_e4m3,bias,emin,emax,max,min_normal,min_subnormal,"
               "overflow_threshold,p_of,p_of_log10,p_of_eq16,p_of_eq16_log10,p_not_normalized,"
               "p_not_normalized_rn,p_uf,p_below_min_subnormal,n_normal_s0,n_normal_s1,"
               "n_normal_s2,n_all_s0,n_all_s1,n_all_s2,n_eq18_s0,n_eq18_s1,n_eq18_s2,"
               "variance,one_minus_variance,one_minus_variance_paper_formula%s\n",
               samples > 0 ? ",mc_samples,mc_variance,mc_variance_se,mc_variance_minus_1_paired,"
                             "mc_variance_minus_1_paired_se,mc_frac_not_normalized,mc_frac_zero,"
                             "mc_frac_overflow"
                           : "");
        for (int i = 0; i < nf; i++) {
            const tn_format_stats *s = &st[i];
            char name[32];
            tn_exmy_name(&fm[i], name, sizeof name);
            printf("%s,%d,%d,%d,%d,%d,%d,%.17g,%.17g,%.17g,%.17Lg,%.10Le,%.10Lg,%.10Le,%.10Lg,"
                   "%.10Le,%.10Le,%.10Le,%.10Le",
                   name, fm[i].ebits, fm[i].mbits, fm[i].ocp_e4m3, s->bias, s->emin, s->emax,
                   s->max, s->min_normal, s->min_sub, s->of_threshold, s->p_of, s->p_of_log10,
                   s->p_of_eq16, s->p_of_eq16_log10, s->p_nn, s->p_nn_rn, s->p_uf,
                   s->p_below_min_sub);
            const uint64_t *nv[3] = {s->n_normal, s->n_all, s->n_eq18};
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < 3; j++) printf(",%llu", (unsigned long long)nv[k][j]);
            printf(",%.18Lf,%.10Le,%.10Le", s->alpha, -s->alpha_minus_1, -s->alpha_paper_minus_1);
            if (samples > 0)
                printf(",%lld,%.10e,%.3e,%.6e,%.3e,%.6e,%.6e,%.6e", (long long)mc[i].n,
                       mc[i].var, mc[i].var_se, mc[i].delta, mc[i].delta_se, mc[i].frac_nn,
                       mc[i].frac_zero, mc[i].frac_of);
            printf("\n");
        }
    } else {
        static row_t rows[NROWS];
        int nr = 0;
#define ROW(lbl) (snprintf(rows[nr].label, sizeof rows[nr].label, "%s", lbl), &rows[nr++])
#define CELL(r, ...) snprintf((r)->cell[i], sizeof(r)->cell[i], __VA_ARGS__)
        row_t *r_name = ROW("format"), *r_label = ROW(""), *r_bias = ROW("bias / emin / emax");
        row_t *r_max = ROW("max"), *r_maxp = ROW("  eqs. (14)-(15) as printed [a]");
        row_t *r_mn = ROW("min normal"), *r_ms = ROW("min subnormal [b]"),
              *r_msp = ROW("  as printed [b]");
        row_t *r_of = ROW("p_of: |g| >= max + ulp/2 [c]"), *r_of16 = ROW("  eq. (16): |g| > max");
        row_t *r_nn = ROW("p_not_normalized (paper) [d]"),
              *r_nn1 = ROW("  one-sided (= Table 1) [d]"),
              *r_nnrn = ROW("  RN: rounds to subnormal or 0");
        row_t *r_uf = ROW("p_uf: RN rounds to 0 [e]"), *r_ufb = ROW("  P(|g| < min subnormal)");
        row_t *r_n[3][3];
        const char *nl[3][3] = {
            {"N |v|<1 (1 sigma): all [f]", "  normal + zero [f]", "  eq. (18) [g]"},
            {"N |v|<2 (2 sigma): all", "  normal + zero", "  eq. (18)"},
            {"N |v|<4 (4 sigma): all", "  normal + zero", "  eq. (18)"}};
        for (int s = 0; s < 3; s++)
            for (int k = 0; k < 3; k++) r_n[s][k] = ROW(nl[s][k]);
        row_t *r_enum = ROW("N checked by enumeration");
        row_t *r_var = ROW("variance alpha_Y [h]"), *r_1mv = ROW("1 - alpha_Y"),
              *r_1mvp = ROW("  paper's formula [h]");
        row_t *r_mcv = NULL, *r_mcd = NULL, *r_mcnn = NULL, *r_mcz = NULL, *r_mco = NULL;
        if (samples > 0) {
            r_mcv = ROW("MC: mean RN(g)^2 +- s.e. [i]");
            r_mcd = ROW("MC: alpha_Y - 1 (paired) +- s.e.");
            r_mcnn = ROW("MC: not normalized (RN)");
            r_mcz = ROW("MC: rounded to 0");
            r_mco = ROW("MC: overflowed");
        }
        for (int i = 0; i < nf; i++) {
            const tn_format_stats *s = &st[i];
            char b[32];
            tn_exmy_name(&fm[i], b, sizeof b);
            CELL(r_name, "%s", b);
            CELL(r_label, "%s", tn_exmy_label(&fm[i]));
            CELL(r_bias, "%d / %d / %d", s->bias, s->emin, s->emax);
            CELL(r_max, "%.8g", s->max);
            CELL(r_maxp, "%.8g", s->max_paper);
            fmt_pow2(b, sizeof b, s->min_normal);
            CELL(r_mn, "%s", b);
            fmt_pow2(b, sizeof b, s->min_sub);
            CELL(r_ms, "%s%s", b, fm[i].mbits == 0 ? " (none)" : "");
            fmt_pow2(b, sizeof b, s->min_sub_paper);
            CELL(r_msp, "%s", b);
            fmt_p(b, sizeof b, s->p_of);
            CELL(r_of, "%s", b);
            fmt_p(b, sizeof b, s->p_of_eq16);
            CELL(r_of16, "%s", b);
            fmt_p(b, sizeof b, s->p_nn);
            CELL(r_nn, "%s", b);
            fmt_p(b, sizeof b, s->p_nn / 2);
            CELL(r_nn1, "%s", b);
            fmt_p(b, sizeof b, s->p_nn_rn);
            CELL(r_nnrn, "%s", b);
            fmt_p(b, sizeof b, s->p_uf);
            CELL(r_uf, "%s", b);
            fmt_p(b, sizeof b, s->p_below_min_sub);
            CELL(r_ufb, "%s", b);
            for (int k = 0; k < 3; k++) {
                CELL(r_n[k][0], "%llu", (unsigned long long)s->n_all[k]);
                CELL(r_n[k][1], "%llu", (unsigned long long)s->n_normal[k]);
                CELL(r_n[k][2], "%llu", (unsigned long long)s->n_eq18[k]);
            }
            CELL(r_enum, "%s", !s->n_enumerated ? "no (> 2^20)" : s->n_enum_ok ? "yes" : "MISMATCH");
            CELL(r_var, "%.17Lf", s->alpha);
            CELL(r_1mv, "%.4Le", -s->alpha_minus_1);
            CELL(r_1mvp, "%.4Le", -s->alpha_paper_minus_1);
            if (samples > 0) {
                CELL(r_mcv, "%.6f+-%.1e", mc[i].var, mc[i].var_se);
                CELL(r_mcd, "%.3e+-%.1e", mc[i].delta, mc[i].delta_se);
                CELL(r_mcnn, "%.3e", mc[i].frac_nn);
                CELL(r_mcz, "%.3e", mc[i].frac_zero);
                CELL(r_mco, "%.3e", mc[i].frac_of);
            }
        }
#undef ROW
#undef CELL
        int w[MAX_FORMATS], lw = 0;
        for (int k = 0; k < nr; k++) lw = (int)strlen(rows[k].label) > lw ? (int)strlen(rows[k].label) : lw;
        for (int i = 0; i < nf; i++) {
            w[i] = 0;
            for (int k = 0; k < nr; k++)
                if ((int)strlen(rows[k].cell[i]) > w[i]) w[i] = (int)strlen(rows[k].cell[i]);
        }
        printf("tcnla analyze formats: g ~ N(0,1) rounded to eXmY with RN (ties to even); seed "
               "000 Table 1\n\n");
        for (int k = 0; k < nr; k++) {
            printf("%-*s", lw, rows[k].label);
            for (int i = 0; i < nf; i++) printf("  %*s", w[i], rows[k].cell[i]);
            printf("\n");
        }
        printf(
            "\n"
            "[a] eqs. (14)-(15) print 2^bias (1 - 2^-(Y+1)), which is max/2. The largest finite\n"
            "    value has exponent field 2^X - 2, unbiased 2^X - 2 - bias = bias, and significand\n"
            "    2 - 2^-Y, so max = 2^(bias+1) (1 - 2^-(Y+1)) (FP16: 65504, not 32752). OCP e4m3\n"
            "    uses the top exponent for finite values: max = 2^8 * 1.75 = 448.\n"
            "[b] the smallest subnormal is 2^(1-bias-Y) (2^-24 for FP16); the paper's\n"
            "    min^denormalized = 2^-bias 2^-Y is half of it. With Y = 0 there are no subnormals\n"
            "    and the row gives the smallest positive value (the smallest normal).\n"
            "[c] under RN a value overflows (Inf; NaN for OCP e4m3) only from max + ulp(max)/2 on\n"
            "    (the tie goes to the even neighbour 2^(emax+1); OCP e4m3: the tie 464 goes to 448,\n"
            "    which is even, so only |g| > 464 overflows). Eq. (16) 2(1 - Phi(max)) = P(|g| >\n"
            "    max) is shown below it; computed as erfc(x/sqrt 2) in long double.\n"
            "[d] the paper's p_not_normalized = 2(Phi(min normal) - 1/2) = P(|g| < min normal).\n"
            "    Table 1's values (6e-3 for e4m3, 2e-5 for e5m2 and FP16) are half of that: the\n"
            "    one-sided Phi(min normal) - 1/2. Under RN a value becomes subnormal or 0 iff\n"
            "    |g| < min normal - min subnormal/2.\n"
            "[e] under RN, |g| <= min subnormal/2 rounds to 0 (the tie goes to the even 0). The\n"
            "    paper's p_uf = 2(Phi(min^denormalized) - 1/2) with its printed min^denormalized\n"
            "    [b] is exactly this, and Table 1's p_uf (8e-4, 6e-6, 2e-8) agrees; the paper's\n"
            "    formula with the true smallest subnormal would give P(|g| < min subnormal).\n"
            "[f] Table 1's sigma, 2sigma, 4sigma columns are s = 0, 1, 2 (|v| < 2^s). Its numbers\n"
            "    are all finite values, subnormals included, zero once: 2(s + bias) 2^Y - 1. The\n"
            "    normal values of eq. (17) plus zero are 2(s + bias - 1) 2^Y + 1. Both closed forms\n"
            "    are checked by enumerating every code for formats of at most 2^20 codes.\n"
            "[g] eq. (18) 2(s + bias + 1) 2^Y + 1 matches neither eq. (17) nor Table 1: it exceeds\n"
            "    eq. (17)'s count (normal + zero) by 4 * 2^Y, two binades of each sign, and is that\n"
            "    count for |v| < 2^(s+2).\n"
            "[h] alpha_Y = sum of v^2 P(RN(g) = v) over the finite v (the mean is 0), the rounding\n"
            "    cell of v running between the midpoints to its neighbours; draws that overflow\n"
            "    contribute 0 (their probability is p_of). alpha_Y < 1, and 1 - alpha_Y falls as\n"
            "    4^-Y (0.0464 * 4^-Y for X = 8; --variance-sweep gives Fig. 2's data). The paper's\n"
            "    formula takes +-exp_of(v) u_Y = +-ulp/2 around every v; below the lowest value 2^e\n"
            "    of a binade the neighbour is only ulp/2 away, so it counts the mass of\n"
            "    [2^e - ulp/2, 2^e - ulp/4] twice: an error of order 2^-Y, larger than 1 - alpha_Y.\n");
        if (samples > 0)
            printf(
                "[i] %lld draws (seed %llu) of N(0,1) in double: Box-Muller on 53-bit uniforms from\n"
                "    tcnla_philox4x32, not tcnla_rand_normal, whose draws are already rounded to FP32\n"
                "    (e8m23), which would bias the check for Y >= 23 and in FP32's subnormal range.\n"
                "    alpha_Y - 1 (paired) is the mean of RN(g)^2 - g^2, with a far smaller error than\n"
                "    the mean of RN(g)^2 (s.e. = standard error); compare it with -(1 - alpha_Y).\n"
                "    Box-Muller on 53-bit uniforms never draws |g| > 8.6.\n",
                (long long)samples, (unsigned long long)seed);
    }
    free(st);
    free(mc);
    return EXIT_OK;
}

/* -------------------------------------------------------------- sweep */

static int cmd_sweep(const int *xs, int nx, int ymax, int json) {
    if (json) printf("{\"command\":\"analyze\",\"subcommand\":\"formats\",\"variance_sweep\":[");
    else printf("x,y,variance,one_minus_variance,one_minus_variance_paper_formula\n");
    int first = 1;
    for (int i = 0; i < nx; i++)
        for (int y = 1; y <= ymax; y++) {
            tn_exmy f;
            tn_exmy_init(&f, xs[i], y, 0);
            long double d = tn_format_variance_delta(&f, 0);
            long double dp = tn_format_variance_paper_delta(&f, &d);
            if (json) {
                printf("%s{\"x\":%d,\"y\":%d,\"variance\":%.18Lf,\"one_minus_variance\":%.10Le,"
                       "\"one_minus_variance_paper_formula\":%.10Le}",
                       first ? "" : ",", xs[i], y, 1 + d, -d, -dp);
                first = 0;
            } else {
                printf("%d,%d,%.18Lf,%.10Le,%.10Le\n", xs[i], y, 1 + d, -d, -dp);
            }
        }
    if (json) printf("]}\n");
    return EXIT_OK;
}

/* ---------------------------------------------------------------- main */

int cmd_analyze(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "formats")) {
        fprintf(stderr, "tcnla analyze: unknown analysis '%s' (known: formats)\n", argv[1]);
        usage(stderr);
        return EXIT_USAGE;
    }
    cli_common c = {TCNLA_BACKEND_AUTO, 1, 0};
    tn_exmy fm[MAX_FORMATS];
    int nf = 0, xs[MAX_SWEEP_X], nx = 0, sweep = 0, csv = 0, have_ymax = 0;
    int64_t samples = 0, ymax = 23;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        int r = cli_common_opt(&c, argc, argv, &i);
        if (r < 0) return EXIT_USAGE;
        if (r > 0) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return EXIT_OK;
        } else if (!strcmp(a, "--csv")) csv = 1;
        else if (!strcmp(a, "--variance-sweep")) sweep = 1;
        else if (strcmp(a, "--format") && strcmp(a, "--samples") && strcmp(a, "--x") &&
                 strcmp(a, "--ymax")) {
            fprintf(stderr, "tcnla analyze formats: unknown option '%s' (see --help)\n", a);
            return EXIT_USAGE;
        } else if (!(v = cli_value(argc, argv, &i))) return EXIT_USAGE;
        else if (!strcmp(a, "--format")) {
            if (nf == MAX_FORMATS) {
                fprintf(stderr, "tcnla analyze: at most %d --format options\n", MAX_FORMATS);
                return EXIT_USAGE;
            }
            if (tn_exmy_parse(v, &fm[nf], cli_errbuf, sizeof cli_errbuf)) {
                fprintf(stderr, "tcnla analyze: --format %s\n", cli_errbuf);
                return EXIT_USAGE;
            }
            nf++;
        } else if (!strcmp(a, "--samples")) {
            if (cli_int(a, v, 0, MAX_DRAWS, &samples)) return EXIT_USAGE;
        } else if (!strcmp(a, "--x")) {
            int64_t x;
            if (cli_int(a, v, TN_EXMY_MIN_EBITS, TN_EXMY_MAX_EBITS, &x)) return EXIT_USAGE;
            if (nx == MAX_SWEEP_X) {
                fprintf(stderr, "tcnla analyze: at most %d --x options\n", MAX_SWEEP_X);
                return EXIT_USAGE;
            }
            xs[nx++] = (int)x;
        } else if (!strcmp(a, "--ymax")) {
            if (cli_int(a, v, 1, TN_EXMY_MAX_MBITS, &ymax)) return EXIT_USAGE;
            have_ymax = 1;
        } else {
            fprintf(stderr, "tcnla analyze formats: unknown option '%s' (see --help)\n", a);
            return EXIT_USAGE;
        }
    }
    if (csv && c.json) {
        fprintf(stderr, "tcnla analyze formats: --csv and --json exclude each other\n");
        return EXIT_USAGE;
    }
    if (sweep) {
        if (nf || samples) {
            fprintf(stderr, "tcnla analyze formats: --variance-sweep takes --x and --ymax, not "
                            "--format or --samples\n");
            return EXIT_USAGE;
        }
        if (!nx) xs[nx++] = 8, xs[nx++] = 5;
        return cmd_sweep(xs, nx, (int)ymax, c.json);
    }
    if (nx || have_ymax) {
        fprintf(stderr, "tcnla analyze formats: --x and --ymax go with --variance-sweep\n");
        return EXIT_USAGE;
    }
    if (!nf) {
        const char *def[] = {"e4m3", "e5m2", "e5m10", "e8m7", "e8m10", "e8m23"};
        for (int i = 0; i < 6; i++) tn_exmy_parse(def[i], &fm[nf++], NULL, 0);
    }
    if (samples > MAX_DRAWS / nf) {
        fprintf(stderr, "tcnla analyze formats: --samples %lld for %d formats is %lld draws, more "
                "than %lld (about 100 s)\n", (long long)samples, nf, (long long)samples * nf,
                MAX_DRAWS);
        return EXIT_USAGE;
    }
    return cmd_table(fm, nf, samples, c.seed, c.json, csv);
}
