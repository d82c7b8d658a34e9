#!/bin/bash
# Experiment only: renice the predictor threads of any running Serval (comm "serval-all-mini...") to nice 10.
while true; do
  for p in $(pgrep -f quarkus-run.jar); do
    for t in /proc/$p/task/*; do
      c=$(cat $t/comm 2>/dev/null)
      case "$c" in serval-all-mini*) n=$(awk '{print $19}' $t/stat 2>/dev/null); [ "$n" != "10" ] && renice -n 10 -p ${t##*/} >/dev/null 2>&1;; esac
    done
  done
  sleep 1
done
