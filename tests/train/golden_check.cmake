# `ditto train --max-steps 60` (CLI) prints the committed golden weight
# fingerprint (GOLDEN) on this machine. WORK is the test's scratch directory.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CLI} train --max-steps 60 --threads 2 --quiet
                        --out ${WORK}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
file(REMOVE_RECURSE ${WORK})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ditto train failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${GOLDEN} want)
string(STRIP "${want}" want)
if(NOT out MATCHES "fingerprint ([0-9a-f]+)")
  message(FATAL_ERROR "no fingerprint in:\n${out}")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL want)
  message(FATAL_ERROR "60 steps gave fingerprint ${CMAKE_MATCH_1}, the golden is ${want} (tests/golden/README.md)")
endif()
message(STATUS "60 steps: fingerprint ${want}, the golden")
