#!/bin/sh
# Writes roomd(1), a roff man page, to stdout from a built roomd's own help:
# `roomd --help`, then `roomd COMMAND --help` for every subcommand (nested
# ones too, as each help's SUBCOMMANDS list names them), each verbatim under
# its own heading. So the page always matches the binary it ships with, and
# writing it needs no Swift build: `make install` and `make deb` run it on the
# binary they install (BIN). The date is SOURCE_DATE_EPOCH's when set (a
# reproducible package), else the binary's modification time.
#
#   scripts/manpage.sh .build/release/roomd [/etc/roomd] > roomd.1
set -eu
bin=${1:?usage: scripts/manpage.sh ROOMD_BINARY [CONFDIR]}
confdir=${2:-/etc/roomd}
[ -f "$bin" ] && [ -x "$bin" ] || { echo "manpage.sh: no roomd at $bin" >&2; exit 1; }
case $bin in */*) ;; *) bin=./$bin ;; esac

version=$("$bin" --version)
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(stat -c %Y "$bin")}" +%Y-%m-%d)

# Help text as roff: no-fill, backslashes and minus signs escaped, a leading
# dot or quote neutralised.
roff() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^[.']/\\\\\\&&/"; }

# The subcommands a help text lists: the first word of each entry line of
# its SUBCOMMANDS block (wrapped abstracts are indented deeper).
subcommands() {
  awk '/^SUBCOMMANDS:/ {on=1; next} on && /^$/ {exit} on && /^  [a-z][a-z0-9-]*( |$)/ {print $1}'
}

# One command's section, then its subcommands' (depth first).
section() {  # words of the command after "roomd"
  help=$("$bin" "$@" --help)
  echo ".SS \"roomd $*\""
  echo ".nf"
  printf '%s\n' "$help" | roff
  echo ".fi"
  for sub in $(printf '%s\n' "$help" | subcommands); do
    [ "$sub" = help ] || section "$@" "$sub"
  done
}

top=$("$bin" --help)
overview=$(printf '%s\n' "$top" | sed -n 's/^OVERVIEW: //p')
cat <<HEAD
.TH ROOMD 1 "$date" "$version" "User Commands"
.SH NAME
roomd \\- $(printf '%s\n' "$overview" | sed -e 's/^A /a /' -e 's/\.$//' | roff)
.SH SYNOPSIS
.B roomd
.RI [ subcommand ]
.RI [ options ]
.SH DESCRIPTION
roomd runs rooms of peers with roles, tracks, chat, polls and stream state
for live shows, over one WebSocket per peer (JSON\\-RPC), with a REST API for
the operator. Without a subcommand it serves (\\fBroomd serve\\fR). The other
subcommands mint tokens, check a template, join a room from a terminal, and
run a live daemon's rooms, peers, call\\-in queue, bans, stream and feed over
its REST API with a management token minted from the secret.
.SH OPTIONS
.nf
$(printf '%s\n' "$top" | sed -n '/^OPTIONS:/,/^$/p' | sed -e 1d -e '/^$/d' | roff)
.fi
.SH COMMANDS
HEAD
for sub in $(printf '%s\n' "$top" | subcommands); do
  [ "$sub" = help ] || section "$sub"
done
cat <<TAIL
.SH ENVIRONMENT
.TP
.B ROOMD_URL
The daemon the operator subcommands talk to (else http://127.0.0.1:7880).
.TP
.B ROOMD_SECRET_FILE
A file holding the HS256 secret (after \\fB\\-\\-secret\\-file\\fR).
.TP
.B ROOMD_SECRET
The HS256 secret itself, at least 32 bytes.
.SH FILES
.TP
.I $confdir/roles.json
The role template the service runs with.
.TP
.I $confdir/secret
The HS256 secret (mode 0600), handed to the service as a systemd credential.
.SH SEE ALSO
The README (in the package's documentation directory) and \\fBroomd help\\fR
.IR subcommand .
TAIL
