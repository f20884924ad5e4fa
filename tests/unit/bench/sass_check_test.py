#!/usr/bin/env python3
"""bench/sass_check.py's parser and verdicts on a small `cuobjdump -sass` dump in its layout: two
kernels, one with WGMMA and spills, one without WGMMA (run by ctest: python_sass_check)."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
SCRIPT = os.path.join(ROOT, "bench", "sass_check.py")
spec = importlib.util.spec_from_file_location("sass_check", SCRIPT)
sass_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sass_check)

DUMP = """
Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
host = linux
compile_size = 64bit

\tcode for sm_90a
\t\tFunction : _Z22mxfp4_expert_wgmma_onev
\t.headerflags\t@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
        /*0010*/                   STL [R1], R10 ;                        /* 0x0000000a01007387 */
        /*0020*/                   WARPGROUP.ARRIVE ;                     /* 0x00000000000079c5 */
        /*0030*/                   QGMMA.64x32x32.F32.E4M3.E4M3 R40, R60, gdesc[UR12], RZ, !UPT, gsb0 ;
        /*0040*/              @!P0 LDL R13, [R1] ;                        /* 0x0000000001057983 */
        /*0050*/                   LDL.LU R14, [R1+0x4] ;                 /* 0x0000040001057983 */
        /*0060*/                   QGMMA.64x32x32.F32.E4M3.E4M3 R24, R56, gdesc[UR16], RZ, !UPT, gsb0 ;
        /*0070*/                   EXIT ;                                 /* 0x000000000000794d */
        ..........

\t\tFunction : _Z20fp8_expert_wgmma_twov
\t.headerflags\t@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
        /*0010*/              @P2 BRA 0x30 ;                              /* 0x0000000000842947 */
        /*0020*/                   FFMA R4, R5, R6, R4 ;                  /* 0x0000000605047223 */
        /*0030*/                   EXIT ;                                 /* 0x000000000000794d */
        ..........
"""


class ParseTest(unittest.TestCase):
    def test_counts_per_kernel(self):
        kernels = sass_check.parse_sass(DUMP)
        self.assertEqual([k["name"] for k in kernels],
                         ["_Z22mxfp4_expert_wgmma_onev", "_Z20fp8_expert_wgmma_twov"])
        one, two = kernels
        self.assertEqual((one["instructions"], one["mma"], one["local_loads"],
                          one["local_stores"]), (8, 2, 2, 1))
        self.assertEqual((two["instructions"], two["mma"], two["local_loads"],
                          two["local_stores"]), (4, 0, 0, 0))

    def test_verdicts(self):
        kernels = sass_check.parse_sass(DUMP)
        for k in kernels:
            k["demangled"] = k["name"]
        problems = sass_check.check(kernels, "expert_wgmma", "mxfp4")
        self.assertEqual(len(problems), 2)
        self.assertIn("3 local-memory instructions", problems[0])
        self.assertIn("no QGMMA/HGMMA: _Z20fp8_expert_wgmma_twov", problems[1])
        self.assertEqual(sass_check.check(kernels, "mxfp4", None), [])

    def test_command_line_exit_status_and_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            dump = os.path.join(tmp, "dump.sass")
            out = os.path.join(tmp, "out.json")
            with open(dump, "w") as f:
                f.write(DUMP)
            failing = subprocess.run([sys.executable, SCRIPT, "--sass-file", dump, "--out", out],
                                     capture_output=True, text=True)
            self.assertEqual(failing.returncode, 1, failing.stderr)  # the FP8 kernel has no WGMMA
            report = json.load(open(out))
            self.assertEqual(report["binaries"][0]["kernels"], 2)
            self.assertEqual(report["binaries"][0]["with_local_memory"], 1)
            passing = subprocess.run([sys.executable, SCRIPT, "--sass-file", dump, "--out", out,
                                      "--require-mma", "mxfp4"], capture_output=True, text=True)
            self.assertEqual(passing.returncode, 0, passing.stderr)
            missing = subprocess.run([sys.executable, SCRIPT, "--sass-file",
                                      os.path.join(tmp, "absent.sass"), "--out", out],
                                     capture_output=True, text=True)
            self.assertEqual(missing.returncode, 2)


if __name__ == "__main__":
    unittest.main()
