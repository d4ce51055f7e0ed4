// knockwatch console. Every value from the API is attacker-influenced (hosts, paths, commands,
// summaries): it is only ever set as textContent, never parsed as HTML.
'use strict';

const KEY = 'knockwatch-token';
const $ = (id) => document.getElementById(id);

function token() { return sessionStorage.getItem(KEY); }

// what a refused token says, at sign-in and whenever the API refuses the one in use
const REFUSED = 'The API refused this token (401 Unauthorized). Copy it again from the end of the api line that '
  + './knockwatch up printed, or from var/api-token in the directory up ran in, and sign in.';

// the API refused the token in use: the console has signed out and said so; nothing more to say
class SignedOut extends Error {}

async function api(path, method, payload) {
  const sent = token();
  const init = { method: method || 'GET', headers: { Authorization: 'Bearer ' + sent } };
  if (payload !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(payload); }
  let r;
  try {
    r = await fetch(path, init);
  } catch (e) {
    throw Object.assign(new Error('unreachable'), { unreachable: true });
  }
  // a refusal of a token no longer in use (signed out, or another signed in since) signs nobody out
  if (r.status === 401) { if (token() === sent) { signOut(REFUSED); } throw new SignedOut(); }
  const body = await r.json().catch(() => ({}));
  if (!r.ok) { throw Object.assign(new Error('HTTP ' + r.status), { status: r.status, said: typeof body.error === 'string' ? body.error : '' }); }
  return body;
}

// The message line: one sentence, what failed and what to do. Each view change and sign-in starts
// a new generation, which clears it; an answer that arrives later speaks only in its own generation.
let generation = 0;
function say(text, gen) { if (gen === undefined || gen === generation) { $('message').textContent = text; } }

function sentence(what, err, todo) {
  if (err.unreachable) {
    return what + ' failed: the console could not reach the query API. Check that ./knockwatch up is still running, then reload the page.';
  }
  const why = err.status ? 'the API answered ' + err.status + (err.said ? ' (' + visible(err.said).replace(/[.\s]+$/, '') + ')' : '')
    : 'the page met an error (' + err.message + ')';
  const next = todo || (err.status === 503 ? 'The timeline is catching up: reload the page in a few seconds.'
    : err.status === 429 ? 'This browser sent too many requests at once: wait a moment, then reload the page.'
    : 'Reload the page; if it fails again, read the output of ./knockwatch up.');
  return what + ' failed: ' + why + '. ' + next;
}

function failed(what, err, gen, todo) {
  if (!(err instanceof SignedOut)) { say(sentence(what, err, todo), gen); }
}

// an agent-written value's control and bidi characters as visible escapes (a U+202E shown as
// ⟨U+202E⟩): nothing a value holds can reorder or hide what the analyst reads
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
function visible(text) {
  return String(text).replace(CONTROLS, (c) => '⟨U+' + c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0') + '⟩');
}

// one value (an id, a time, a kind, host:port) in an element: on one line, cut with an ellipsis
// where it does not fit, the whole in its title
function value(el, text) {
  const t = text == null ? '-' : visible(text);
  el.classList.add('v');
  el.textContent = t;
  el.title = t;
  return el;
}

function cell(row, text, cls) {
  const td = document.createElement('td');
  td.textContent = text == null ? '-' : visible(text);
  if (cls) { td.className = cls; }
  row.appendChild(td);
  return td;
}

// a cell holding one value
function val(row, text, cls) {
  const td = cell(row, '', cls);
  td.replaceChildren(value(document.createElement('span'), text));
  return td;
}

// a cell of prose (a summary, a reason, what ran): wrapped, at most a few lines, then it scrolls
function prose(row, text, cls) {
  const td = cell(row, '', cls);
  const d = document.createElement('div');
  d.className = 'prose';
  d.textContent = text == null ? '-' : visible(text);
  td.replaceChildren(d);
  return td;
}

// a table in a box of its own that scrolls sideways: however wide its values make it, the page keeps its width
function scroller(table) {
  if (table.parentElement && table.parentElement.classList.contains('scroll')) { return table.parentElement; }
  const box = document.createElement('div');
  box.className = 'scroll';
  if (table.parentNode) { table.replaceWith(box); }
  box.appendChild(table);
  return box;
}

// the rows of a table, replaced, or one row that says there is none; a link the keyboard is on
// stays focused (the same text in the same column), so a refresh every 5 s does not throw a
// keyboard user back to the page's start
function rows(table, items, fill, none) {
  const body = table.querySelector('tbody');
  const focused = document.activeElement;
  const held = focused && focused.tagName === 'A' && body.contains(focused)
    ? { text: focused.textContent, column: focused.closest('td').cellIndex } : null;
  body.replaceChildren();
  for (const item of items) {
    const tr = document.createElement('tr');
    fill(tr, item);
    body.appendChild(tr);
  }
  if (items.length === 0 && none) {
    const tr = document.createElement('tr');
    tr.className = 'none';
    const td = document.createElement('td');
    td.colSpan = table.tHead && table.tHead.rows.length ? table.tHead.rows[0].cells.length : 1;
    td.textContent = none;
    tr.appendChild(td);
    body.appendChild(tr);
  }
  if (held) {
    const again = [...body.querySelectorAll('td a')]
      .find((a) => a.textContent === held.text && a.closest('td').cellIndex === held.column);
    if (again) { again.focus(); }
  }
}

// a command as a link that keeps the view's filters, so the URL can be shared and reloaded
function commandLink(td, id) {
  td.textContent = '';
  const a = document.createElement('a');
  const params = state();
  params.set('command', id);
  a.href = '#' + params.toString();
  value(a, id);
  td.appendChild(a);
}

// the rule's runbook (operator-written, an http(s) URL by the loader) as a link, and its tags
function runbook(td, a) {
  td.textContent = '';
  if (a.runbook && /^https?:\/\//.test(a.runbook)) {
    const link = document.createElement('a');
    link.href = a.runbook;
    link.rel = 'noopener noreferrer';
    link.target = '_blank';
    link.textContent = 'runbook';
    td.appendChild(link);
  }
  const tags = a.tags || [];
  if (tags.length) {
    const d = document.createElement('div');
    d.className = 'prose';
    d.textContent = visible(tags.join(', '));
    td.appendChild(d);
  }
  if (!td.firstChild) { td.textContent = '-'; }
}

function target(e) {
  if (e.host) { return e.port != null ? e.host + ':' + e.port : e.host; }
  return e.path || '-';
}

function summary(s) {
  const dl = $('t-summary');
  dl.replaceChildren();
  const counts = (m) => Object.entries(m || {}).map(([k, v]) => k + ' ×' + v).join(', ') || '-';
  // what was refused: each target a value on one line (cut with an ellipsis, whole in its title), then its count
  const targets = (dd, m) => {
    const list = Object.entries(m || {});
    if (list.length === 0) { dd.textContent = '-'; return; }
    list.forEach(([k, v], i) => dd.append(value(document.createElement('span'), k), ' ×' + v + (i < list.length - 1 ? ', ' : '')));
  };
  const last = (s.timeline || []).filter((e) => e.commandText).slice(-1)[0];
  for (const [label, shown] of [['command', last ? last.commandText : null], ['agent', s.agentId], ['role', s.role == null ? null : s.role + (s.roleAllows
        ? ' — allows ' + (s.roleAllows.join(', ') || 'no host') : '')],
      ['first seen', s.firstSeen],
      ['last seen', s.lastSeen], ['events', s.events], ['refused', s.targets], ['reasons', counts(s.reasons)],
      ['sources', counts(s.sources)]]) {
    const dt = document.createElement('dt'); dt.textContent = label;
    const dd = document.createElement('dd');
    if (label === 'refused') { targets(dd, shown); } else { dd.textContent = shown == null ? '-' : visible(shown); }
    dl.append(dt, dd);
  }
}

const WINDOW = 5 * 60e3;

function hms(t) { return new Date(t).toISOString().slice(11, 19) + 'Z'; }

// the events and alerts on a time axis: each refusal a mark by kind and source, each alert a mark
// at its first sighting with its rule and state, five-minute window boundaries, labelled ticks;
// every mark's tooltip is a title, set as text
function strip(events, alerts) {
  const el = $('strip');
  el.replaceChildren();
  const marks = events.map((e) => ({ t: Date.parse(e.observedAt), e })).filter((m) => !isNaN(m.t));
  const alertMarks = alerts.map((a) => ({ t: Date.parse(a.firstSeen), a })).filter((m) => !isNaN(m.t));
  const all = marks.concat(alertMarks).map((m) => m.t);
  if (all.length === 0) { return; }
  let lo = Math.min(...all), hi = Math.max(...all);
  const pad = Math.max(1000, (hi - lo) * 0.02);
  lo -= pad; hi += pad;
  const x = (t) => (((t - lo) / (hi - lo)) * 100).toFixed(2) + '%';
  const add = (cls, left, title, text) => {
    const s = document.createElement('span');
    s.className = cls;
    s.style.left = left;
    if (title) { s.title = title; }
    if (text) { s.textContent = text; }
    el.appendChild(s);
    return s;
  };
  for (let w = Math.ceil(lo / WINDOW) * WINDOW; w <= hi; w += WINDOW) { add('window', x(w), 'five-minute window from ' + hms(w)); }
  for (const [f, cls] of [[0, 'tick start'], [0.5, 'tick'], [1, 'tick end']]) { add(cls, x(lo + (hi - lo) * f), null, hms(lo + (hi - lo) * f)); }
  for (const m of marks) {
    const e = m.e;
    add('mark ' + (e.kind === 'filesystem' ? 'fs' : 'net'), x(m.t),
      e.observedAt + ' ' + (e.source || '') + ' ' + action(e) + ' ' + target(e) + (e.reason ? ' (' + e.reason + ')' : ''));
  }
  for (const m of alertMarks) {
    const a = m.a;
    add('alert-mark ' + (a.severity || ''), x(m.t), a.rule + ' ' + a.status + ' (' + a.severity + '), first seen ' + a.firstSeen
      + ', last seen ' + a.lastSeen + ', count ' + a.count, '▲');
  }
}

// what the wall did: its action word, and for a wall in audit or report mode that it let it through
function action(e) {
  return (e.action || '') + (e.enforced === false ? ' (audit mode: let through)' : '');
}

// the command's timeline; quiet: a refresh, which leaves an error of its own unsaid
async function show(id, quiet) {
  const gen = generation;
  try {
    const t = await api('/api/v1/commands/' + encodeURIComponent(id));
    if (gen !== generation) { return; }
    $('timeline').hidden = false;
    value($('t-id'), t.commandId);
    summary(t);
    strip(t.timeline || [], Object.values(t.alerts || {}));
    rows($('t-alerts'), Object.values(t.alerts || {}), (tr, a) => {
      val(tr, a.status); val(tr, a.severity, a.severity || ''); val(tr, a.rule); when(cell(tr, ''), a.firstSeen);
      when(cell(tr, ''), a.lastSeen); cell(tr, a.count); prose(tr, a.summary); runbook(cell(tr, ''), a);
    }, 'No alert of this command.');
    $('t-omitted').textContent = t.omitted > 0 ? '(' + t.omitted + ' in the middle not kept)' : '';
    rows($('t-events'), t.timeline || [], (tr, e) => {
      val(tr, e.observedAt); val(tr, e.source); val(tr, e.kind); val(tr, action(e)); val(tr, target(e), 'long');
      prose(tr, e.reason); prose(tr, e.commandText);
      raw(cell(tr, ''), e);
    }, 'No event of this command is kept.');
  } catch (err) {
    if (!quiet && gen === generation) {
      $('timeline').hidden = true;
      const todo = err.status === 400 ? 'Check the id: a command id is 22 to 128 letters, digits and . _ : - (copy it from an alert, a page or Recent commands).'
        : err.status === 404 ? 'Check the id, or pick a command from Recent commands: the timeline keeps a command until it has been idle for --timeline-retention (30 days unless set).'
        : undefined;
      failed('Showing command ' + visible(id), err, gen, todo);
    }
  }
}

// where the event was read (file@offset, and the ingest host), opening to the whole stored event, as text
function raw(td, e) {
  td.textContent = '';
  const d = document.createElement('details');
  const s = document.createElement('summary');
  value(s.appendChild(document.createElement('span')), e.origin
    ? e.origin.file + '@' + e.origin.offset + (e.origin.ingestHost ? ' on ' + e.origin.ingestHost : '') : 'the event');
  const pre = document.createElement('pre');
  pre.className = 'raw';
  // the same JSON, its bidi and invisible characters written as \u escapes: the same value, shown as it is
  pre.textContent = JSON.stringify(e, null, 2).replace(/[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
  d.append(s, pre);
  td.appendChild(d);
}

// The view's state lives in the URL fragment (#status=firing&agent=ci-*&command=ID ...), so any
// view can be shared and reloaded; #command=ID and #agent=GLOB&role=NAME are what pages
// (ConsoleLink) and Grafana's drill-down link, and #/commands/ID the form pages sent before.
function linked() {
  const hash = location.hash.slice(1);
  const old = /^\/commands\/([^/?#&]+)$/.exec(hash);
  if (old) {
    try { return new URLSearchParams({ command: decodeURIComponent(old[1]) }); } catch (e) { return new URLSearchParams(); }
  }
  return new URLSearchParams(hash);
}

const SEVERITIES = ['critical', 'page', 'warning', 'info'];
// the alerts' groups, in this order: by severity, then any without one, then the shadow rules' (never notified)
const GROUPS = [...SEVERITIES, 'no severity', 'shadow'];
const groupOf = (a) => (a.shadow ? 'shadow' : SEVERITIES.includes(a.severity) ? a.severity : 'no severity');
const RANGES = { '15m': 15 * 60e3, '1h': 3600e3, '24h': 86400e3, '7d': 7 * 86400e3 };

function checkedSeverities() {
  return [...document.querySelectorAll('#filters input[name=severity]')].filter((c) => c.checked).map((c) => c.value);
}

// the filters' state as URL parameters (defaults left out), with the command shown, if any
function state() {
  const p = new URLSearchParams({ view: 'alerts' });
  if ($('f-status').value !== 'firing') { p.set('status', $('f-status').value || 'any'); }
  const sev = checkedSeverities();
  if (sev.length !== SEVERITIES.length) { p.set('severity', sev.join(',')); }
  for (const [k, id] of [['rule', 'f-rule'], ['agent', 'f-agent'], ['role', 'f-role'], ['range', 'f-range']]) {
    if ($(id).value.trim()) { p.set(k, $(id).value.trim()); }
  }
  if ($('f-probes').checked) { p.set('probes', '1'); }
  if (!$('f-refresh').checked) { p.set('refresh', '0'); }
  const shown = linked().get('command');
  if (shown) { p.set('command', shown); }
  return p;
}

// the URL's state into the filters
function restore(p) {
  const status = p.get('status');
  $('f-status').value = status === 'any' ? '' : (status === 'resolved' ? 'resolved' : 'firing');
  const sev = p.has('severity') ? p.get('severity').split(',') : SEVERITIES;
  document.querySelectorAll('#filters input[name=severity]').forEach((c) => { c.checked = sev.includes(c.value); });
  $('f-rule').value = p.get('rule') || '';
  $('f-agent').value = p.get('agent') || '';
  $('f-role').value = p.get('role') || '';
  $('f-range').value = RANGES[p.get('range')] ? p.get('range') : '';
  $('f-probes').checked = p.get('probes') === '1';
  $('f-refresh').checked = p.get('refresh') !== '0';
}

function query(extra) {
  const q = new URLSearchParams(extra);
  const p = state();
  for (const k of ['rule', 'agent', 'role']) { if (p.get(k)) { q.set(k, p.get(k)); } }
  if (RANGES[p.get('range')]) { q.set('since', new Date(Date.now() - RANGES[p.get('range')]).toISOString()); }
  if (!$('f-probes').checked) { q.set('probes', 'false'); }
  return q;
}

function alertRow(tr, a) {
  if (a.probe) { tr.className = 'probe'; }
  const rule = cell(tr, '', 'rule');
  const name = document.createElement('span');
  name.className = 'name';
  value(name, a.rule);
  rule.replaceChildren(name);
  for (const [flag, text] of [[a.probe, 'probe'], [a.shadow, 'shadow · ' + (a.severity || '-')]]) {
    if (flag) { const b = document.createElement('span'); b.className = 'badge'; b.textContent = text; rule.appendChild(b); }
  }
  val(tr, a.status); val(tr, a.agentId); val(tr, a.role); commandLink(cell(tr, ''), a.commandId);
  when(cell(tr, ''), a.firstSeen); when(cell(tr, ''), a.lastSeen); cell(tr, a.count, 'short');
  val(tr, a.fingerprint, 'wide');
  prose(tr, a.summary);
  runbook(cell(tr, ''), a);
  button(cell(tr, ''), 'silence…', () => silenceFrom(a));
}

// a cell holding one button (its label set as text), or nothing when no action is given
function button(td, label, action) {
  td.textContent = '';
  if (!action) { return; }
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = label;
  b.addEventListener('click', action);
  td.appendChild(b);
}

// an instant to the second, on one line; the full value in its tooltip (the cell's and the value's)
function when(td, iso) {
  if (!iso) { td.textContent = '-'; return; }
  const v = value(document.createElement('span'), String(iso).replace('T', ' ').replace(/\.\d+Z$/, 'Z'));
  v.title = td.title = visible(iso);
  td.replaceChildren(v);
}

const ALERT_COLUMNS = ['rule', 'status', 'agent', 'role', 'command', 'first seen', 'last seen', 'count', 'fingerprint',
  'summary', 'runbook, tags', ''];

// the new-silence form, prefilled from an alert: its rule and command (agent and role left to add)
function silenceFrom(a) {
  $('silence').hidden = false;
  $('s-rule').value = a.rule || '';
  $('s-commandId').value = a.commandId || '';
  $('s-agentId').value = '';
  $('s-role').value = '';
  $('s-comment').focus();
}

// the silences, active and pending first as the API lists them; an expired one stays a day
async function silences() {
  const list = await api('/api/v1/silences');
  const shown = (list.silences || []).filter((s) => s.state !== 'expired' || Date.now() - Date.parse(s.endsAt) < 86400e3);
  rows($('silences').querySelector('table'), shown, (tr, s) => {
    val(tr, s.state);
    prose(tr, Object.entries(s.matchers || {}).map(([k, v]) => k + '=' + v).join(', '));
    when(cell(tr, ''), s.startsAt); when(cell(tr, ''), s.endsAt); val(tr, s.createdBy); prose(tr, s.comment);
    button(cell(tr, ''), 'expire', s.state === 'expired' ? null : async () => {
      const gen = generation;
      try {
        await api('/api/v1/silences/' + encodeURIComponent(s.id), 'DELETE');
        await silences();
      } catch (err) {
        failed('Expiring the silence', err, gen);
      }
    });
  }, 'No silence is active, pending or expired within the last day.');
}

async function silence(e) {
  e.preventDefault();
  const gen = generation;
  const matchers = {};
  for (const k of ['rule', 'commandId', 'agentId', 'role']) {
    const v = $('s-' + k).value.trim();
    if (v) { matchers[k] = v; }
  }
  try {
    const s = await api('/api/v1/silences', 'POST', { matchers, duration: $('s-duration').value,
      createdBy: $('s-by').value.trim(), comment: $('s-comment').value.trim() });
    say('Silenced until ' + s.endsAt + '.', gen);
    $('silence').hidden = true;
    $('silence-form').reset();
    await silences();
  } catch (err) {
    failed('Creating the silence', err, gen, err.status === 400 ? 'Correct the form and press Silence again.' : undefined);
  }
}

// the alerts, one table per severity (most severe first, as the API sorts them); a table that
// already exists keeps its place and only its rows are replaced, so a refresh does not move the page
function alertGroups(alerts) {
  const groups = $('alert-groups');
  $('alerts-none').hidden = alerts.length > 0;
  for (const sev of GROUPS) {
    const mine = alerts.filter((a) => groupOf(a) === sev);
    let section = groups.querySelector('section[data-severity="' + sev + '"]');
    if (mine.length === 0) { if (section) { section.remove(); } continue; }
    if (!section) {
      section = document.createElement('section');
      section.className = 'group';
      section.dataset.severity = sev;
      const h = document.createElement('h3');
      const table = document.createElement('table');
      const head = document.createElement('tr');
      for (const c of ALERT_COLUMNS) {
        const th = document.createElement('th'); th.textContent = c; if (c === 'fingerprint') { th.className = 'wide'; }
        head.appendChild(th);
      }
      table.append(document.createElement('thead'), document.createElement('tbody'));
      table.tHead.appendChild(head);
      section.append(h, scroller(table));
      const next = GROUPS.slice(GROUPS.indexOf(sev) + 1)
        .map((s) => groups.querySelector('section[data-severity="' + s + '"]')).find((x) => x);
      groups.insertBefore(section, next || null);
    }
    section.querySelector('h3').textContent = sev + ' (' + mine.length + ')'
      + (sev === 'shadow' ? ': rules in shadow mode, raised and listed, never notified' : '');
    section.querySelector('h3').className = sev === 'no severity' ? '' : sev;
    rows(section.querySelector('table'), mine, alertRow);
  }
}

async function lists() {
  const gen = generation;
  try {
    const q = query({ limit: '500' });
    const status = $('f-status').value;
    if (status) { q.set('status', status); }
    const sev = checkedSeverities();
    if (sev.length !== SEVERITIES.length) { q.set('severity', sev.join(',') || 'none'); }
    const alerts = sev.length === 0 ? { alerts: [] } : await api('/api/v1/alerts?' + q.toString());
    alertGroups(alerts.alerts || []);
    // a query API without the silences (a streams stage apart from notify) has no such section
    await silences().then(() => { $('silences').hidden = false; }, () => { $('silences').hidden = true; });
    const recent = await api('/api/v1/commands?' + query({ limit: '50' }).toString());
    rows($('recent').querySelector('table'), recent.commands || [], (tr, c) => {
      if (c.probe) { tr.className = 'probe'; }
      commandLink(cell(tr, ''), c.commandId); val(tr, c.agentId); val(tr, c.role); cell(tr, c.events);
      cell(tr, c.alerts); when(cell(tr, ''), c.lastSeen);
    }, 'No command matches.');
  } catch (err) {
    failed('Loading the alerts and recent commands', err, gen);
  }
}

// a filter changed: into the URL (replacing the entry, not adding one per keystroke), then the lists
function filtered() {
  history.replaceState(null, '', '#' + state().toString());
  lists();
}

// The views: the overview (the landing view), the alerts with a command's timeline, and
// discovery. #view=NAME names one; a fragment with filters or a command (what pages and Grafana
// link to) is the alerts view.
const VIEWS = ['overview', 'alerts', 'discover'];
function viewOf(p) {
  if (VIEWS.includes(p.get('view'))) { return p.get('view'); }
  return [...p.keys()].length > 0 ? 'alerts' : 'overview';
}

function showView(view) {
  for (const el of document.querySelectorAll('main > [data-view]')) { el.hidden = el.dataset.view !== view; }
  for (const a of document.querySelectorAll('#views a')) {
    if (a.dataset.view === view) { a.setAttribute('aria-current', 'page'); } else { a.removeAttribute('aria-current'); }
  }
}

let refresher = null;

// the token tried before anything of the signed-in views shows: a refused one leaves the sign-in as it was
async function signIn() {
  const candidate = $('token').value.trim();
  const gen = ++generation;
  if (!candidate) { say('Signing in needs the API token: paste it into the field (where it is: see below).', gen); return; }
  let r;
  try {
    r = await fetch('/api/v1/commands?limit=1', { headers: { Authorization: 'Bearer ' + candidate } });
  } catch (e) {
    say(sentence('Signing in', { unreachable: true }), gen);
    return;
  }
  if (gen !== generation) { return; }
  if (r.status === 401) { say(REFUSED, gen); $('token').select(); return; }
  sessionStorage.setItem(KEY, candidate);
  $('token').value = '';
  signedIn();
}
function refreshing() {
  clearInterval(refresher);
  refresher = $('f-refresh').checked ? setInterval(() => {
    if (!token()) { return; }
    const p = linked();
    const view = viewOf(p);
    if (view === 'overview') { overviewView(true); return; }
    if (view !== 'alerts') { return; }
    lists();
    const id = p.get('command');
    if (id && !$('timeline').hidden) { show(id, true); }
  }, 5000) : null;
}

function signedIn() {
  generation++;
  say('');
  $('signin').hidden = true;
  $('search').hidden = false;
  $('views').hidden = false;
  $('app').hidden = false;
  const p = linked();
  const view = viewOf(p);
  showView(view);
  restore(p);
  refreshing();
  if (view === 'overview') { overviewView(); return; }
  if (view === 'discover') { discoverView(p); return; }
  lists();
  const id = p.get('command');
  if (id) { $('command').value = id; show(id); } else { $('timeline').hidden = true; }
}

function signOut(why) {
  generation++;
  clearInterval(refresher);
  sessionStorage.removeItem(KEY);
  $('signin').hidden = false;
  $('search').hidden = true;
  $('views').hidden = true;
  $('app').hidden = true;
  $('message').textContent = why || '';
}

document.addEventListener('DOMContentLoaded', () => {
  document.querySelectorAll('main table').forEach(scroller);
  $('signin-form').addEventListener('submit', (e) => { e.preventDefault(); signIn(); });
  $('search').addEventListener('submit', (e) => {
    e.preventDefault();
    const p = state();
    p.set('command', $('command').value.trim());
    location.hash = p.toString();
  });
  $('filters').addEventListener('submit', (e) => e.preventDefault());
  $('silence-form').addEventListener('submit', silence);
  $('s-cancel').addEventListener('click', () => { $('silence').hidden = true; });
  $('filters').addEventListener('change', (e) => { if (e.target.id === 'f-refresh') { refreshing(); } filtered(); });
  let typing = null;
  $('filters').addEventListener('input', (e) => {
    if (e.target.type !== 'text') { return; }
    clearTimeout(typing);
    typing = setTimeout(filtered, 300);
  });
  $('signout').addEventListener('click', () => { clearInterval(refresher); signOut(''); });
  if (token()) { signedIn(); }
  // a link opened in a tab that already shows the console changes only the fragment
  window.addEventListener('hashchange', () => { if (token()) { signedIn(); } });
});
