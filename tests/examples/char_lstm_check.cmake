# Runs the character-level LSTM example (EXE) on a short setting with 1
# thread twice and with 2 threads once; their outputs (losses, sample,
# fingerprint) must be identical. Then a run of one epoch that checkpoints
# (train::TrainState) and a resume with 2 threads that finishes the second:
# the resumed run prints the straight run's second epoch, sample and
# fingerprint. WORK is a scratch directory of the test's own.
set(args --epochs 2 --steps 4 --hidden 48 --seq 24 --batch 8 --sample 60)
foreach(run a b c)
  if(run STREQUAL "c")
    set(threads 2)
  else()
    set(threads 1)
  endif()
  execute_process(COMMAND ${EXE} ${args} --threads ${threads}
                  OUTPUT_VARIABLE out_${run} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${run} (${threads} threads) failed: ${rc}")
  endif()
endforeach()
message(STATUS "${out_a}")
if(NOT out_a STREQUAL out_b)
  message(FATAL_ERROR "two runs differ:\n${out_a}\n---\n${out_b}")
endif()
if(NOT out_a STREQUAL out_c)
  message(FATAL_ERROR "1 and 2 threads differ:\n${out_a}\n---\n${out_c}")
endif()
if(NOT out_a MATCHES "fingerprint [0-9a-f]+")
  message(FATAL_ERROR "no fingerprint in:\n${out_a}")
endif()

file(REMOVE_RECURSE ${WORK})
set(one --epochs 1 --steps 4 --hidden 48 --seq 24 --batch 8 --sample 60)
execute_process(COMMAND ${EXE} ${one} --threads 1 --checkpoint ${WORK}
                OUTPUT_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT IS_DIRECTORY ${WORK}/step-00000001)
  message(FATAL_ERROR "the checkpointing run failed (${rc}) or saved nothing")
endif()
execute_process(COMMAND ${EXE} ${args} --threads 2 --checkpoint ${WORK}
                        --resume latest
                OUTPUT_VARIABLE out_r ERROR_VARIABLE err_r RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the resumed run failed: ${rc}\n${err_r}")
endif()
string(REGEX REPLACE "epoch 1 loss [^\n]*\n" "" want "${out_a}")
if(NOT out_r STREQUAL want)
  message(FATAL_ERROR "the resumed run differs from the straight one:\n${want}\n---\n${out_r}")
endif()
message(STATUS "resumed after epoch 1: the same second epoch, sample and fingerprint")
file(REMOVE_RECURSE ${WORK})
