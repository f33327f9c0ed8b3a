# Runs commands two at a time (JOBS) and keeps each one's output and exit
# status, for the emulated checks (scripts/cpu_check,
# scripts/cross_arch_check), whose programs each use one core under qemu.
#   source scripts/lib/jobs.sh
#   jobs_init DIR                 a fresh queue whose files live in DIR
#   job NAME COMMAND [ARG...]     queues a command (its environment: `env`)
#   run_jobs                      runs the queue in the order given, JOBS
#                                 at a time; NAME's standard output in
#                                 DIR/NAME.txt, its standard error in
#                                 DIR/NAME.err, its exit status in DIR/NAME.rc
#   job_ok NAME                   true if NAME exited 0
# Queue the longest jobs first: the queue is run in order.

jobs_init() { # dir
  jobs_dir=$1
  rm -rf "$jobs_dir"
  mkdir -p "$jobs_dir"
  : > "$jobs_dir/queue"
}

job() { # name command...
  local name=$1
  shift
  printf '%q ' "$@" > "$jobs_dir/$name.cmd"
  echo "$name" >> "$jobs_dir/queue"
}

run_jobs() {
  xargs -P "${JOBS:-2}" -I{} bash -c \
    'eval "$(cat "$1/$2.cmd")" > "$1/$2.txt" 2> "$1/$2.err"; echo $? > "$1/$2.rc"' \
    _ "$jobs_dir" {} < "$jobs_dir/queue"
}

job_ok() { # name
  [[ -f $jobs_dir/$1.rc && $(cat "$jobs_dir/$1.rc") == 0 ]]
}

# A failed job's last lines, both streams. name
job_tail() {
  tail -40 "$jobs_dir/$1.txt" >&2
  tail -20 "$jobs_dir/$1.err" >&2
}

# A gtest program's result: its PASSED line and the tests it skipped, or its
# tail and a failure line (then returns 1). label name
report_gtest() {
  local label=$1 name=$2 f=$jobs_dir/$2.txt
  if job_ok "$name" && ! grep -qE '^\[  FAILED  \]' "$f" && grep -qE '^\[  PASSED  \]' "$f"; then
    echo "$label: $name: $(grep -E '^\[  PASSED  \]' "$f")"
    grep -E '^\[  SKIPPED \] [A-Z].*\(' "$f" | sed "s/^/$label: /" || true
  else
    job_tail "$name"
    echo "$label: $name failed" >&2
    return 1
  fi
}
