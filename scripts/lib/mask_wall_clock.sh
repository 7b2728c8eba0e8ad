# Sourced by scripts that compare reports (golden.sh, distributed_check.sh):
# mask turns the host-dependent figures of a report on stdin into '#': the
# run summary's wall time, speed and rates, the elaboration's wall time,
# wall columns of boot phases, host time.
mask() {
  sed -E \
    -e 's/^(wall time +).*/\1#/' \
    -e 's/^(simulation speed +).*/\1#/' \
    -e 's/^(transactions +[0-9]+) \(.*\)$/\1 (#)/' \
    -e 's/ in [0-9.]+ s of wall time$/ in # s of wall time/' \
    -e 's/^(  .* us) +[0-9.]+ s$/\1 # s/' \
    -e 's/^(  host time +).*/\1#/'
}
