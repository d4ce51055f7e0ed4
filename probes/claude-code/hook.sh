#!/bin/sh
# knockwatch's Claude Code hook: `./knockwatch claude-code settings` prints the settings that run it
# on PreToolUse, PostToolUse and PostToolUseFailure of Bash. Usage: hook.sh LOGS AGENT
#
# Claude Code hands each hook one JSON object on stdin, its own record of the call (docs/FORMATS.md,
# claude-code); this appends it, as one line, to LOGS/AGENT/<session>.claude-code.jsonl, where
# ingest reads it. No JVM and no parser: the shell, flock and sed. The file's lock is held for the
# whole record, so the records of parallel tool calls never interleave, however long.
#
# The hook runs outside the sandbox, as the user; the session id is Claude Code's (its environment,
# not the record's text). It never blocks a tool call: on any problem it says so on stderr and exits 1,
# which Claude Code shows and goes on.
logs=$1
agent=$2
sid=$CLAUDE_CODE_SESSION_ID
case $sid in '' | *[!0-9A-Za-z_-]*) sid=unknown-session ;; esac
# the sandbox may write the project's directory: a log inside it would be the agent's to forge
for d in "$CLAUDE_PROJECT_DIR" "$PWD"; do
  case $d in '' | /) continue ;; esac
  case $logs/ in
    "$d"/*)
      echo "knockwatch: not recorded: $logs is inside $d, which Claude Code's sandbox can write (./knockwatch claude-code settings --logs DIR)" >&2
      exit 1 ;;
  esac
done
dir=$logs/$agent
[ -d "$dir" ] || mkdir -p -m 700 "$dir" || exit 1
exec 9>>"$dir/$sid.claude-code.jsonl" || exit 1
flock 9 || exit 1
# the record as it came, with a newline after it when it has none (one line a record, whatever the version)
exec sed -e '$a\' >&9
