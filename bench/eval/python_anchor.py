"""The anchor for Python completion (docs/agents.md, "Python completion"): positions sampled from a
corpus of Python projects and jedi's completions at each, on the same buffer agency is asked with.

A position is an identifier of the original source in one of three categories:
  self_member  `self.<name>`, nothing typed after the dot;
  member       `<expr>.<name>` for any other receiver, nothing typed after the dot;
  identifier   a plain name in an expression, its first character typed.
The buffer is the source cut at the cursor (the name removed). Definitions (def/class names, import
lines, keyword arguments, a name not seen before the cursor) are not positions: nothing can complete
a name that does not exist yet.

Run with the system interpreter that has jedi (Debian python3-jedi):
  /usr/bin/python3 bench/eval/python_anchor.py CORPUS_DIR PER_FILE SEED > positions.json
Prints one JSON object: {"jedi": version, "positions": [...]}, offsets in UTF-16 code units.
ANCHOR_SKIP_JEDI=1: the positions alone, jedi not asked (training the ranking needs no anchor).
"""

import io
import json
import keyword
import os
import random
import sys
import time
import tokenize

import jedi

CATEGORIES = ("self_member", "member", "identifier")
SKIP_AFTER = {"def", "class", "import", "as", "from", "global", "nonlocal"}
TOP = 50


def utf16_len(s):
    return len(s.encode("utf-16-le")) // 2


def python_files(project):
    out = []
    for dirpath, dirnames, filenames in os.walk(project):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in ("node_modules", "build", "dist"))
        for f in sorted(filenames):
            if f.endswith(".py"):
                out.append(os.path.join(dirpath, f))
    return out


def candidates(text):
    """Every position of the three categories in one file, as (category, name, start offset in code points)."""
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    code = [t for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT)]
    seen = set()
    # Names known as attributes before this point: used after a `.`, or defined by `def`/`class`.
    attrs = set()
    out = []
    depth = 0
    line_first = {}
    for i, tok in enumerate(code):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth = max(0, depth - 1)
        if tok.start[0] not in line_first:
            line_first[tok.start[0]] = tok
        if tok.type != tokenize.NAME or keyword.iskeyword(tok.string):
            continue
        name = tok.string
        start = line_starts[tok.start[0] - 1] + tok.start[1]
        prev = code[i - 1] if i > 0 else None
        nxt = code[i + 1] if i + 1 < len(code) else None
        first = line_first.get(tok.start[0])
        in_import = first is not None and first.string in ("import", "from")
        known = name in seen
        seen.add(name)
        after_dot = prev is not None and prev.type == tokenize.OP and prev.string == "."
        known_attr = name in attrs
        if after_dot or (prev is not None and prev.string in ("def", "class")):
            attrs.add(name)
        if in_import or (prev is not None and prev.string in SKIP_AFTER) or name.startswith("__") and name.endswith("__"):
            continue
        assigned = nxt is not None and nxt.type == tokenize.OP and nxt.string in ("=", ":") and depth == 0
        if prev is not None and prev.type == tokenize.OP and prev.string == ".":
            before = code[i - 2] if i >= 2 else None
            # `self.x = …` the first time: the attribute is being defined here.
            if assigned and not known_attr:
                continue
            if before is not None and before.type == tokenize.NUMBER:
                continue
            cat = "self_member" if before is not None and before.string == "self" and (i < 3 or code[i - 3].string != ".") else "member"
            out.append((cat, name, start))
        else:
            kwarg = nxt is not None and nxt.type == tokenize.OP and nxt.string == "=" and depth > 0
            if not known or kwarg or len(name) < 2 or assigned:
                continue
            out.append(("identifier", name, start))
    return out


def ask_jedi(buffer, path, project, line, col):
    try:
        return [c.name for c in jedi.Script(code=buffer, path=path, project=project).complete(line, col)]
    except Exception as err:  # jedi's own failure counts as a miss, and is shown
        sys.stderr.write(f"jedi failed at {path}:{line}: {err}\n")
        return []


def main():
    corpus, per_file, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    skip_jedi = os.environ.get("ANCHOR_SKIP_JEDI") == "1"
    rand = random.Random(seed)
    positions = []
    for project in sorted(os.listdir(corpus)):
        root = os.path.join(corpus, project)
        if not os.path.isdir(root):
            continue
        jproject = jedi.Project(root)
        for path in python_files(root):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            found = candidates(text)
            for cat in CATEGORIES:
                mine = [c for c in found if c[0] == cat]
                rand.shuffle(mine)
                for _, name, start in sorted(mine[:per_file], key=lambda c: c[2]):
                    prefix = name[0] if cat == "identifier" else ""
                    buffer = text[:start] + prefix
                    line = buffer.count("\n") + 1
                    col = len(buffer) - (buffer.rfind("\n") + 1)
                    t0 = time.perf_counter()
                    got = [] if skip_jedi else ask_jedi(buffer, path, jproject, line, col)
                    ms = (time.perf_counter() - t0) * 1000
                    positions.append(
                        {
                            "project": project,
                            "file": os.path.relpath(path, root),
                            "category": cat,
                            "name": name,
                            "prefix": prefix,
                            "start": utf16_len(text[:start]),
                            "line": line - 1,
                            "jedi": got[:TOP],
                            "jedi_ms": round(ms, 2),
                        }
                    )
    json.dump({"jedi": jedi.__version__, "seed": seed, "per_file": per_file, "positions": positions}, sys.stdout)


if __name__ == "__main__":
    main()
