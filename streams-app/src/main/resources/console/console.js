// knockwatch console. Every value from the API is attacker-influenced (hosts, paths, commands,
// summaries): it is only ever set as textContent, never parsed as HTML.
'use strict';

const KEY = 'knockwatch-token';
const $ = (id) => document.getElementById(id);

function token() { return sessionStorage.getItem(KEY); }

async function api(path, method, payload) {
  const init = { method: method || 'GET', headers: { Authorization: 'Bearer ' + token() } };
  if (payload !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(payload); }
  const r = await fetch(path, init);
  if (r.status === 401) { signOut('The token was refused.'); throw new Error('401'); }
  const body = await r.json().catch(() => ({}));
  if (!r.ok) { throw new Error(body.error || ('HTTP ' + r.status)); }
  return body;
}

function cell(row, text, cls) {
  const td = document.createElement('td');
  td.textContent = text == null ? '-' : String(text);
  if (cls) { td.className = cls; }
  row.appendChild(td);
  return td;
}

// the rows of a table, replaced; a link the keyboard is on stays focused (the same text in the
// same column), so a refresh every 5 s does not throw a keyboard user back to the page's start
function rows(table, items, fill) {
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
  a.textContent = id;
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
  if (tags.length) { td.appendChild(document.createTextNode((td.firstChild ? ' ' : '') + tags.join(', '))); }
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
  const last = (s.timeline || []).filter((e) => e.commandText).slice(-1)[0];
  for (const [label, value] of [['command', last ? last.commandText : null], ['agent', s.agentId], ['role', s.role == null ? null : s.role + (s.roleAllows
        ? ' — allows ' + (s.roleAllows.join(', ') || 'no host') : '')],
      ['first seen', s.firstSeen],
      ['last seen', s.lastSeen], ['events', s.events], ['refused', counts(s.targets)], ['reasons', counts(s.reasons)],
      ['sources', counts(s.sources)]]) {
    const dt = document.createElement('dt'); dt.textContent = label;
    const dd = document.createElement('dd'); dd.textContent = value == null ? '-' : String(value);
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
      e.observedAt + ' ' + (e.source || '') + ' ' + (e.action || '') + ' ' + target(e) + (e.reason ? ' (' + e.reason + ')' : ''));
  }
  for (const m of alertMarks) {
    const a = m.a;
    add('alert-mark ' + (a.severity || ''), x(m.t), a.rule + ' ' + a.status + ' (' + a.severity + '), first seen ' + a.firstSeen
      + ', last seen ' + a.lastSeen + ', count ' + a.count, '▲');
  }
}

// the command's timeline; quiet: a refresh, which leaves an error of its own unsaid
async function show(id, quiet) {
  if (!quiet) { $('message').textContent = ''; }
  try {
    const t = await api('/api/v1/commands/' + encodeURIComponent(id));
    $('timeline').hidden = false;
    $('t-id').textContent = t.commandId;
    summary(t);
    strip(t.timeline || [], Object.values(t.alerts || {}));
    rows($('t-alerts'), Object.values(t.alerts || {}), (tr, a) => {
      cell(tr, a.status, 'short'); cell(tr, a.severity, (a.severity || '') + ' short'); cell(tr, a.rule, 'short'); when(cell(tr, ''), a.firstSeen);
      when(cell(tr, ''), a.lastSeen); cell(tr, a.count); cell(tr, a.summary); runbook(cell(tr, ''), a);
    });
    $('t-omitted').textContent = t.omitted > 0 ? '(' + t.omitted + ' in the middle not kept)' : '';
    rows($('t-events'), t.timeline || [], (tr, e) => {
      cell(tr, e.observedAt); cell(tr, e.source); cell(tr, e.kind); cell(tr, e.action); cell(tr, target(e));
      cell(tr, e.reason); cell(tr, e.commandText);
      raw(cell(tr, ''), e);
    });
  } catch (err) {
    if (!quiet) {
      $('timeline').hidden = true;
      $('message').textContent = err.message;
    }
  }
}

// where the event was read (file@offset, and the ingest host), opening to the whole stored event, as text
function raw(td, e) {
  td.textContent = '';
  const d = document.createElement('details');
  const s = document.createElement('summary');
  s.textContent = e.origin ? e.origin.file + '@' + e.origin.offset + (e.origin.ingestHost ? ' on ' + e.origin.ingestHost : '')
    : 'the event';
  const pre = document.createElement('pre');
  pre.className = 'raw';
  pre.textContent = JSON.stringify(e, null, 2);
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
  name.textContent = a.rule == null ? '-' : String(a.rule);
  rule.replaceChildren(name);
  for (const [flag, text] of [[a.probe, 'probe'], [a.shadow, 'shadow · ' + (a.severity || '-')]]) {
    if (flag) { const b = document.createElement('span'); b.className = 'badge'; b.textContent = text; rule.appendChild(b); }
  }
  cell(tr, a.status, 'short'); cell(tr, a.agentId, 'short'); cell(tr, a.role, 'short'); commandLink(cell(tr, ''), a.commandId);
  when(cell(tr, ''), a.firstSeen); when(cell(tr, ''), a.lastSeen); cell(tr, a.count, 'short');
  cell(tr, a.fingerprint, 'wide short');
  cell(tr, a.summary);
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

// an instant to the second, date and time apart so the cell wraps between them; the full value in its tooltip
function when(td, iso) {
  if (!iso) { td.textContent = '-'; return; }
  td.textContent = iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  td.title = iso;
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
    cell(tr, s.state, 'short');
    cell(tr, Object.entries(s.matchers || {}).map(([k, v]) => k + '=' + v).join(', '));
    when(cell(tr, ''), s.startsAt); when(cell(tr, ''), s.endsAt); cell(tr, s.createdBy); cell(tr, s.comment);
    button(cell(tr, ''), 'expire', s.state === 'expired' ? null : async () => {
      try {
        await api('/api/v1/silences/' + encodeURIComponent(s.id), 'DELETE');
        await silences();
      } catch (err) {
        $('message').textContent = err.message;
      }
    });
  });
}

async function silence(e) {
  e.preventDefault();
  const matchers = {};
  for (const k of ['rule', 'commandId', 'agentId', 'role']) {
    const v = $('s-' + k).value.trim();
    if (v) { matchers[k] = v; }
  }
  try {
    const s = await api('/api/v1/silences', 'POST', { matchers, duration: $('s-duration').value,
      createdBy: $('s-by').value.trim(), comment: $('s-comment').value.trim() });
    $('message').textContent = 'Silenced until ' + s.endsAt + '.';
    $('silence').hidden = true;
    $('silence-form').reset();
    await silences();
  } catch (err) {
    $('message').textContent = err.message;
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
      section.append(h, table);
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
      commandLink(cell(tr, ''), c.commandId); cell(tr, c.agentId); cell(tr, c.role); cell(tr, c.events);
      cell(tr, c.alerts); cell(tr, c.lastSeen);
    });
  } catch (err) {
    $('message').textContent = err.message;
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
  sessionStorage.removeItem(KEY);
  $('signin').hidden = false;
  $('search').hidden = true;
  $('views').hidden = true;
  $('app').hidden = true;
  $('message').textContent = why || '';
}

document.addEventListener('DOMContentLoaded', () => {
  $('signin-form').addEventListener('submit', (e) => {
    e.preventDefault();
    sessionStorage.setItem(KEY, $('token').value.trim());
    $('token').value = '';
    signedIn();
  });
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
