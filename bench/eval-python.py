"""Ground truth for the Python code evaluation (bench/eval-code.ts): public API of every module of a
corpus library as Python defines it (__all__ if set, else the non-underscore names the module binds,
read by importing it in a fresh interpreter, so that no other module's import leaves a submodule bound
in it), and each function's first docstring sentence for search. Prints JSON."""
import ast, json, os, subprocess, sys

# A build backend (hatch-vcs, setuptools-scm) writes `pkg/_version.py` when the package is built; a
# source checkout lacks it, so the probe supplies it as the build would, and nothing else.
PROBE = """
import importlib, importlib.abc, importlib.machinery, json, sys, types
class BuiltVersion(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        return importlib.machinery.ModuleSpec(name, self) if name.endswith("._version") else None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        module.__version__ = module.version = "0.0.0"
        module.__version_tuple__ = module.version_tuple = (0, 0, 0)
sys.path.insert(0, sys.argv[1])
sys.meta_path.append(BuiltVersion())
mod = importlib.import_module(sys.argv[2])
print(json.dumps(list(getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")])))
"""

root, src = sys.argv[1], os.path.normpath(sys.argv[2])
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
        probe = subprocess.run([sys.executable, "-c", PROBE, src, name], capture_output=True, text=True, cwd=root)
        if probe.returncode != 0:
            continue
        api = json.loads(probe.stdout.strip().splitlines()[-1])
        out["modules"][os.path.relpath(path, root)] = sorted(set(api))
        tree = ast.parse(open(path, encoding="utf8").read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    first = " ".join(doc.split("\n\n")[0].split())
                    out["functions"].append({"file": os.path.relpath(path, root), "name": node.name, "line": node.lineno, "query": first[:200], "doctest": ">>>" in doc})
print(json.dumps(out))
