#!/usr/bin/env python3
"""Python docstrings as plain-text documents, for `sluice-bench corpus --kind doc-files`.

    python_docstrings.py OUT_DIR [LIB_DIR]

For every module under LIB_DIR (default: this interpreter's standard library, tests and site-packages left
out), in sorted order, writes one text file holding the module's docstring and those of its classes and
functions, each under a line naming it. Modules whose docstrings add up to less than 1 KiB are skipped.
Prints the number of files written.
"""
import ast
import os
import sys
import sysconfig


def docstrings(tree):
    out = []
    module_doc = ast.get_docstring(tree, clean=True)
    if module_doc:
        out.append(module_doc)
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=True)
            if doc:
                kind = "class" if isinstance(node, ast.ClassDef) else "def"
                out.append("%s %s\n\n%s" % (kind, node.name, doc))
    return out


def main():
    out_dir = sys.argv[1]
    lib = sys.argv[2] if len(sys.argv) > 2 else sysconfig.get_paths()["stdlib"]
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for root, dirs, files in os.walk(lib):
        dirs[:] = sorted(d for d in dirs if d not in ("test", "tests", "site-packages", "dist-packages", "idlelib", "__pycache__"))
        paths += [os.path.join(root, f) for f in files if f.endswith(".py")]
    written = 0
    for path in sorted(paths):
        try:
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read())
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        text = "\n\n".join(docstrings(tree))
        if len(text.encode("utf-8")) < 1024:
            continue
        name = os.path.relpath(path, lib)[:-3].replace(os.sep, ".")
        with open(os.path.join(out_dir, name + ".txt"), "w", encoding="utf-8") as f:
            f.write(text + "\n")
        written += 1
    print(written)


if __name__ == "__main__":
    main()
