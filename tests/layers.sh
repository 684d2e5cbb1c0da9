#!/bin/sh
# layers.sh - the source tree's include rule: includes run one way, down
# the data path, and no files include each other in a circle.
#
# Usage: sh tests/layers.sh [TOP]     (TOP: the source tree, default .)
#
# Each folder of src/ says in its README.md what it may include:
#
#   - May include: base, net        (or "nothing")
#   - Included by: client, cli
#   - Public headers: `api.h`, `reader.h`
#
# A folder may include its own headers, and those of the folders it may
# include and of what they may include in turn (the lines form a graph
# that must have no circle).  "Included by" must name exactly the
# folders whose "May include" names this one, so the READMEs read both
# ways.  Every header of include/ttsbuf/ belongs to one folder (its
# "Public headers"); a header of another folder is included by its
# folder ("base/grow.h"), one of the same folder by its name.
#
# Files are nodes: src/F/N.c with its header N.h is the node src/F/N, a
# public header a node of its own.  An include is an edge from the node
# of the including file to the node of the header; there must be no
# circle of edges (two files that include each other's internals: one of
# them holds the other's job).  For the edges to be the calls, a header
# of src/ declares only what its own .c defines (N.h and N_priv.h: N.c's;
# a header with no .c declares no function: types, macros and static
# inline functions only), and a public header only what its folder
# defines.
#
# Prints one line per finding ("src/base/clock.c:12: includes ...") and
# exits 1 when there is any, 0 when there is none, 2 when it cannot read
# the tree.  sh and awk only: it runs in `make lint` and in the test
# suite's layers group.

top=${1:-.}
cd "$top" 2>/dev/null && [ -d src ] && [ -d include/ttsbuf ] || {
    echo "layers.sh: $top: not a ttsbuf source tree (no src/ or include/ttsbuf/)" >&2
    exit 2
}

for d in src/*/; do
    [ -f "${d}README.md" ] || { echo "${d}: no README.md (what the folder does, what it may include)"; missing=1; }
done
[ -z "${missing:-}" ] || exit 1

# The files read, those that exist (a folder may have no header).
set --
for f in src/*/README.md include/ttsbuf/*.h src/*/*.c src/*/*.h; do
    [ -e "$f" ] && set -- "$@" "$f"
done

exec awk '
function dirof(p) { sub(/\/[^\/]*$/, "", p); sub(/^src\//, "", p); return p }
function stem(p) { sub(/^.*\//, "", p); sub(/\.[ch]$/, "", p); return p }
function words(s, out,    n, i, w, k) {
    gsub(/[`,.]/, " ", s); gsub(/ h /, " ", s)
    n = split(s, w, /[ \t]+/); k = 0
    for (i = 1; i <= n; i++) if (w[i] != "" && w[i] != "nothing") out[++k] = w[i]
    return k
}
function bad(msg) { print msg; nbad++ }
# Whether folder a may include folder b (b below a in the graph, or a itself).
function below(a, b,    x) {
    if (a == b) return 1
    if ((a, b) in memo) return memo[a, b]
    memo[a, b] = 0
    for (x in folders) if ((a, x) in may && below(x, b)) { memo[a, b] = 1; break }
    return memo[a, b]
}
function lay_visit(f,    x) {
    lay[f] = 1
    for (x in folders) if ((f, x) in may) {
        if (lay[x] == 1) bad("src/" f "/README.md: \"May include\" runs in a circle through " x)
        else if (lay[x] == 0) lay_visit(x)
    }
    lay[f] = 2
}
function visit(n,    i, m) {
    color[n] = 1; stack[++depth] = n
    for (i = 1; i <= nout[n]; i++) {
        m = out[n, i]
        if (color[m] == 1) circle(m)
        else if (color[m] == 0) visit(m)
    }
    depth--; color[n] = 2
}
function circle(m,    i, s, k) {
    for (k = depth; k > 0 && stack[k] != m; k--);
    s = ""
    for (i = k; i <= depth; i++) s = s stack[i] " -> "
    s = s m
    if (s in told) return
    told[s] = 1
    bad("circle: " s " (" why[stack[depth], m] ")")
}
function edge(a, b, where) {
    if (a == b || (a, b) in isout) return
    isout[a, b] = 1; out[a, ++nout[a]] = b; why[a, b] = where
    nodes[a] = 1; nodes[b] = 1
}

FNR == 1 { kind = FILENAME ~ /README\.md$/ ? "readme" : FILENAME ~ /^include\// ? "public" : "src" }

kind == "readme" {
    f = dirof(FILENAME); folders[f] = 1
    if (sub(/^- May include:/, "")) {
        hasmay[f] = 1; n = words($0, w)
        for (i = 1; i <= n; i++) { may[f, w[i]] = 1; mayl[f] = mayl[f] (i > 1 ? ", " : "") w[i]; named[w[i]] = FILENAME }
    } else if (sub(/^- Included by:/, "")) {
        hasby[f] = 1; n = words($0, w)
        for (i = 1; i <= n; i++) { by[f, w[i]] = 1; named[w[i]] = FILENAME }
    } else if (sub(/^- Public headers:/, "")) {
        n = words($0, w)
        for (i = 1; i <= n; i++) {
            if (w[i] in owner) bad(FILENAME ": " w[i] ".h is also a public header of " owner[w[i]])
            owner[w[i]] = f; claimed[w[i]] = FILENAME
        }
    }
    next
}

kind == "public" { h = stem(FILENAME); public[h] = 1 }
kind == "src" { files[FILENAME] = 1 }

/^#[ \t]*include[ \t]*"/ {
    t = $0; sub(/^#[ \t]*include[ \t]*"/, "", t); sub(/".*/, "", t)
    ninc++; inc_file[ninc] = FILENAME; inc_line[ninc] = FNR; inc_to[ninc] = t
    next
}

# Functions declared in headers, defined in sources (at the start of a
# line, as the code is formatted; static ones are a file of their own).
/^[a-z_]/ && !/^(static|typedef|extern|struct [a-z_0-9]+ \{|enum|union|_Static_assert)/ &&
    match($0, /tb_[a-z0-9_]+\(/) {
    name = substr($0, RSTART, RLENGTH - 1)
    if (FILENAME ~ /\.h$/) { ndecl++; decl_file[ndecl] = FILENAME; decl_line[ndecl] = FNR; decl_name[ndecl] = name }
    else if ($0 !~ /;[ \t]*$/) defined[name] = FILENAME
}

END {
    if (!("base" in folders)) { print "layers.sh: no src/*/README.md read"; exit 2 }
    for (f in folders) {
        if (!hasmay[f]) bad("src/" f "/README.md: no \"- May include:\" line")
        if (!hasby[f]) bad("src/" f "/README.md: no \"- Included by:\" line")
    }
    for (x in named) if (!(x in folders)) bad(named[x] ": names " x ", which is no folder of src/")
    for (f in folders) if (!lay[f]) lay_visit(f)
    for (f in folders) for (g in folders) {
        if ((g, f) in may && !((f, g) in by)) bad("src/" f "/README.md: \"Included by\" lacks " g " (its README may include " f ")")
        if ((f, g) in by && !((g, f) in may)) bad("src/" f "/README.md: \"Included by\" names " g ", whose README does not include " f)
    }
    for (h in public) if (!(h in owner)) bad("include/ttsbuf/" h ".h: no folder of src/ names it among its public headers")
    for (h in owner) if (!(h in public)) bad(claimed[h] ": names " h ".h, which is not in include/ttsbuf/")

    for (i = 1; i <= ninc; i++) {
        file = inc_file[i]; t = inc_to[i]; at = file ":" inc_line[i]
        if (file ~ /^include\//) { from = owner[stem(file)]; if (from == "") continue }
        else from = dirof(file)
        if (t ~ /^ttsbuf\/[a-z_0-9]+\.h$/) {
            n = stem(t); to = owner[n]
            if (!(n in public)) { bad(at ": includes " t ", which is not in include/ttsbuf/"); continue }
            if (to == "") continue
        } else if (t ~ /^[a-z_0-9]+\/[a-z_0-9]+\.h$/ && file ~ /^src\//) {
            to = t; sub(/\/.*/, "", to); n = stem(t)
            if (!(("src/" t) in files)) { bad(at ": includes " t ", which is not in src/"); continue }
            if (to == from) { bad(at ": includes " t " by its folder: a header of the same folder is included by its name"); continue }
        } else if (t ~ /^[a-z_0-9]+\.h$/ && file ~ /^src\//) {
            to = from; n = stem(t)
            if (!(("src/" from "/" t) in files)) { bad(at ": includes " t ", which is not in src/" from "/ (a header of another folder is included by its folder)"); continue }
        } else {
            bad(at ": includes \"" t "\": a public header is \"ttsbuf/NAME.h\", a header of src/ \"FOLDER/NAME.h\""); continue
        }
        if (!below(from, to)) { bad(at ": includes " t ", a header of " to ", which " from " may not include (its README: " (mayl[from] == "" ? "nothing" : mayl[from]) ")"); continue }
        a = file ~ /^include\// ? "include/ttsbuf/" stem(file) ".h" : "src/" from "/" stem(file)
        edge(a, t ~ /^ttsbuf\// ? "include/" t : "src/" to "/" n, at " includes " t)
    }
    for (n in nodes) if (!color[n]) visit(n)

    for (i = 1; i <= ndecl; i++) {
        file = decl_file[i]; name = decl_name[i]; def = defined[name]; at = file ":" decl_line[i]
        if (def == "") continue   # defined nowhere in src/ (the CLI binary, a test): not ours to place
        if (file ~ /^include\//) {
            f = owner[stem(file)]
            if (f != "" && dirof(def) != f) bad(at ": declares " name ", defined in " def ", outside src/" f "/ (whose public header this is)")
        } else {
            own = file; sub(/(_priv)?\.h$/, ".c", own)
            if (def != own) bad(at ": declares " name ", which " def " defines: a header of src/ declares what its own .c defines (" (own in files ? own : "it has none") ")")
        }
    }
    exit nbad > 0
}
' "$@"
