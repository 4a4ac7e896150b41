# The checks of test/container/run (sourced), in the order a person meets them (systemd/README.md,
# "Install", steps 5-8): init, install, read without sudo, logs; then reload, a second daemon,
# stop, crash, hang, audit, install again, uninstall. Each prints ok/not ok; a failed
# check does not stop the next ones. `ct` runs a command in the container (lib.sh).
# shellcheck shell=bash
# failed and project are set by run. SC2317: functions called through check/wait_until.
# shellcheck disable=SC2154,SC2317

db=/var/lib/homeostat/homeostat.db # the service's database (storage.path, else $STATE_DIRECTORY)
config=/etc/homeostat/config.yaml  # written by `homeostat init`, installed by install-service
checkout=/root/homeostat           # where run copied the checkout (as ~/homeostat in the docs)
user=pi                            # the ordinary user of step 7
dropin=/etc/systemd/system/homeostat.service.d/zz-container-test.conf

run_checks() {
  # A failed step is reported by the checks after it: never stop half-way.
  set +e
  check_init
  check_install
  check_running
  check_files
  check_on_path
  check_read_without_sudo
  check_logs
  check_init_refuses
  check_reload
  check_second_daemon
  check_priorities
  check_clean_stop
  check_kill_restart
  check_watchdog
  check_exposure
  check_install_twice
  check_uninstall
  if [ "$failed" -gt 0 ]; then
    note "the service's last journal lines:"
    ct journalctl -q -u homeostat -n 40 --no-hostname 2>&1 | indent
  fi
}

# in_checkout COMMAND: a root shell's command in the checkout, as `sudo` there would run it.
in_checkout() {
  ct sh -c "cd $checkout && $1"
}

# Step 6: the config of step 5, no --config.
install_service() {
  in_checkout 'node dist/cli.js install-service'
}

# as_user COMMAND: COMMAND in a login shell of the ordinary user (no sudo), whose groups are
# read afresh as after logging out and in again.
as_user() {
  ct runuser -l "$user" -c "$1"
}

# Step 5: no 1-Wire and no GPIO in a container: init says so and writes a simulated room.
check_init() {
  local rc
  init_out=$(in_checkout 'node dist/cli.js init --yes' 2>&1)
  rc=$?
  if [ "$rc" = 0 ]; then
    pass "sudo node dist/cli.js init --yes exits 0"
    indent <<<"$init_out"
  else
    fail "sudo node dist/cli.js init --yes exits 0 (exit $rc)" "$init_out"
  fi
  said_not_found() {
    grep -F '1-Wire: not enabled' <<<"$init_out" && grep -F 'GPIO: no chips' <<<"$init_out" &&
      grep -F 'writing a simulated room' <<<"$init_out"
  }
  check "init says it found no 1-Wire and no GPIO, and writes a simulated room" said_not_found
  wrote_room() {
    grep -F "wrote $config" <<<"$init_out" && ct grep -E '^  room:' "$config" &&
      ct grep -F 'kind: simulated_relay' "$config"
  }
  check "init wrote $config: loop room, simulated" wrote_room
  # Step 5 says init writes it: the service, `homeostat status`/`history` and a `homeostat run`
  # by hand must all find the same database.
  check "init's config has storage.path: $db (systemd/README.md, step 5)" \
    ct grep -E "^  path: $db( |\$)" "$config"
}

check_install() {
  local out
  if out=$(install_service 2>&1); then
    pass "install-service exits 0"
    indent <<<"$out"
  else
    fail "install-service exits 0" "$out"
  fi
}

# Type=notify: "active" means systemd got READY=1 (every loop completed its first cycle).
check_running() {
  no_kill() { ! ct test -e /bin/kill && ! ct test -e /usr/bin/kill; }
  check "no procps in the container (no /bin/kill), as on a minimal Debian" no_kill
  check "the service is active (running) after READY=1 (Type=notify)" \
    wait_until 30 service_is active
  local status=
  status_shown() { status=$(prop StatusText) && [ -n "$status" ]; }
  if wait_until 15 status_shown; then
    pass "systemctl shows its STATUS line: $status"
  else
    fail "systemctl shows its STATUS line (StatusText)" "$(ct systemctl status homeostat --no-pager 2>&1)"
  fi
}

service_is() {
  [ "$(ct systemctl is-active homeostat)" = "$1" ]
}

# same_process PID: still active, with that main PID.
same_process() {
  service_is active && [ "$(prop MainPID)" = "$1" ]
}

# stat_is PATH 'owner:group mode'
stat_is() {
  local got
  got=$(ct stat -c '%U:%G %a' "$1") || return 1
  [ "$got" = "$2" ] || {
    echo "$1: $got, expected $2"
    return 1
  }
}

# Step 7: an ordinary user in group homeostat reads the service's config, API and database
# without sudo. Before joining it, they cannot read the config (0640 root:homeostat).
check_read_without_sudo() {
  ct useradd -m -s /bin/bash "$user"
  config_unreadable() { ! as_user "cat $config"; }
  check "before usermod -aG homeostat: $user cannot read $config" config_unreadable
  check "sudo usermod -aG homeostat $user" ct usermod -aG homeostat "$user"
  read_ok 'homeostat status' 'room .*°C → 20 °C'
  read_ok 'homeostat history room --since 2h' '^[0-9-]+T[0-9:.]+Z .*→ 20'
}

# read_ok COMMAND STDOUT_REGEX: as the user, exit 0; stdout matches; stderr says only where it
# read from: the service's API (the node id from init) with the installed config.
read_ok() {
  local command=$1 want=$2 rc out stderr err_file
  local from="^node [a-z0-9-]+ answered at http://127\.0\.0\.1:8734 \(config $config\)\$"
  err_file=$(mktemp)
  out=$(as_user "$command" 2>"$err_file")
  rc=$?
  stderr=$(cat "$err_file")
  rm -f "$err_file"
  if [ "$rc" = 0 ] && grep -E -- "$want" <<<"$out" >/dev/null &&
    [ "$(wc -l <<<"$stderr")" = 1 ] && grep -E -- "$from" <<<"$stderr" >/dev/null; then
    pass "as $user without sudo: $command (exit 0; stderr: $stderr)"
    indent <<<"$out"
  else
    fail "as $user without sudo: $command (exit 0, stdout /$want/, stderr /$from/)" "exit $rc
stdout: $out
stderr: $stderr"
  fi
}

# With the service stopped (no API), the user's history comes from the service's database.
check_read_database() {
  local rc out err_file stderr
  err_file=$(mktemp)
  out=$(as_user 'homeostat history room --since 2h' 2>"$err_file")
  rc=$?
  stderr=$(cat "$err_file")
  rm -f "$err_file"
  if [ "$rc" = 0 ] && grep -F "$db" <<<"$stderr" >/dev/null && grep -E '→ 20' <<<"$out" >/dev/null; then
    pass "service stopped: as $user, homeostat history room reads $db (stderr: $(head -n 1 <<<"$stderr"))"
  else
    fail "service stopped: as $user, homeostat history room reads $db" "exit $rc
stdout: $out
stderr: $stderr"
  fi
}

# Step 8: what systemctl status and the journal say after a clean start.
check_logs() {
  local out
  out=$(ct systemctl status homeostat --no-pager 2>&1)
  if grep -F 'active (running)' <<<"$out" >/dev/null && grep -E '^ *Status: ".*room' <<<"$out" >/dev/null; then
    pass "systemctl status homeostat: active (running), $(grep -E '^ *Status:' <<<"$out" | sed 's/^ *//')"
  else
    fail "systemctl status homeostat: active (running) and a Status: line naming room" "$out"
  fi
  out=$(ct journalctl -u homeostat -p warning --no-pager -q 2>&1)
  local rc=$?
  if [ "$rc" = 0 ] && [ -z "$out" ]; then
    pass "journalctl -u homeostat -p warning: exit 0, nothing (a clean start)"
  else
    fail "journalctl -u homeostat -p warning: exit 0, nothing (a clean start)" "exit $rc
$out"
  fi
}

# init never overwrites: a second one exits 1 and leaves the installed config as it was.
check_init_refuses() {
  local before after out rc
  before=$(ct sha256sum "$config")
  out=$(in_checkout 'node dist/cli.js init --yes' 2>&1)
  rc=$?
  after=$(ct sha256sum "$config")
  if [ "$rc" = 1 ] && [ "$before" = "$after" ] && grep -F 'exists; nothing written' <<<"$out" >/dev/null; then
    pass "init again: exit 1, $config unchanged ($out)"
  else
    fail "init again: exit 1, $config unchanged, says it exists" "exit $rc
$out
before: $before
after:  $after"
  fi
}

# A second daemon by hand, as user homeostat, while the service runs: it must not touch the
# service's database or relays. It exits 75 (EX_TEMPFAIL) naming the service's pid.
check_second_daemon() {
  local pid mark out rc
  pid=$(prop MainPID)
  mark=$(journal_mark)
  out=$(ct sh -c 'cd / && timeout 20 runuser -u homeostat -- homeostat run' 2>&1)
  rc=$?
  if [ "$rc" = 75 ] && grep -F "pid $pid " <<<"$out" >/dev/null; then
    pass "a second homeostat run as user homeostat: exit 75, names the service's pid $pid"
    indent <<<"$(grep -F 'already running' <<<"$out" | head -n 1)"
  else
    # Its log is JSON lines: their messages say enough (per line: not a ${//} substitution).
    # shellcheck disable=SC2001
    fail "a second homeostat run as user homeostat: exit 75, names the service's pid $pid (exit $rc)" \
      "$(sed 's/.*"msg":"\([^"]*\)".*/\1/' <<<"$out")"
  fi
  check "after it: the service still active, same MainPID $pid" same_process "$pid"
  untouched() {
    # Nothing in the service's journal about its actuators going safe or a stop, and its API
    # still answers with the loop.
    ! journal_has "$mark" "safe state" && ! journal_has "$mark" "Stopping" &&
      as_user 'homeostat status' | grep -F room >/dev/null
  }
  check "after it: the service's relays untouched (no safe-state line), its API answers" untouched
}

check_files() {
  check "the database $db exists, homeostat:homeostat 0640" stat_is "$db" 'homeostat:homeostat 640'
  check "/var/lib/homeostat is homeostat:homeostat 0750" stat_is /var/lib/homeostat 'homeostat:homeostat 750'
  check "$config is root:homeostat 0640" stat_is "$config" 'root:homeostat 640'
  in_gpio() { ct id -nG homeostat | grep -w gpio >/dev/null; }
  check "user homeostat is in group gpio" in_gpio
}

check_on_path() {
  local want got
  want=$(node -p "require('$project/package.json').version")
  got=$(ct sh -c 'cd / && homeostat --version' 2>&1) || true
  if [ "$(ct sh -c 'command -v homeostat')" = /usr/local/bin/homeostat ] && grep -qF "$want" <<<"$got"; then
    pass "homeostat is on PATH (/usr/local/bin/homeostat --version: $got)"
  else
    fail "homeostat is on PATH (/usr/local/bin/homeostat --version prints $want)" "$got"
  fi
}

# ExecReload must work without procps; the daemon logs "SIGHUP: reloading <config>".
check_reload() {
  local mark pid out
  mark=$(journal_mark)
  pid=$(prop MainPID)
  if ! out=$(ct systemctl reload homeostat 2>&1); then
    fail "systemctl reload homeostat succeeds" "$out
$(ct journalctl -q -u homeostat -n 5 -o cat)"
    return
  fi
  pass "systemctl reload homeostat succeeds"
  check "the journal shows the reload (SIGHUP: reloading $config)" \
    wait_until 10 journal_has "$mark" "SIGHUP: reloading"
  check "the reload kept the same process, active" same_process "$pid"
  check "the service runs at the unit's CPU priority (Nice=-10)" nice_is "$pid" -10
}

# nice_is PID VALUE: the process's nice value (field 19 of /proc/PID/stat; procps is absent).
nice_is() {
  local got
  got=$(ct cat "/proc/$1/stat" | awk '{print $19}') || return 1
  [ "$got" = "$2" ] || {
    echo "nice of $1: $got, expected $2"
    return 1
  }
}

# Errors reach the journal at their priority: an invalid config on reload is logged at error
# (3) and the service keeps running the last good one. The file is restored afterwards.
check_priorities() {
  local mark
  mark=$(journal_mark)
  ct sh -c "cp -p $config /root/config.yaml.good && echo 'not_a_key: 1' >> $config"
  ct systemctl reload homeostat >/dev/null 2>&1 # check_reload said whether reload works
  check "journalctl -u homeostat -p warning shows the invalid config's error" \
    wait_until 10 journal_has "$mark" "config invalid" -p warning
  priorities() {
    journal_since "$mark" -o verbose -p err | grep 'PRIORITY=3' >/dev/null &&
      journal_since "$mark" -o verbose | grep 'PRIORITY=6' >/dev/null
  }
  check "the error is at priority 3 (err), info lines at 6" priorities
  check "an invalid config leaves the service active" service_is active
  ct sh -c "cat /root/config.yaml.good > $config && rm /root/config.yaml.good"
  mark=$(journal_mark)
  ct systemctl reload homeostat >/dev/null 2>&1
  wait_until 10 journal_has "$mark" "SIGHUP: reloading" || true
}

# SIGTERM: the daemon drives every actuator safe and exits; ExecStopPost's `safe` succeeds.
check_clean_stop() {
  local mark
  mark=$(journal_mark)
  check "systemctl stop homeostat succeeds" ct systemctl stop homeostat
  stopped_cleanly() { service_is inactive && [ "$(prop Result)" = success ]; }
  check "after stop: inactive, Result=success" stopped_cleanly
  check "the journal says the actuators were driven safe" \
    wait_until 5 journal_has "$mark" "actuators at their safe state"
  check "ExecStopPost (homeostat safe) ran" wait_until 5 journal_has "$mark" "homeostat safe"
  check_read_database
}

# restarted_after N: NRestarts > N and active again.
restarted_after() {
  [ "$(prop NRestarts)" -gt "$1" ] && service_is active
}

# SIGKILL cannot be caught: Restart=on-failure brings it back (RestartSec=5).
check_kill_restart() {
  local before pid since
  check "systemctl start homeostat succeeds" ct systemctl start homeostat
  before=$(prop NRestarts)
  pid=$(prop MainPID)
  since=$SECONDS
  ct systemctl kill -s KILL --kill-whom=main homeostat
  if wait_until 20 restarted_after "$before"; then
    pass "kill -9: systemd restarts it (NRestarts $before → $(prop NRestarts), active again after $((SECONDS - since)) s)"
  else
    fail "kill -9: systemd restarts it within 20 s" "$(ct systemctl status homeostat --no-pager 2>&1)"
  fi
  new_process() { [ "$(prop MainPID)" != "$pid" ]; }
  check "a new main process" new_process
}

# A stopped process sends no WATCHDOG=1: systemd kills it after WatchdogSec and restarts it.
# 60 s in the unit; a drop-in makes it 10 s here.
check_watchdog() {
  local before mark since
  ct mkdir -p "$(dirname "$dropin")"
  ct sh -c "printf '[Service]\nWatchdogSec=10\n' > $dropin"
  ct systemctl daemon-reload
  ct systemctl restart homeostat
  wait_until 30 service_is active || true
  before=$(prop NRestarts)
  mark=$(journal_mark)
  since=$SECONDS
  ct systemctl kill -s STOP --kill-whom=main homeostat
  if wait_until 45 restarted_after "$before"; then
    pass "kill -STOP: watchdog kill and restart after $((SECONDS - since)) s (WatchdogSec=10)"
  else
    fail "kill -STOP: watchdog kill and restart within 45 s" "$(ct systemctl status homeostat --no-pager 2>&1)"
  fi
  check "the journal says: Watchdog timeout" journal_has "$mark" "Watchdog timeout"
  ct rm -rf "$(dirname "$dropin")"
  ct systemctl daemon-reload
}

check_exposure() {
  local out level
  out=$(ct systemd-analyze security homeostat 2>&1) || true
  level=$(sed -n 's/.*Overall exposure level for homeostat.service: \([0-9.]*\).*/\1/p' <<<"$out")
  if [ -n "$level" ] && awk -v l="$level" 'BEGIN { exit !(l <= 2.5) }'; then
    pass "systemd-analyze security homeostat: exposure $level ≤ 2.5"
  else
    fail "systemd-analyze security homeostat: exposure ${level:-?} ≤ 2.5" "$(tail -n 3 <<<"$out")"
  fi
}

# Again, over itself: nothing changes, the running service is left alone.
check_install_twice() {
  local pid out changed
  pid=$(prop MainPID)
  if ! out=$(install_service 2>&1); then
    fail "install-service a second time exits 0" "$out"
    return
  fi
  pass "install-service a second time exits 0"
  # Step lines start with what was done (src/install/steps.ts); the config check and doctor's
  # report are not steps.
  changed=$(grep -E '^(created|updated|removed|ran|enabled|disabled|started|restarted|stopped) ' <<<"$out" || true)
  if [ -z "$changed" ]; then
    pass "the second install changes nothing (its steps all say unchanged)"
  else
    fail "the second install changes nothing (its steps all say unchanged)" "$changed"
  fi
  check "the service is still running, same process" same_process "$pid"
}

check_uninstall() {
  local out
  if out=$(ct homeostat uninstall-service 2>&1); then
    pass "homeostat uninstall-service exits 0"
    indent <<<"$out"
  else
    fail "homeostat uninstall-service exits 0" "$out"
  fi
  unit_gone() { ! ct test -e /etc/systemd/system/homeostat.service && ! service_is active; }
  check "the unit is gone and the service stopped" unit_gone
  check "uninstall keeps the config ($config)" ct test -f "$config"
  check "uninstall keeps the database ($db)" ct test -f "$db"
}
