# Installs the built library into a scratch prefix, then configures, builds
# and runs an outside project that uses find_package(ditto) and, separately,
# pkg-config.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
if(EXISTS ${prefix}/include/ditto/ops/detail/op_util.h OR
   EXISTS ${prefix}/include/ditto/kernels)
  message(FATAL_ERROR "internal kernel headers were installed")
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer
          -B ${WORK_DIR}/consumer -DCMAKE_PREFIX_PATH=${prefix}
          -DCMAKE_BUILD_TYPE=Release
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed: ${rc}")
endif()
execute_process(COMMAND ${WORK_DIR}/consumer/consumer
                RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message("${out}")
if(rc OR NOT out MATCHES "tensor\\(\\[5\\., 7\\., 9\\.\\]\\)")
  message(FATAL_ERROR "the consumer failed: ${rc}")
endif()
# pkg-config: compile the same program with the flags ditto.pc gives.
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs ditto
                OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(rc)
  message(FATAL_ERROR "pkg-config does not find ditto")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(
  COMMAND c++ ${SOURCE_DIR}/tests/install/consumer/main.cpp ${flags}
          -Wl,-rpath,${prefix}/lib -o ${WORK_DIR}/pc_consumer
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building with pkg-config flags failed")
endif()
execute_process(COMMAND ${WORK_DIR}/pc_consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the pkg-config consumer failed")
endif()
