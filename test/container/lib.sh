# Helpers for test/container/run (sourced): skipping, reporting checks, commands in the container.
# shellcheck shell=bash
# ct_pid and project are set by run. SC2317: functions called through check/wait_until.
# shellcheck disable=SC2154,SC2317

# The machine cannot run the test (not root, no systemd-nspawn, cannot boot): one plain line, exit 0,
# so that .ci/run says so and goes on.
skip() {
  echo "container test skipped: $*"
  exit 0
}

# A progress note (TAP comment).
note() {
  echo "# $*"
}

failed=0
passed=0

pass() {
  passed=$((passed + 1))
  echo "ok - $*"
}

# indent: standard input as indented TAP comments.
indent() {
  sed 's/^/#   /'
}

# fail DESCRIPTION [DETAIL]: the detail (a command's output) follows as indented comments.
fail() {
  failed=$((failed + 1))
  echo "not ok - $1"
  if [ -n "${2:-}" ]; then
    indent <<<"$2"
  fi
}

# check DESCRIPTION COMMAND...: passes when the command succeeds; its output is shown only when it fails.
check() {
  local what=$1 out
  shift
  if out=$("$@" 2>&1); then
    pass "$what"
  else
    fail "$what" "$out"
  fi
}

# ct COMMAND...: runs a command inside the booted container (all its namespaces, its root and cwd /),
# with a clean environment: what a root shell there would have.
ct() {
  nsenter -t "$ct_pid" -a env -i \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TERM=dumb SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}

# wait_until SECONDS COMMAND...: polls the command every half second until it succeeds; 1 on timeout.
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.5
  done
}

# prop PROPERTY: one property of the homeostat unit (`systemctl show -P`).
prop() {
  ct systemctl show -P "$1" homeostat
}

# journal_mark: the journal's current end, for `journal_since MARK`: what was logged after it.
journal_mark() {
  ct journalctl -q -n 1 -o export | sed -n 's/^__CURSOR=//p'
}

# journal_since MARK [journalctl options]: the homeostat unit's lines after MARK, message only.
journal_since() {
  local mark=$1
  shift
  ct journalctl -q -u homeostat --after-cursor="$mark" -o cat "$@"
}

# journal_has MARK TEXT [journalctl options]: whether a line after MARK contains TEXT.
# (Not grep -q: it would stop reading at the first match, and journalctl's SIGPIPE would fail
# the pipeline under pipefail.)
journal_has() {
  local mark=$1 text=$2
  shift 2
  journal_since "$mark" "$@" | grep -F -- "$text" >/dev/null
}
