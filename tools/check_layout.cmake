# The layout rules of the library (the README's "Layout"): no source file
# under ditto/ over 700 lines outside kernels/ (the generated code is under
# the build directory); the folders below ops/ (core/, kernels/, autograd/,
# device/, random/, determinism/) include nothing of ops/ or above it; io/
# sits below nn/ (LibTorch's module archives are nn/'s). Fails naming each
# file that breaks a rule.
#   cmake -DSOURCE=<checkout> -P tools/check_layout.cmake

cmake_minimum_required(VERSION 3.20)

if(NOT SOURCE)
  message(FATAL_ERROR "check_layout: pass -DSOURCE=<the checkout>")
endif()
# A relative SOURCE (".") would glob nothing below.
get_filename_component(SOURCE "${SOURCE}" ABSOLUTE)

set(max_lines 700)
# banned_<folder>: the top-level folders of ditto/ whose headers <folder>/
# must not include.
set(above_ops ops nn optim train data io trace distributed config serialize ditto)
set(banned_core ${above_ops} autograd device kernels random determinism)
set(banned_kernels ${above_ops} autograd device)
set(banned_random ${above_ops} autograd device)
set(banned_determinism ${above_ops} autograd device)
set(banned_device ${above_ops} autograd)
set(banned_autograd ops nn optim train data io distributed device)
set(banned_io nn optim train data distributed)

file(GLOB_RECURSE files RELATIVE "${SOURCE}" "${SOURCE}/ditto/*.cpp" "${SOURCE}/ditto/*.h")
list(SORT files)
set(failures "")
foreach(f IN LISTS files)
  file(READ "${SOURCE}/${f}" text)
  if(NOT f MATCHES "^ditto/kernels/")
    string(REGEX MATCHALL "\n" newlines "${text}")
    list(LENGTH newlines n)
    if(n GREATER max_lines)
      string(APPEND failures "  ${f}: ${n} lines (at most ${max_lines} outside ditto/kernels/)\n")
    endif()
  endif()
  string(REGEX REPLACE "^ditto/([a-z_]+)/.*" "\\1" folder "${f}")
  if(NOT DEFINED banned_${folder})
    continue()
  endif()
  string(REGEX MATCHALL "#include \"ditto/[a-z_]+[/.]" includes "${text}")
  foreach(inc IN LISTS includes)
    string(REGEX REPLACE "#include \"ditto/([a-z_]+)[/.]" "\\1" top "${inc}")
    if(top IN_LIST banned_${folder})
      string(APPEND failures "  ${f}: includes ditto/${top} (${folder}/ is below it)\n")
    endif()
  endforeach()
endforeach()

list(LENGTH files count)
if(count EQUAL 0)
  message(FATAL_ERROR "check_layout: no source files under ${SOURCE}/ditto")
endif()
if(failures)
  message(FATAL_ERROR "check_layout: the layout rules are broken:\n${failures}")
endif()
message(STATUS "check_layout: ${count} files under ditto/ keep the layout rules")
