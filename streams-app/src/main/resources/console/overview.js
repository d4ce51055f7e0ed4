// knockwatch console: the overview (the landing view) and the Discover view. As in console.js,
// every value from the API is set as text, never parsed as HTML; the chart (uPlot, vendored from
// its WebJar) draws on a canvas, and its text alternative is a summary and a table.
'use strict';

const SEVERITY_ORDER = ['critical', 'page', 'warning', 'info'];
// one colour per address class, readable on a light and a dark background
const CLASS_COLOURS = {
  'public': '#3b82f6', '-': '#8b5cf6', 'private': '#14b8a6', 'cgnat': '#0ea5e9', 'loopback': '#f59e0b',
  'link-local': '#ef4444', 'cloud-metadata': '#dc2626', 'this-host': '#f97316', 'unspecified': '#a3a3a3',
  'multicast': '#84cc16', 'broadcast': '#65a30d', 'reserved': '#78716c', 'deny-listed': '#e11d48',
  'listed': '#be123c', 'non-loopback': '#d946ef', 'unknown': '#64748b',
};
const KIND_DASH = { 'network': null, 'filesystem': [6, 3], 'unix-socket': [2, 3], 'process': [10, 3, 2, 3] };

// a series ("network/cloud-metadata": a kind and an address class) in words
const KIND_WORDS = { 'network': 'network', 'filesystem': 'file', 'unix-socket': 'unix-socket', 'process': 'process' };
const CLASS_WORDS = {
  '-': 'host names', 'public': 'public addresses', 'private': 'private addresses', 'cgnat': 'carrier-grade NAT addresses',
  'loopback': 'loopback addresses', 'link-local': 'link-local addresses', 'cloud-metadata': 'the cloud metadata address',
  'this-host': 'the sandbox host\'s own addresses', 'unspecified': 'the unspecified address', 'multicast': 'multicast addresses',
  'broadcast': 'broadcast addresses', 'reserved': 'reserved addresses', 'deny-listed': 'deny-listed addresses',
  'listed': 'addresses denied by IP', 'non-loopback': 'non-loopback addresses of a loopback name',
  'unknown': 'addresses of no known class',
};
function seriesLabel(name) {
  const [kind, cls] = name.split('/');
  const refusals = (KIND_WORDS[kind] || kind) + ' refusals';
  if (cls === undefined || (cls === '-' && kind !== 'network')) { return refusals; }
  return refusals + ' to ' + (CLASS_WORDS[cls] || cls + ' addresses');
}

function link(td, text, href) {
  td.textContent = '';
  const a = document.createElement('a');
  a.href = href;
  value(a, text);
  td.appendChild(a);
}

function alertsLink(params) {
  return '#' + new URLSearchParams(Object.assign({ view: 'alerts', status: 'any', range: '24h' }, params)).toString();
}

let plot = null;

function colours() {
  const style = getComputedStyle(document.body);
  return { text: style.color, grid: style.getPropertyValue('--grid').trim() || 'rgba(128,128,128,0.25)' };
}

// the refusals per minute as lines, one per kind and class; redrawn from scratch at each refresh
function chart(o) {
  const el = $('o-chart');
  const names = Object.keys(o.series || {});
  const xs = [];
  for (let i = 0; i < o.minutes; i++) { xs.push(o.start / 1000 + i * 60); }
  const data = [xs, ...names.map((n) => o.series[n])];
  const c = colours();
  const axis = { stroke: c.text, grid: { stroke: c.grid, width: 1 }, ticks: { stroke: c.grid, width: 1 } };
  const opts = {
    width: Math.max(300, el.clientWidth || 800),
    height: 240,
    scales: { x: { time: true }, y: { range: (u, lo, hi) => [0, Math.max(1, hi)] } },
    axes: [Object.assign({}, axis), Object.assign({ label: 'refusals per minute' }, axis)],
    series: [{ label: 'time (UTC)', value: (u, v) => v == null ? '-' : new Date(v * 1000).toISOString().slice(11, 16) + 'Z' }]
      .concat(names.map((n) => {
        const [kind, cls] = n.split('/');
        return { label: seriesLabel(n), stroke: CLASS_COLOURS[cls] || '#64748b', width: 1.5, dash: KIND_DASH[kind] || undefined,
          points: { show: false } };
      })),
    // the legend names the series; the counts of a minute are the table's (live values read "--" off the chart)
    legend: { show: true, live: false },
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
  };
  if (plot) { plot.destroy(); plot = null; }
  el.replaceChildren();
  if (typeof uPlot === 'undefined') { el.textContent = 'The chart library did not load; the table below holds the same counts.'; return; }
  plot = new uPlot(opts, data, el);
}

// the chart's text alternative: a sentence, and the counts per hour as a table
function summaryOf(o) {
  const names = Object.keys(o.series || {});
  let peak = 0, peakAt = null;
  for (let i = 0; i < o.minutes; i++) {
    const sum = names.reduce((acc, n) => acc + o.series[n][i], 0);
    if (sum > peak) { peak = sum; peakAt = o.start + i * 60e3; }
  }
  const totals = names.map((n) => [n, o.series[n].reduce((a, b) => a + b, 0)]).sort((a, b) => b[1] - a[1]);
  $('o-summary').textContent = o.refusals === 0 ? 'No refusal in the last 24 hours.'
    : o.refusals + ' refusals in the last 24 hours; the busiest minute ' + new Date(peakAt).toISOString().slice(11, 16)
      + 'Z with ' + peak + '. By kind and class: ' + totals.map(([n, t]) => seriesLabel(n) + ' ' + t).join(', ') + '.';
  const table = $('o-table');
  const head = document.createElement('tr');
  for (const h of ['hour (UTC)', ...names.map(seriesLabel)]) { const th = document.createElement('th'); th.textContent = h; head.appendChild(th); }
  table.tHead.replaceChildren(head);
  const hours = [];
  for (let i = 0; i < o.minutes; i += 60) {
    const row = { at: o.start + i * 60e3, counts: names.map((n) => o.series[n].slice(i, i + 60).reduce((a, b) => a + b, 0)) };
    if (row.counts.some((x) => x > 0)) { hours.push(row); }
  }
  rows(table, hours, (tr, h) => {
    val(tr, new Date(h.at).toISOString().slice(0, 16).replace('T', ' ') + 'Z');
    for (const n of h.counts) { cell(tr, n); }
  }, 'No refusal in the last 24 hours.');
}

function severities(o) {
  const box = $('o-severities');
  box.replaceChildren();
  const sev = o.severities || {};
  const names = SEVERITY_ORDER.concat(Object.keys(sev).filter((s) => !SEVERITY_ORDER.includes(s)));
  for (const s of names) {
    const a = document.createElement('a');
    a.className = 'card ' + (SEVERITY_ORDER.includes(s) ? s : '');
    a.href = alertsLink({ severity: s });
    a.dataset.severity = s;
    const n = document.createElement('span');
    n.className = 'n';
    n.textContent = String(sev[s] || 0);
    a.append(n, document.createTextNode(' ' + s));
    a.title = (sev[s] || 0) + ' ' + s + ' alerts first seen in the last 24 hours: open them';
    box.appendChild(a);
  }
}

async function overviewView(quiet) {
  const gen = generation;
  try {
    const o = await api('/api/v1/overview?since=24h&top=10');
    if (gen !== generation) { return; }
    $('o-updated').textContent = '(as of ' + new Date(o.until).toISOString().slice(11, 19) + 'Z)';
    severities(o);
    chart(o);
    summaryOf(o);
    rows($('o-agents'), o.agents || [], (tr, a) => { link(cell(tr, ''), a.name, alertsLink({ agent: a.name })); cell(tr, a.count); },
      'No agent was refused in the last 24 hours.');
    rows($('o-hosts'), o.hosts || [], (tr, h) => {
      val(tr, h.target, 'long');
      link(cell(tr, ''), h.role, '#' + new URLSearchParams({ view: 'discover', role: h.role }).toString());
      cell(tr, h.refusals); cell(tr, h.commands);
    }, 'No destination was refused in the last 24 hours.');
    rows($('o-rules'), o.rules || [], (tr, r) => { link(cell(tr, ''), r.name, alertsLink({ rule: r.name })); cell(tr, r.count); },
      'No rule alerted in the last 24 hours.');
    $('o-other').textContent = (o.otherAgents || 0) + ' refusals of other agents';
  } catch (err) {
    if (!quiet) { failed('Loading the overview', err, gen); }
  }
}

function risks(td, h) {
  td.textContent = '';
  const list = document.createElement('ul');
  for (const r of h.risks || []) {
    const li = document.createElement('li');
    li.textContent = visible(r.note);
    li.dataset.code = r.code;
    list.appendChild(li);
  }
  if (list.children.length === 0) { td.textContent = '-'; } else { td.appendChild(list); }
}

async function discoverView(p) {
  const gen = generation;
  const role = p.get('role') || '';
  const since = ['24h', '7d', '8d'].includes(p.get('since')) ? p.get('since') : '7d';
  $('d-since').value = since;
  try {
    const q = new URLSearchParams({ since, limit: '100' });
    const all = await api('/api/v1/allowlist?' + q.toString());
    if (gen !== generation) { return; }
    const select = $('d-role');
    select.replaceChildren(new Option('every role', ''));
    for (const r of all.roles || []) { select.appendChild(new Option(r.role, r.role)); }
    select.value = (all.roles || []).some((r) => r.role === role) ? role : '';
    const shown = (all.roles || []).filter((r) => !select.value || r.role === select.value);
    const box = $('d-roles');
    box.replaceChildren();
    if (shown.length === 0) { const none = document.createElement('p'); none.className = 'note'; none.textContent = 'No refusal in this range.'; box.appendChild(none); }
    for (const r of shown) {
      const section = document.createElement('section');
      section.className = 'role';
      section.dataset.role = r.role;
      const h = document.createElement('h3');
      h.textContent = 'role ' + r.role;
      const allows = document.createElement('p');
      allows.className = 'note';
      allows.textContent = 'allows today: ' + ((r.allows || []).join(', ') || 'no host') + '; ' + r.destinations
        + ' destinations refused' + (r.dropped > 0 ? '; ' + r.dropped + ' refusals past the hourly bound (a flood of one-off hosts)' : '');
      const proposed = (r.hosts || []).filter((x) => x.proposed && !x.inRole).map((x) => x.target);
      const pre = document.createElement('pre');
      pre.className = 'proposed';
      pre.textContent = proposed.length ? proposed.join('\n') : '(nothing to propose)';
      const label = document.createElement('p');
      label.textContent = 'Proposed for this role (each to review):';
      const table = document.createElement('table');
      table.append(document.createElement('thead'), document.createElement('tbody'));
      const head = document.createElement('tr');
      for (const c of ['destination', 'proposed', 'commands', 'tasks', 'agents', 'refusals', 'first seen', 'last seen', 'risks']) {
        const th = document.createElement('th'); th.textContent = c; head.appendChild(th);
      }
      table.tHead.appendChild(head);
      rows(table, r.hosts || [], (tr, x) => {
        if (!x.proposed) { tr.className = 'never'; }
        val(tr, x.target, 'long'); cell(tr, x.proposed ? (x.inRole ? 'in the role already' : 'yes') : 'never', 'short');
        cell(tr, x.commands); cell(tr, x.tasks); cell(tr, x.agents); cell(tr, x.refusals);
        when(cell(tr, ''), x.firstSeen); when(cell(tr, ''), x.lastSeen); risks(cell(tr, ''), x);
      }, 'No destination was refused for this role in this range.');
      section.append(h, allows, label, pre, scroller(table));
      box.appendChild(section);
    }
  } catch (err) {
    failed('Loading the destinations to discover', err, gen);
  }
}

document.addEventListener('DOMContentLoaded', () => {
  const go = () => {
    const p = new URLSearchParams({ view: 'discover', since: $('d-since').value });
    if ($('d-role').value) { p.set('role', $('d-role').value); }
    location.hash = p.toString();
  };
  $('d-role').addEventListener('change', go);
  $('d-since').addEventListener('change', go);
  window.addEventListener('resize', () => { if (plot) { plot.setSize({ width: Math.max(300, $('o-chart').clientWidth), height: 240 }); } });
  // a light/dark switch redraws the chart in the new colours
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { if (token() && viewOf(linked()) === 'overview') { overviewView(true); } });
});
