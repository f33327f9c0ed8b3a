# Cross-building ditto for aarch64 with Debian's g++-aarch64-linux-gnu and
# the arm64 packages of its dependencies (multiarch: zlib1g-dev:arm64,
# libgtest-dev:arm64, libxxhash-dev:arm64, libstdc++6:arm64, installed by
# `scripts/setup --cross`). Programs run under qemu-aarch64 with the arm64
# libc6 and libstdc++6 (multiarch).
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# pkg-config reads the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR}
    "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
