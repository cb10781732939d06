"""Ground truth for the Python code evaluation (bench/eval-code.ts): public API of every module of a
corpus library as Python defines it (__all__ if set, else the non-underscore names the module binds,
read by importing it), and each function's first docstring sentence for search. Prints JSON."""
import ast, importlib, json, os, sys, pkgutil

root, src = sys.argv[1], os.path.normpath(sys.argv[2])
sys.path.insert(0, src)
out = {"modules": {}, "functions": []}
for dirpath, dirnames, files in os.walk(os.path.join(src)):
    dirnames[:] = [d for d in dirnames if d not in ("tests", "__pycache__") and not d.startswith(".")]
    for f in files:
        if not f.endswith(".py"):
            continue
        path = os.path.join(dirpath, f)
        rel = os.path.relpath(path, src)
        parts = rel[:-3].split(os.sep)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts or any(not p.isidentifier() for p in parts):
            continue
        name = ".".join(parts)
        try:
            mod = importlib.import_module(name)
        except Exception as e:  # noqa: BLE001
            continue
        api = list(getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")])
        out["modules"][os.path.relpath(path, root)] = sorted(set(api))
        tree = ast.parse(open(path, encoding="utf8").read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    first = " ".join(doc.split("\n\n")[0].split())
                    out["functions"].append({"file": os.path.relpath(path, root), "name": node.name, "line": node.lineno, "query": first[:200], "doctest": ">>>" in doc})
print(json.dumps(out))
