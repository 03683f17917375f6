#!/usr/bin/env python3
"""Fails when README.md, docs/*.md or docs/results/README.md points into docs/results/ at something
that is not there.

docs/results/ keeps, per run, what backs a figure the docs quote (its report and the command
that made it); the rest of a run lives in git history. A doc names a result three ways, all
checked here:
- a Markdown link, `[report](results/h100/RUN/report.md)`, relative to the doc;
- a path in the text, `docs/results/...` from the root or `results/h100/...`, `results/openmp/...`
  from docs/ (a trailing `/` names a folder);
- a file in git history, `git show COMMIT:docs/results/...`, checked with `git cat-file` where the
  source tree is a git checkout holding that commit (skipped in a source tarball or a shallow clone).
Usage: docs_results_links.py [source root]
"""
import pathlib
import re
import subprocess
import sys

LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
TEXT = re.compile(r"(?<![\w/.:-])((?:docs/)?results/(?:h100|openmp)[^\s)`'\"<>,;*]*)")
HISTORY = re.compile(r"git show ([0-9a-f]{7,40}):(docs/results/[^\s`'\"<>,;)]+)")


def documents(root):
    return [root / "README.md"] + sorted((root / "docs").glob("*.md")) + [root / "docs" / "results" / "README.md"]


def in_results(root, path):
    results = (root / "docs" / "results").resolve()
    return path == results or results in path.parents


def references(root, doc):
    """(line number, as written, resolved path) for each reference of `doc` into docs/results."""
    found = []
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        line_without_history = HISTORY.sub("", line)
        for target in LINK.findall(line_without_history):
            if "://" in target:
                continue
            path = (doc.parent / target).resolve()
            if in_results(root, path):
                found.append((number, target, path))
        for target in TEXT.findall(LINK.sub("", line_without_history)):
            target = target.rstrip(".:")
            base = root if target.startswith("docs/") else doc.parent
            found.append((number, target, (base / target).resolve()))
    return found


def history_references(doc):
    found = []
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        found += [(number, commit, path) for commit, path in HISTORY.findall(line)]
    return found


def in_git(root):
    try:
        return subprocess.run(["git", "-C", str(root), "rev-parse", "--git-dir"], capture_output=True).returncode == 0
    except OSError:
        return False


def git_ok(root, object_name):
    return subprocess.run(["git", "-C", str(root), "cat-file", "-e", object_name], capture_output=True).returncode == 0


def dangling(root):
    problems = []
    check_history = in_git(root)
    for doc in documents(root):
        name = doc.relative_to(root)
        for number, written, path in references(root, doc):
            if not path.exists():
                problems.append(f"{name}:{number}: {written} is not in the tree "
                                "(point at what remains, or say `git show COMMIT:docs/results/...`)")
        if not check_history:
            continue
        shallow = subprocess.run(["git", "-C", str(root), "rev-parse", "--is-shallow-repository"],
                                 capture_output=True, text=True).stdout.strip() == "true"
        for number, commit, path in history_references(doc):
            if shallow and not git_ok(root, f"{commit}^{{commit}}"):
                continue  # a shallow clone may lack the commit: nothing to say about its paths
            if not git_ok(root, f"{commit}:{path}"):
                problems.append(f"{name}:{number}: git show {commit}:{path} finds nothing")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1]).resolve()
    problems = dangling(root)
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} reference(s) into docs/results that do not resolve")
        return 1
    count = sum(len(references(root, doc)) + len(history_references(doc)) for doc in documents(root))
    print(f"docs/results links: all {count} references from README.md, docs/*.md and docs/results/README.md resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
