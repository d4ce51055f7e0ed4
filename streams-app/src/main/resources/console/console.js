// knockwatch console. Every value from the API is attacker-influenced (hosts, paths, commands,
// summaries): it is only ever set as textContent, never parsed as HTML.
'use strict';

const KEY = 'knockwatch-token';
const $ = (id) => document.getElementById(id);

function token() { return sessionStorage.getItem(KEY); }

async function api(path) {
  const r = await fetch(path, { headers: { Authorization: 'Bearer ' + token() } });
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

function rows(table, items, fill) {
  const body = table.querySelector('tbody');
  body.replaceChildren();
  for (const item of items) {
    const tr = document.createElement('tr');
    fill(tr, item);
    body.appendChild(tr);
  }
}

function commandLink(td, id) {
  td.textContent = '';
  const a = document.createElement('a');
  a.href = '#';
  a.textContent = id;
  a.addEventListener('click', (e) => { e.preventDefault(); $('command').value = id; show(id); });
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
  for (const [label, value] of [['agent', s.agentId], ['role', s.role], ['first seen', s.firstSeen],
      ['last seen', s.lastSeen], ['events', s.events], ['refused', counts(s.targets)], ['reasons', counts(s.reasons)],
      ['sources', counts(s.sources)]]) {
    const dt = document.createElement('dt'); dt.textContent = label;
    const dd = document.createElement('dd'); dd.textContent = value == null ? '-' : String(value);
    dl.append(dt, dd);
  }
}

function strip(events) {
  const el = $('strip');
  el.replaceChildren();
  const times = events.map((e) => Date.parse(e.observedAt)).filter((t) => !isNaN(t));
  if (times.length === 0) { return; }
  const lo = Math.min(...times), hi = Math.max(...times), span = Math.max(1, hi - lo);
  for (const t of times) {
    const mark = document.createElement('span');
    mark.style.left = (((t - lo) / span) * 99).toFixed(2) + '%';
    el.appendChild(mark);
  }
}

async function show(id) {
  $('message').textContent = '';
  try {
    const t = await api('/api/v1/commands/' + encodeURIComponent(id));
    $('timeline').hidden = false;
    $('t-id').textContent = t.commandId;
    summary(t);
    strip(t.timeline || []);
    rows($('t-alerts'), Object.values(t.alerts || {}), (tr, a) => {
      cell(tr, a.status); cell(tr, a.severity, a.severity); cell(tr, a.rule); cell(tr, a.count); cell(tr, a.summary);
      runbook(cell(tr, ''), a);
    });
    $('t-omitted').textContent = t.omitted > 0 ? '(' + t.omitted + ' in the middle not kept)' : '';
    rows($('t-events'), t.timeline || [], (tr, e) => {
      cell(tr, e.observedAt); cell(tr, e.source); cell(tr, e.kind); cell(tr, e.action); cell(tr, target(e));
      cell(tr, e.reason);
    });
  } catch (err) {
    $('timeline').hidden = true;
    $('message').textContent = err.message;
  }
}

// deep links: #command=ID and #agent=GLOB&role=NAME, as every page (ConsoleLink) and Grafana's
// drill-down link them, and #/commands/ID, the form pages sent before
function linked() {
  const hash = location.hash.slice(1);
  const old = /^\/commands\/([^/?#&]+)$/.exec(hash);
  if (old) {
    try { return new URLSearchParams({ command: decodeURIComponent(old[1]) }); } catch (e) { return new URLSearchParams(); }
  }
  return new URLSearchParams(hash);
}

async function lists() {
  try {
    const firing = await api('/api/v1/alerts?status=firing');
    rows($('firing').querySelector('table'), firing.alerts || [], (tr, a) => {
      cell(tr, a.severity, a.severity); cell(tr, a.rule); commandLink(cell(tr, ''), a.commandId); cell(tr, a.count);
      cell(tr, a.summary); runbook(cell(tr, ''), a);
    });
    const q = new URLSearchParams({ limit: '50' });
    for (const k of ['agent', 'role']) { if (linked().get(k)) { q.set(k, linked().get(k)); } }
    const recent = await api('/api/v1/commands?' + q.toString());
    rows($('recent').querySelector('table'), recent.commands || [], (tr, c) => {
      commandLink(cell(tr, ''), c.commandId); cell(tr, c.agentId); cell(tr, c.role); cell(tr, c.events);
      cell(tr, c.alerts); cell(tr, c.lastSeen);
    });
  } catch (err) {
    $('message').textContent = err.message;
  }
}

function signedIn() {
  $('signin').hidden = true;
  $('search').hidden = false;
  $('app').hidden = false;
  lists();
  const id = linked().get('command');
  if (id) { $('command').value = id; show(id); }
}

function signOut(why) {
  sessionStorage.removeItem(KEY);
  $('signin').hidden = false;
  $('search').hidden = true;
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
  $('search').addEventListener('submit', (e) => { e.preventDefault(); show($('command').value.trim()); });
  $('signout').addEventListener('click', () => signOut(''));
  if (token()) { signedIn(); }
  // a link opened in a tab that already shows the console changes only the fragment
  window.addEventListener('hashchange', () => { if (token()) { signedIn(); } });
});
