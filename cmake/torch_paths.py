"""Prints what CMake needs to build the PyTorch backend against the installed torch
(cmake/qcclFeatures.cmake), one item per line: the include directories (;-separated), the library
directory, torch's version and its C++11 ABI flag.

`pip install ./python` builds in an isolated environment that hides the packages of the
environment it installs into (PEP 517 build isolation). The torch to build against is that
environment's: the extension must match the torch it will run with. So when `import torch` fails
here, the interpreter's own site-packages, which the isolation took off sys.path, are searched
too (the interpreter, and with it sys.prefix, is the target environment's).
"""
import os
import sys
import sysconfig



def environment_site_packages():
    """Where the target environment keeps its packages: its own site-packages and, for a virtual
    environment made with --system-site-packages, its base interpreter's."""
    paths = [sysconfig.get_paths()]
    cfg = os.path.join(sys.prefix, "pyvenv.cfg")
    if sys.prefix != sys.base_prefix and os.path.exists(cfg):
        with open(cfg) as f:
            settings = {k.strip(): v.strip() for k, v in
                        (line.split("=", 1) for line in f if "=" in line)}
        if settings.get("include-system-site-packages", "").lower() == "true":
            paths.append(sysconfig.get_paths(vars={"base": sys.base_prefix,
                                                   "platbase": sys.base_exec_prefix}))
    return [p[k] for p in paths for k in ("platlib", "purelib")]


try:
    import torch
except ImportError:
    sys.path[:0] = list(dict.fromkeys(environment_site_packages()))
    import torch
from torch.utils import cpp_extension

print(";".join(cpp_extension.include_paths()))
print(os.path.join(os.path.dirname(torch.__file__), "lib"))
print(torch.__version__)
print(int(torch.compiled_with_cxx11_abi()))
