#!/usr/bin/env bash
# The folder dependencies of the library (src/), from its #include "..." lines.
# Lists every quoted include as
#   including-file: included-header  (including-folder -> included-folder)
# where a folder is a top-level folder of src/ (core, numerics, random, gemm,
# linalg, randnla, dist, backend), or include (the public header), app or tests
# (the white-box tests' harness and app headers; the library itself is
# compiled without -Iapp, so its own files cannot reach app/). Then checks:
#   - core/ includes nothing of src/ but core/ (it declares the internal
#     interface every folder shares: core/internal.h, backend.h, call.h);
#   - no cycle between the other top-level folders of src/ (a folder
#     reaching itself through includes of other folders).
# Prints the offending pairs and exits 1 when a check fails, 0 otherwise.
#   scripts/check_layers.sh [-q]     (-q: no listing, only the verdict)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
quiet=0
[ "${1:-}" = "-q" ] && quiet=1

# one line per include: file folder header target-folder
edges=$(
    find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort |
    while IFS= read -r f; do
        from=${f#src/}
        from=${from%%/*}
        sed -n -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]+)".*/\1/p' "$f" |
        while IFS= read -r x; do
            if [ -e "src/$x" ] && [[ $x == */* ]]; then to=${x%%/*}
            elif [ -e "$(dirname "$f")/$x" ]; then to=$from
            elif [ -e "include/$x" ]; then to=include
            elif [ -e "app/$x" ]; then to=app
            elif [ -e "tests/$x" ]; then to=tests
            else to=unresolved
            fi
            printf '%s %s %s %s\n' "$f" "$from" "$x" "$to"
        done
    done
)

[ $quiet -eq 1 ] || awk '{printf "%s: %s  (%s -> %s)\n", $1, $3, $2, $4}' <<<"$edges"

awk -v quiet=$quiet '
    BEGIN {
        n = split("core numerics random gemm linalg randnla dist backend", name, " ")
        for (i = 1; i <= n; i++) idx[name[i]] = i
    }
    {
        file = $1; a = $2; hdr = $3; b = $4
        if (b == "unresolved") { bad[++nbad] = "unresolved include: " file ": " hdr; next }
        if (a == "core" && b != "core" && b != "include")
            bad[++nbad] = "core includes " b ": " file ": " hdr
        # the cycles looked for avoid core/ (its own rule above covers it)
        if ((a in idx) && (b in idx) && a != b && a != "core" && b != "core") {
            r[idx[a], idx[b]] = 1
            if (!((a, b) in via)) via[a, b] = file ": " hdr
        }
    }
    END {
        for (k = 1; k <= n; k++)
            for (i = 1; i <= n; i++)
                for (j = 1; j <= n; j++)
                    if (r[i, k] && r[k, j]) r[i, j] = 1
        for (i = 1; i <= n; i++)
            for (j = 1; j <= n; j++)
                if (i != j && ((name[i], name[j]) in via) && r[j, i])
                    bad[++nbad] = "cycle: " name[i] " -> " name[j] " (" via[name[i], name[j]] \
                                  ") and " name[j] " reaches " name[i]
        if (!quiet) {
            printf "folder edges (besides core/):"
            for (i = 1; i <= n; i++)
                for (j = 1; j <= n; j++)
                    if ((name[i], name[j]) in via) printf " %s->%s", name[i], name[j]
            printf "\n"
        }
        if (nbad) {
            for (i = 1; i <= nbad; i++) print "check_layers: " bad[i]
            exit 1
        }
        print "check_layers: no cycle between the folders of src/; core/ includes only core/"
    }
' <<<"$edges"
