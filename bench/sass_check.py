#!/usr/bin/env python3
"""The disassembly check of issue 5: every expert GEMM kernel runs on the tensor cores (QGMMA /
HGMMA present) and which kernels touch local memory (LDL / STL: register spills).

Reads `cuobjdump -sass` of the given binaries (or saved dumps, --sass-file), counts per kernel
(function) its instructions, WGMMA instructions (QGMMA: FP8, HGMMA: f16/bf16) and local-memory
loads and stores, writes JSON and prints a table. Exit status 1 when a kernel whose demangled name
matches --require-mma has no WGMMA, or when a kernel matching --forbid-local touches local memory;
2 on bad usage or a dump that cannot be read. Runs where cuobjdump is (the GPU machine:
bench/sass_check.sh); the parser is tested on the build machine (tests/unit/bench/).
"""

import argparse
import json
import re
import shutil
import subprocess
import sys

FUNCTION = re.compile(r"^\s*Function : (\S+)\s*$")
# One SASS instruction line: /*0a20*/  [@P0] OPCODE.MODIFIERS operands ;
INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)")
MMA_OPCODES = ("QGMMA", "HGMMA")
LOCAL_LOAD = "LDL"
LOCAL_STORE = "STL"


def parse_sass(text):
    """Kernels of one `cuobjdump -sass` dump: [{name, instructions, mma, local_loads,
    local_stores}] in dump order (name mangled)."""
    kernels = []
    current = None
    for line in text.splitlines():
        function = FUNCTION.match(line)
        if function:
            current = {"name": function.group(1), "instructions": 0, "mma": 0,
                       "local_loads": 0, "local_stores": 0}
            kernels.append(current)
            continue
        instruction = INSTRUCTION.match(line)
        if current is None or not instruction:
            continue
        opcode = instruction.group(1)
        current["instructions"] += 1
        if opcode in MMA_OPCODES:
            current["mma"] += 1
        elif opcode == LOCAL_LOAD:
            current["local_loads"] += 1
        elif opcode == LOCAL_STORE:
            current["local_stores"] += 1
    return kernels


def demangle(names):
    """Demangled names by c++filt where it exists (the mangled names otherwise)."""
    tool = shutil.which("c++filt")
    if tool is None or not names:
        return list(names)
    result = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True,
                            check=False)
    lines = result.stdout.splitlines()
    return lines if result.returncode == 0 and len(lines) == len(names) else list(names)


def check(kernels, require_mma, forbid_local):
    """Problems: kernels matching require_mma without WGMMA, kernels matching forbid_local with
    local-memory instructions (patterns: regular expressions on the demangled name, or None)."""
    problems = []
    for kernel in kernels:
        name = kernel["demangled"]
        if require_mma and re.search(require_mma, name) and kernel["mma"] == 0:
            problems.append(f"no QGMMA/HGMMA: {name}")
        local = kernel["local_loads"] + kernel["local_stores"]
        if forbid_local and re.search(forbid_local, name) and local > 0:
            problems.append(f"{local} local-memory instructions: {name}")
    return problems


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", nargs="*", help="executables or cubins to disassemble")
    parser.add_argument("--sass-file", action="append", default=[],
                        help="a saved `cuobjdump -sass` dump instead of a binary (repeatable)")
    parser.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "cuobjdump")
    parser.add_argument("--kernels", default="expert_wgmma",
                        help="regex on the demangled name: the kernels reported (default: the "
                             "expert GEMM kernels)")
    parser.add_argument("--require-mma", default="expert_wgmma",
                        help="regex: these kernels must contain QGMMA or HGMMA")
    parser.add_argument("--forbid-local", default=None,
                        help="regex: these kernels must not touch local memory")
    parser.add_argument("--out", required=True, help="JSON output file")
    args = parser.parse_args(argv)
    if not args.binaries and not args.sass_file:
        parser.error("give binaries or --sass-file")

    sources = []
    for path in args.sass_file:
        try:
            with open(path) as f:
                sources.append((path, f.read()))
        except OSError as e:
            print(f"sass_check: cannot read {path}: {e}", file=sys.stderr)
            return 2
    for path in args.binaries:
        try:
            result = subprocess.run([args.cuobjdump, "-sass", path], capture_output=True,
                                    text=True, check=False)
        except OSError as e:
            print(f"sass_check: cannot run {args.cuobjdump}: {e}", file=sys.stderr)
            return 2
        if result.returncode != 0:
            print(f"sass_check: {args.cuobjdump} -sass {path} failed: {result.stderr.strip()}",
                  file=sys.stderr)
            return 2
        sources.append((path, result.stdout))

    report = {"check": "sass", "kernels_regex": args.kernels, "require_mma": args.require_mma,
              "forbid_local": args.forbid_local, "binaries": []}
    problems = []
    for path, text in sources:
        kernels = parse_sass(text)
        for kernel, name in zip(kernels, demangle([k["name"] for k in kernels])):
            kernel["demangled"] = name
        kernels = [k for k in kernels if re.search(args.kernels, k["demangled"])]
        problems += check(kernels, args.require_mma, args.forbid_local)
        with_local = [k for k in kernels if k["local_loads"] + k["local_stores"] > 0]
        report["binaries"].append({
            "path": path, "kernels": len(kernels),
            "with_mma": sum(1 for k in kernels if k["mma"] > 0),
            "with_local_memory": len(with_local), "kernel_list": kernels})
        print(f"{path}: {len(kernels)} kernels, {report['binaries'][-1]['with_mma']} with "
              f"QGMMA/HGMMA, {len(with_local)} touching local memory")
        for k in with_local:
            print(f"  LDL {k['local_loads']:3d} STL {k['local_stores']:3d}  {k['demangled'][:150]}")
    report["problems"] = problems
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    for problem in problems:
        print(f"sass_check: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
