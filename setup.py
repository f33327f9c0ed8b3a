"""Builds ditto._C and libditto.so with CMake for `pip install`.

The extension and the library are built by the project's CMake (the same
targets as a build tree's), and libditto.so is shipped beside the
extension, which finds it through its RPATH ($ORIGIN). See docs/python.md.
"""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        os.makedirs(build, exist_ok=True)
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DDITTO_BUILD_TESTS=OFF",
                "-DDITTO_BUILD_EXAMPLES=OFF", "-DDITTO_BUILD_PYTHON=ON",
                f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ccache"):
            args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build] + args)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.check_call(["cmake", "--build", build, "-j", jobs,
                               "--target", "ditto_python"])
        dest = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
        os.makedirs(dest, exist_ok=True)
        built = os.path.join(build, "python", "ditto")
        for name in os.listdir(built):
            if name.startswith("_C.") and name.endswith(".so"):
                shutil.copy2(os.path.join(built, name),
                             self.get_ext_fullpath(ext.name))
        # The library under its soname, the name the extension asks for.
        soname = subprocess.check_output(
            ["objdump", "-p", os.path.join(build, "libditto.so")], text=True)
        soname = [ln.split()[1] for ln in soname.splitlines()
                  if ln.strip().startswith("SONAME")][0]
        shutil.copy2(os.path.join(build, "libditto.so"),
                     os.path.join(dest, soname))


setup(ext_modules=[Extension("ditto._C", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
