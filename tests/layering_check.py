#!/usr/bin/env python3
"""Fails when a file includes a header from a layer above its own.

The layers, lowest first (docs/architecture.md): hardware facts (spaces/) <- kernels and their
legality (kernels/) <- runtime dispatch and the store (dispatch/) <- the public API header (api/)
<- the offline tuner (tuner/) <- the tools' command lines (cli/) <- tools and benchmarks <- tests.
The Python package (python/) builds on the tuner and stands beside cli/: it takes no command line. A
project header is found by its path under one of the layer folders; system and third-party
headers are not checked.
Usage: layering_check.py [source root]
"""
import pathlib
import re
import sys

LAYERS = {"spaces": 0, "kernels": 1, "dispatch": 2, "api": 3, "tuner": 4, "cli": 5, "python": 5, "tools": 6,
          "benchmarks": 6, "tests": 7}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
SOURCES = ("*.hpp", "*.cpp", "*.cu", "*.in")


def owner(root, included, including_dir):
    """The layer folder that provides `included`, or None for a header outside the project."""
    local = including_dir / included
    if local.is_file():
        return local.relative_to(root).parts[0]
    for folder in LAYERS:
        if (root / folder / included).is_file():
            return folder
    return None


def violations(root):
    found = []
    for folder, rank in LAYERS.items():
        for pattern in SOURCES:
            for path in sorted((root / folder).rglob(pattern)):
                for included in INCLUDE.findall(path.read_text(errors="replace")):
                    provider = owner(root, included, path.parent)
                    if provider is None or provider == folder:
                        continue
                    if LAYERS[provider] >= rank:
                        found.append(f"{path.relative_to(root)} includes \"{included}\" from {provider}/, "
                                     f"a layer {'above' if LAYERS[provider] > rank else 'beside'} {folder}/")
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    found = violations(root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} include(s) against the layers (spaces <- kernels <- dispatch <- api <- tuner <- cli, python; cli <- tools, benchmarks)")
        return 1
    print("layering: every include points to the same or a lower layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
