#!/usr/bin/env bash
# Fails if any function of a shared library, outside ditto's per-capability
# kernel namespaces, contains an instruction beyond baseline x86-64 (SSE2):
# a VEX/EVEX instruction, a YMM/ZMM/mask register, BMI1/2, LZCNT or POPCNT.
# Such a function could run before the CPU check (Note [No instruction
# before the CPU check], ditto/kernels/cpu/kernel_table.cpp), for example
# an inline function or template instance that a -mavx512f unit emitted and
# the linker kept for everyone.
#   tools/isa_audit.sh LIBRARY
set -euo pipefail
lib=${1:?usage: isa_audit.sh LIBRARY}
objdump=${OBJDUMP:-objdump}
"$objdump" -d -C --no-show-raw-insn "$lib" | awk '
  # A function: "0000000000012340 <name>:"
  /^[0-9a-f]+ <.*>:$/ {
    name = substr($0, index($0, "<") + 1)
    name = substr(name, 1, length(name) - 2)
    ++functions
    # Per-capability code: its own namespace, or a template instance that
    # names one of its types (unique to that capability).
    allowed = (name ~ /ditto::kernels::(avx2|avx512)::/)
    if (allowed) ++allowed_functions
    next
  }
  /^ +[0-9a-f]+:\t/ {
    if (allowed) next
    split($0, parts, "\t")
    insn = parts[2]
    mnemonic = insn
    sub(/ .*/, "", mnemonic)
    if (mnemonic ~ /^(lock|rep|repz|repnz|notrack|bnd|data16|cs|ds)$/) {
      rest = insn
      sub(/^[a-z0-9]+ +/, "", rest)
      mnemonic = rest
      sub(/ .*/, "", mnemonic)
    }
    bad = mnemonic ~ /^v/ || insn ~ /%[yz]mm[0-9]/ ||
          mnemonic ~ /^k(mov|or|and|xor|not|test|shift|unpck|add)/ ||
          mnemonic ~ /^(andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|lzcnt|popcnt|movbe)$/
    if (bad && !(name in seen)) {
      seen[name] = 1
      ++violations
      printf "isa_audit: %s uses \"%s\" outside the per-capability kernels\n", name, insn
    }
  }
  END {
    if (functions == 0) { print "isa_audit: no functions found"; exit 1 }
    if (violations > 0) {
      printf "isa_audit: %d function(s) would run instructions before the CPU check\n", violations
      exit 1
    }
    printf "isa_audit: %d functions, %d per-capability, none beyond baseline outside them\n", functions, allowed_functions
  }'
