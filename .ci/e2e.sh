#!/usr/bin/env bash
# End-to-end check of the real binary: start it under Xvfb on the embedded
# sample and weights, press keys with xdotool, take screenshots, and assert
# the window is drawn, not blank, and that stepping changes the state image.
set -euo pipefail
bin=${1:?usage: e2e.sh BINARY}
tmp=$(mktemp -d)
export XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache XDG_DATA_HOME=$tmp/data HOME=$tmp/home
export LANG=en_US.UTF-8
mkdir -p "$HOME"
disp=90
while [ -e "/tmp/.X${disp}-lock" ]; do disp=$((disp + 1)); done
Xvfb ":$disp" -screen 0 1280x800x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
xvfb=$!
app=
cleanup() {
  if [ -n "$app" ]; then kill "$app" 2>/dev/null || true; wait "$app" 2>/dev/null || true; fi
  kill "$xvfb" 2>/dev/null || true
  wait "$xvfb" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
export DISPLAY=":$disp"
for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done

# waitwin LOG: the window of the app just started ($app), within 10 s.
waitwin() {
  win=
  for _ in $(seq 200); do
    win=$(xdotool search --onlyvisible --name 'Attractor Lab' 2>/dev/null | head -1 || true)
    [ -n "$win" ] && return 0
    kill -0 "$app" 2>/dev/null || { echo "e2e: the app exited early:"; cat "$1"; exit 1; }
    sleep 0.05
  done
  echo "e2e: no window after 10 s"; cat "$1"; exit 1
}
start=$(date +%s.%N)
"$bin" >"$tmp/app.log" 2>&1 &
app=$!
waitwin "$tmp/app.log"
shown=$(date +%s.%N)
echo "e2e: window mapped after $(echo "$shown - $start" | bc) s"
eval "$(xdotool getwindowgeometry --shell "$win")"
xdotool mousemove --sync $((X + WIDTH / 2)) $((Y + 10)) windowfocus "$win" 2>/dev/null || true
shot() { import -window root -crop "${WIDTH}x${HEIGHT}+${X}+${Y}" +repage "$tmp/$1.png"; }
# Nothing below sleeps for a fixed time: each step polls the window (or a
# file, or the log) until what it waits for is there, within a limit.
# changed A B: the pixels that differ between A.png and B.png.
changed() { local d; d=$(compare -metric AE "$tmp/$1.png" "$tmp/$2.png" null: 2>&1 || true); echo "${d%% *}"; }
# settle NAME [S]: shoot NAME.png until two shots in a row are the same.
settle() {
  local end=$(($(date +%s) + ${2:-15}))
  shot "$1"
  while :; do
    sleep 0.2; cp "$tmp/$1.png" "$tmp/$1.prev.png"; shot "$1"
    [ "$(changed "$1.prev" "$1")" = 0 ] 2>/dev/null && return 0
    [ "$(date +%s)" -lt "$end" ] || return 0 # still moving (a run plays): take it as it is
  done
}
# waitchange REF NAME [S]: shoot NAME.png until it differs from REF.png
# by more than 100 pixels; prints the count; fails after S seconds.
waitchange() {
  local end=$(($(date +%s) + ${3:-10})) d
  while :; do
    shot "$2"; d=$(changed "$1" "$2")
    [ "$d" -gt 100 ] 2>/dev/null && { echo "$d"; return 0; }
    [ "$(date +%s)" -lt "$end" ] || { echo "$d"; return 1; }
    sleep 0.1
  done
}
# waitfor FILE PATTERN [S]: until FILE holds PATTERN (grep -q).
waitfor() {
  local end=$(($(date +%s) + ${3:-15}))
  until grep -q -- "$2" "$1" 2>/dev/null; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.1
  done
}
# drawn NAME: shoot NAME.png until it is not blank (grey-level std > 0.05).
drawn() {
  local end=$(($(date +%s) + 20))
  while :; do
    shot "$1"
    awk -v s="$(convert "$tmp/$1.png" -colorspace Gray -format '%[fx:standard_deviation]' info:)" 'BEGIN { exit !(s > 0.05) }' && return 0
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.1
  done
}
drawn before || { echo "e2e: the window stays blank"; exit 1; }
settle before
# Step forward 10 times.
for _ in $(seq 10); do xdotool key --window "$win" Right; done
diff=$(waitchange before after) || { echo "e2e: stepping did not change the window"; exit 1; }
settle after
# Play for a moment, then pause: the state keeps changing.
xdotool key --window "$win" space
played=$(waitchange after played) || { echo "e2e: playing did not change the window"; exit 1; }
xdotool key --window "$win" space
echo "e2e: pixels changed by playing: $played"
# Keys survive a click on a control (a focused check box kept them before):
# click the mask choice, then the BSA P=4 check box; after each, → steps
# (positions at 1280×800 under the menu bar).
keystep() { # $1: x, $2: y of the control in the window; $3: name
  xdotool mousemove --sync $((X + $1)) $((Y + $2)) click 1
  settle "clicked-$3"
  xdotool key --window "$win" Right Right Right
  local d; d=$(waitchange "clicked-$3" "stepped-$3") || { echo "e2e: → did nothing after a click on $3"; cp "$tmp"/*-"$3".png /tmp/ 2>/dev/null; exit 1; }
  echo "e2e: pixels changed by → after clicking $3: $d"
}
keystep 87 286 mask-choice
keystep 18 567 checkbox
# Export the window by keys alone (Ctrl+E, Tab to "Window (PNG)", Space,
# then a typed absolute path): the file is the window, not a blank image.
settle pre-export
xdotool key --window "$win" ctrl+e
waitchange pre-export export-dialog >/dev/null || { echo "e2e: Ctrl+E opened nothing"; exit 1; }
xdotool key --window "$win" Tab space
waitchange export-dialog save-dialog >/dev/null || { echo "e2e: the export choice opened nothing"; exit 1; }
settle save-dialog 3
xdotool key --window "$win" ctrl+a; xdotool type --window "$win" "$tmp/window.png"
xdotool key --window "$win" Return
end=$(($(date +%s) + 15))
until [ -s "$tmp/window.png" ] && ! ls "$tmp"/.window.png.tmp* >/dev/null 2>&1; do
  [ "$(date +%s)" -lt "$end" ] || { echo "e2e: the window export wrote nothing"; shot export-failed; cp "$tmp/export-failed.png" /tmp/; exit 1; }
  sleep 0.1
done
wsd=$(convert "$tmp/window.png" -colorspace Gray -format '%[fx:standard_deviation]' info:)
echo "e2e: exported window $(identify -format '%wx%h' "$tmp/window.png"), grey-level std $wsd"
awk -v s="$wsd" 'BEGIN { exit !(s > 0.05) }' || { echo "e2e: the exported window is blank"; exit 1; }
kill -0 "$app" 2>/dev/null || { echo "e2e: the app died"; cat "$tmp/app.log"; exit 1; }
sd=$(convert "$tmp/before.png" -colorspace Gray -format '%[fx:standard_deviation]' info:)
echo "e2e: screenshot grey-level std $sd, pixels changed by 10 steps: $diff"
awk -v s="$sd" 'BEGIN { exit !(s > 0.05) }' || { echo "e2e: the window looks blank"; exit 1; }
if grep -qi 'panic\|fatal\|wrong thread\|not called on' "$tmp/app.log"; then
  echo "e2e: the app logged problems:"; cat "$tmp/app.log"; exit 1
fi
# SIGTERM closes the window as its close button does: the session is saved
# and the program ends at once.
kill -TERM "$app"
end=$(($(date +%s) + 10))
while kill -0 "$app" 2>/dev/null; do
  [ "$(date +%s)" -lt "$end" ] || { echo "e2e: SIGTERM did not end the window"; exit 1; }
  sleep 0.1
done
wait "$app" 2>/dev/null || true; app=
grep -rqs last_scenario "$XDG_CONFIG_HOME" || { echo "e2e: SIGTERM did not save the session"; exit 1; }
echo "e2e: SIGTERM closed the window and saved the session"
# A shipped lesson end to end by keys alone: presentation mode (F11), →
# through every slide and reveal, ← once, → again, then Esc leaves the
# lesson and the models stay; each key changes the window.
"$bin" --lesson transient-memory >"$tmp/lesson.log" 2>&1 &
app=$!
waitwin "$tmp/lesson.log"
waitfor "$tmp/lesson.log" 'lesson transient-memory: slide 1' || { echo "e2e: the lesson did not start:"; cat "$tmp/lesson.log"; exit 1; }
eval "$(xdotool getwindowgeometry --shell "$win")"
drawn lesson-pre || { echo "e2e: the lesson window stays blank"; exit 1; }
settle lesson-pre
xdotool mousemove --sync 640 10 windowfocus "$win" 2>/dev/null || true
xdotool key --window "$win" F11
waitchange lesson-pre lesson-f11 >/dev/null || { echo "e2e: F11 changed nothing"; exit 1; }
eval "$(xdotool getwindowgeometry --shell "$win")"
settle lesson-0
n=0
for k in Right Next Left Right Right; do # Next is PageDown
  xdotool key --window "$win" "$k"
  n=$((n + 1))
  d=$(waitchange "lesson-$((n - 1))" "lesson-$n") || { echo "e2e: lesson key $k changed nothing"; cp "$tmp"/lesson-*.png /tmp/; exit 1; }
  echo "e2e: lesson key $k: pixels changed $d"
  settle "lesson-$n" # the slides play at 10–20 steps/s
done
waitfor "$tmp/lesson.log" 'lesson transient-memory: slide 3 / 3' 20 || { echo "e2e: the lesson did not reach its last slide:"; cat "$tmp/lesson.log"; exit 1; }
xdotool key --window "$win" Escape
waitfor "$tmp/lesson.log" 'left the lesson transient-memory' || { echo "e2e: Esc did not leave the lesson:"; cat "$tmp/lesson.log"; exit 1; }
settle lesson-left
xdotool key --window "$win" Right # outside the lesson → steps the model
waitchange lesson-left lesson-stepped >/dev/null || { echo "e2e: → did not step after the lesson"; exit 1; }
if grep -qi 'panic\|fatal\|wrong thread\|not called on' "$tmp/lesson.log"; then
  echo "e2e: the lesson logged problems:"; cat "$tmp/lesson.log"; exit 1
fi
echo "e2e: lesson by keys: $(grep -c '^lesson ' "$tmp/lesson.log") slides shown, left with Esc"
kill "$app"; wait "$app" 2>/dev/null || true; app=
if "$bin" --lesson no-such-lesson >"$tmp/nolesson.log" 2>&1; then echo "e2e: --lesson no-such-lesson started"; exit 1; fi
grep -q 'neither a shipped lesson' "$tmp/nolesson.log" || { echo "e2e: --lesson no-such-lesson:"; cat "$tmp/nolesson.log"; exit 1; }
# --link: a link to a shipped lesson starts it; a bad link opens the
# window all the same (it says why in the window) and does not exit.
"$bin" --link 'http://localhost:8080/?lesson=masking' >"$tmp/link.log" 2>&1 &
app=$!
waitwin "$tmp/link.log"
waitfor "$tmp/link.log" 'lesson masking: slide 1' || { echo "e2e: --link did not start the lesson:"; cat "$tmp/link.log"; exit 1; }
kill "$app"; wait "$app" 2>/dev/null || true; app=
"$bin" --link 'http://localhost:8080/#s=not-a-scenario' >"$tmp/badlink.log" 2>&1 &
app=$!
waitwin "$tmp/badlink.log"
sleep 1
kill -0 "$app" 2>/dev/null || { echo "e2e: a bad --link ended the app:"; cat "$tmp/badlink.log"; exit 1; }
if grep -qi 'panic\|fatal' "$tmp/badlink.log"; then echo "e2e: a bad --link:"; cat "$tmp/badlink.log"; exit 1; fi
kill "$app"; wait "$app" 2>/dev/null || true; app=
echo "e2e: --link opened a lesson; a bad link kept the window"
"$bin" lesson export masking --out "$tmp/slides" >"$tmp/export.log" 2>&1 || { echo "e2e: lesson export failed:"; cat "$tmp/export.log"; exit 1; }
[ "$(identify -format '%wx%h' "$tmp/slides/slide-01-answer.png")" = 1920x1080 ] || { echo "e2e: lesson export: wrong image size"; exit 1; }
echo "e2e: lesson export: $(ls "$tmp/slides" | wc -l) files"
# The command line: every model on a few digits, Fig. 1 and Fig. 2.
"$bin" reproduce --model all --task mask --n 12 --steps 12 --out "$tmp/rep" >"$tmp/rep.log" 2>&1 ||
  { echo "e2e: reproduce --model all failed:"; cat "$tmp/rep.log"; exit 1; }
"$bin" reproduce --fig2 --n 12 --steps 12 --out "$tmp/rep" >>"$tmp/rep.log" 2>&1 ||
  { echo "e2e: reproduce --fig2 failed:"; cat "$tmp/rep.log"; exit 1; }
for f in fig1.png fig2.png fig2.csv fig2_summary.csv bsa-p2/curve.csv bsa-p4/curve.csv block/curve.csv vit/curve.csv \
  hopfield/curve.csv hopfield-classic/curve.csv; do
  [ -s "$tmp/rep/$f" ] || { echo "e2e: reproduce did not write $f"; cat "$tmp/rep.log"; exit 1; }
done
[ "$(wc -l <"$tmp/rep/vit/curve.csv")" -eq 7 ] || { echo "e2e: the ViT curve should have t = 0..5"; exit 1; }
[ "$(wc -l <"$tmp/rep/bsa-p2/tstar.csv")" -eq 13 ] || { echo "e2e: tstar.csv should have a row per digit (12)"; exit 1; }
if "$bin" reproduce --model all --n 2 --steps 2 --out "$tmp/rep" >/dev/null 2>&1; then
  echo "e2e: reproduce overwrote an existing fig1.png"; exit 1
fi
echo "e2e: reproduce ok: $(grep -c 't\* =' "$tmp/rep.log") curves"
# Under the POSIX locale Fyne has nothing to complain about; a refused flag
# names its range and writes nothing.
if LANG=C.UTF-8 LC_ALL=C "$bin" reproduce --steps 0 --out "$tmp/bad" 2>"$tmp/bad.log"; then
  echo "e2e: --steps 0 was accepted"; exit 1
fi
grep -q -- '--steps = 0 is out of range (allowed 1 … 1000)' "$tmp/bad.log" || { echo "e2e: --steps 0:"; cat "$tmp/bad.log"; exit 1; }
if grep -q 'Fyne error' "$tmp/bad.log"; then echo "e2e: Fyne logged a locale error:"; cat "$tmp/bad.log"; exit 1; fi
[ ! -e "$tmp/bad" ] || { echo "e2e: a refused command left $tmp/bad behind"; exit 1; }
echo "e2e: ok"
