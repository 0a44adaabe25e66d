#!/usr/bin/env bash
# Prints how many pytest workers the suite runs with: one more than the cores. About a fifth of
# the suite's time is spent waiting (on Ray's start-up and stuck-unit timers, on smoke tests'
# timeouts, on subprocesses' pipes); the extra worker runs tests meanwhile. On 2 cores, 3 workers
# ran the suite in 5 min 42 s to 6 min 15 s where 2 took 6 min 49 s to 7 min 35 s
# (docs/contributing.md).
echo $(( $(nproc 2>/dev/null || echo 1) + 1 ))
