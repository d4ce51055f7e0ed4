#!/usr/bin/env node
// knockwatch srt bridge: runs ONE command inside Anthropic's sandbox runtime (srt) and writes
// what the sandbox refused where the knockwatch ingest agent reads it:
//
//   <logs>/<agentId>/<commandId>.violations.jsonl  every violation record, as srt stores it,
//                                                  plus "commandId" and "agentId" (and "sessionId",
//                                                  "taskId" when the caller gave them)
//   <logs>/<agentId>/<commandId>.stderr.log        the command's stderr, then srt's
//                                                  <sandbox_violations> annotation
//   <logs>/<agentId>/<commandId>.strace            strace -f of the command (--strace)
//
// The srt CLI never prints violations: they live in the library's in-memory store, so this
// script uses the library itself. Usage:
//
//   node bridge.mjs --settings srt-settings.json --logs /var/log/knockwatch --agent ci-runner-7 \
//        [--command-id ID] [--session ID] [--task ID] [--cwd DIR] [--strace] [--canary PORT] [--json] \
//        -c 'curl -sv https://example.com'
//
// --session and --task are the caller's (a harness running an agent's session, one task a user's
// prompt): written into every record, they let detection count per task and session, as it does
// Claude Code's tool calls (rules' per: task).
//
// Without --json the command's stdout and stderr pass through and the bridge exits with the
// command's status. With --json both are captured and one JSON object describing the run is
// printed on stdout (the shape knockwatch's guard probes read); the exit status is then 0.
// --canary PORT serves a tiny HTTP page on 127.0.0.1:PORT while the command runs: the target a
// guard probe must not reach. Errors of the bridge itself exit 70 (usage 64).

import { SandboxManager } from '@anthropic-ai/sandbox-runtime';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';

const USAGE = 'usage: bridge.mjs --settings FILE --logs DIR --agent AGENT_ID [--command-id ID] '
  + '[--session ID] [--task ID] [--cwd DIR] [--strace] [--canary PORT] [--json] -c COMMAND';
const GRAIN = /^[A-Za-z0-9_.:-]{1,128}$/;
const ID = /^[A-Za-z0-9_-]{22,128}$/;
const AGENT = /^[A-Za-z0-9._-]{1,128}$/;
const CAPTURE_LIMIT = 64 * 1024;

function fail(code, message) {
  process.stderr.write(`knockwatch-srt-bridge: ${message}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const opts = { strace: false, json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(64, `${a} needs a value\n${USAGE}`);
      return argv[++i];
    };
    switch (a) {
      case '--settings': opts.settings = value(); break;
      case '--logs': opts.logs = value(); break;
      case '--agent': opts.agent = value(); break;
      case '--command-id': opts.commandId = value(); break;
      case '--session': opts.session = value(); break;
      case '--task': opts.task = value(); break;
      case '--cwd': opts.cwd = value(); break;
      case '--canary': opts.canary = Number(value()); break;
      case '--strace': opts.strace = true; break;
      case '--json': opts.json = true; break;
      case '-c': opts.command = value(); break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); process.exit(0); break;
      default: fail(64, `unknown argument ${JSON.stringify(a)}\n${USAGE}`);
    }
  }
  for (const k of ['settings', 'logs', 'agent', 'command']) {
    if (!opts[k]) fail(64, `--${k === 'command' ? 'c' : k} is required\n${USAGE}`);
  }
  if (!AGENT.test(opts.agent)) fail(64, `--agent must be 1-128 of [A-Za-z0-9._-], got ${JSON.stringify(opts.agent)}`);
  if (opts.commandId === undefined) opts.commandId = randomBytes(16).toString('base64url');
  if (!ID.test(opts.commandId)) fail(64, `--command-id must be 22-128 base64url characters, got ${JSON.stringify(opts.commandId)}`);
  for (const k of ['session', 'task']) {
    if (opts[k] !== undefined && !GRAIN.test(opts[k])) fail(64, `--${k} must be 1-128 of [A-Za-z0-9_.:-], got ${JSON.stringify(opts[k])}`);
  }
  if (opts.canary !== undefined && !(Number.isInteger(opts.canary) && opts.canary > 0 && opts.canary < 65536)) {
    fail(64, '--canary must be a TCP port');
  }
  return opts;
}

function loadSettings(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    fail(70, `cannot read settings ${file}: ${e.code ?? e.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    fail(70, `settings ${file} are not JSON: ${e.message}`);
  }
}

function shellQuote(s) {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function startCanary(port) {
  return new Promise((resolve, reject) => {
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Knockwatch-Canary': 'reached' });
      res.end('knockwatch canary reached\n');
    });
    server.on('error', reject);
    server.on('connect', (req, socket) => socket.end('HTTP/1.1 200 Connection established\r\n\r\n'));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

const opts = parseArgs(process.argv.slice(2));
const config = loadSettings(opts.settings);
const dir = path.join(opts.logs, opts.agent);
fs.mkdirSync(dir, { recursive: true });
const base = path.join(dir, opts.commandId);
const files = { violations: `${base}.violations.jsonl`, stderr: `${base}.stderr.log` };
if (opts.strace) files.strace = `${base}.strace`;

const violationsFd = fs.openSync(files.violations, 'a');
const stderrFd = fs.openSync(files.stderr, 'a');
let stderrText = '';
let stdoutText = '';
let violationCount = 0;
let canary;
let straceDir;

try {
  if (opts.canary !== undefined) canary = await startCanary(opts.canary);
  // log monitor on: filesystem denials are recorded too
  await SandboxManager.initialize(config, undefined, true);
} catch (e) {
  fail(70, `sandbox did not start: ${e instanceof Error ? e.message : String(e)}`);
}

const store = SandboxManager.getSandboxViolationStore();
let seen = store.getTotalCount();
store.subscribe(all => {
  // the store keeps the last 100 and calls back once per record: write the ones not yet written
  const total = store.getTotalCount();
  const fresh = all.slice(Math.max(0, all.length - (total - seen)));
  seen = total;
  for (const v of fresh) {
    // the strace file is the bridge's own: its open is no refusal of the command's
    if (straceDir && v.line.includes(straceDir)) continue;
    const record = {
      line: v.line,
      encodedCommand: v.encodedCommand,
      command: v.command,
      timestamp: (v.timestamp instanceof Date ? v.timestamp : new Date(v.timestamp ?? Date.now())).toISOString(),
      commandId: opts.commandId,
      agentId: opts.agent,
      ...(opts.session !== undefined && { sessionId: opts.session }),
      ...(opts.task !== undefined && { taskId: opts.task }),
    };
    fs.writeSync(violationsFd, JSON.stringify(record) + '\n');
    violationCount++;
  }
});

let inner = opts.command;
let custom;
if (opts.strace) {
  // strace runs inside the sandbox (so PIDs are the sandbox's) and writes into a fresh private
  // directory that is the only thing added to the command's writable paths
  straceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'knockwatch-strace-'));
  const out = path.join(straceDir, 'out');
  inner = `strace -f -qq -o ${shellQuote(out)} -- bash -c ${shellQuote(opts.command)}`;
  const fsConfig = config.filesystem ?? {};
  custom = { filesystem: { ...fsConfig, allowWrite: [...(fsConfig.allowWrite ?? []), straceDir] } };
}
const wrapped = await SandboxManager.wrapWithSandbox(inner, undefined, custom, undefined,
  { commandId: opts.commandId, commandText: opts.command });
const child = spawn(wrapped, {
  shell: true,
  cwd: opts.cwd ?? process.cwd(),
  stdio: ['ignore', 'pipe', 'pipe'],
});
child.stdout.on('data', b => {
  if (!opts.json) process.stdout.write(b);
  else if (stdoutText.length < CAPTURE_LIMIT) stdoutText += b.toString('utf8');
});
child.stderr.on('data', b => {
  fs.writeSync(stderrFd, b);
  if (!opts.json) process.stderr.write(b);
  if (stderrText.length < CAPTURE_LIMIT) stderrText += b.toString('utf8');
});
const exit = await new Promise(resolve => {
  child.on('error', e => resolve({ code: null, signal: null, error: e.message }));
  child.on('close', (code, signal) => resolve({ code, signal }));
});
if (straceDir) {
  try {
    fs.appendFileSync(files.strace, fs.readFileSync(path.join(straceDir, 'out')));
  } catch (e) {
    process.stderr.write(`knockwatch-srt-bridge: no strace output: ${e.code ?? e.message}\n`);
  }
  fs.rmSync(straceDir, { recursive: true, force: true });
}
// the proxy may report a refusal a moment after the client gave up
await new Promise(r => setTimeout(r, 100));
SandboxManager.cleanupAfterCommand();

let annotated = SandboxManager.annotateStderrWithSandboxFailures(opts.commandId, '');
if (straceDir) {
  annotated = annotated.split('\n').filter(l => !l.includes(straceDir)).join('\n');
}
if (annotated) fs.writeSync(stderrFd, annotated.endsWith('\n') ? annotated : annotated + '\n');
fs.closeSync(stderrFd);
fs.closeSync(violationsFd);
if (canary) canary.close();
await SandboxManager.reset();

if (opts.json) {
  process.stdout.write(JSON.stringify({
    commandId: opts.commandId,
    agentId: opts.agent,
    command: opts.command,
    exitCode: exit.code,
    signal: exit.signal,
    error: exit.error ?? null,
    stdout: stdoutText.slice(0, CAPTURE_LIMIT),
    stderr: stderrText.slice(0, CAPTURE_LIMIT),
    violations: violationCount,
    files,
  }) + '\n');
  process.exit(0);
}
process.exit(exit.code ?? 70);
