// The graph explorer page of `enfold serve` (/ui): draws a namespace's graph with cytoscape,
// searches it, shows a node's text, provenance, neighbours and history, and lists intents with
// accept/reject buttons. It talks only to the /v1 HTTP API, with the key kept in sessionStorage.
import cytoscape from 'cytoscape';
import fcose from 'cytoscape-fcose';

cytoscape.use(fcose);

// Colour and shape per node kind (the shape keeps kinds apart without colour vision).
const KINDS = {
  concept: { color: '#2e9e5b', shape: 'ellipse' },
  intent: { color: '#e07b00', shape: 'diamond' },
  fact: { color: '#138a8a', shape: 'round-rectangle' },
  claim: { color: '#d1435b', shape: 'triangle' },
  person: { color: '#2f72d6', shape: 'ellipse' },
  time: { color: '#8e5cc8', shape: 'hexagon' },
  event: { color: '#93a1b2', shape: 'round-rectangle' },
};
const OTHER_KIND = { color: '#555', shape: 'ellipse' };

// Colour and line style per edge type: provenance solid, structure solid or dashed,
// weak associations dotted.
const EDGES = {
  GROUNDS: { color: '#8796a8', line: 'solid' },
  SUPPORTED_BY: { color: '#138a8a', line: 'solid' },
  HOLDS: { color: '#d1435b', line: 'solid' },
  PARTICIPATES: { color: '#2f72d6', line: 'solid' },
  PART_OF: { color: '#1f7a44', line: 'solid' },
  DERIVED_FROM: { color: '#6cbf84', line: 'dashed' },
  TRIGGERS: { color: '#e07b00', line: 'solid' },
  DEADLINE_FOR: { color: '#8e5cc8', line: 'solid' },
  USER_FEEDBACK: { color: '#a65300', line: 'dashed' },
  CAUSES: { color: '#3b4450', line: 'solid' },
  REINFORCES: { color: '#86a832', line: 'dashed' },
  ABOUT: { color: '#d1435b', line: 'dashed' },
  MENTIONS: { color: '#9aa7b5', line: 'dotted' },
  RELATED_TO: { color: '#b0b0b0', line: 'dotted' },
};
const OTHER_EDGE = { color: '#999', line: 'dotted' };

const state = { ns: '', key: '', limit: 400, cy: null, selected: null, hiddenKinds: new Set() };
const $ = (sel) => document.querySelector(sel);

// ---------------------------------------------------------------- small helpers

/** Build a DOM element; children are nodes or text (never parsed as HTML). */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'style') Object.assign(el.style, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

function short(text, n = 42) {
  const t = String(text ?? '').replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

function when(ts) {
  if (ts === undefined || ts === null || ts === '') return '';
  const d = new Date(Number(ts) * 1000);
  return Number.isNaN(d.getTime()) ? String(ts) : `${d.toISOString().slice(0, 16).replace('T', ' ')}`;
}

function kindStyle(kind) { return KINDS[kind] || OTHER_KIND; }
function edgeStyle(type) { return EDGES[type] || OTHER_EDGE; }

function setStatus(text, isError = false) {
  const el = $('#status');
  el.textContent = text;
  el.classList.toggle('error', isError);
}

/** The list inside a response that may be a bare array or wrap it under a key. */
function listOf(data, ...keys) {
  if (Array.isArray(data)) return data;
  for (const k of keys) if (data && Array.isArray(data[k])) return data[k];
  return [];
}

/** A node record from the API, flattened to {id, kind, text, label, attrs, ...}. */
function nodeOf(raw) {
  const n = raw && raw.node ? { ...raw.node, score: raw.score } : { ...raw };
  n.attrs = n.attrs || {};
  return n;
}

// ---------------------------------------------------------------- the HTTP API

class ApiError extends Error {
  constructor(status, title, detail) {
    super(detail ? `${title}: ${detail}` : title);
    this.status = status;
  }
}

async function api(path, { method = 'GET', body } = {}) {
  const headers = { Accept: 'application/json' };
  if (state.key) headers.Authorization = `Bearer ${state.key}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const url = `/v1/namespaces/${encodeURIComponent(state.ns)}${path}`;
  const resp = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const type = resp.headers.get('content-type') || '';
  const data = type.includes('json') ? await resp.json() : await resp.text();
  if (!resp.ok) {
    const title = (data && data.title) || `HTTP ${resp.status}`;
    throw new ApiError(resp.status, title, data && data.detail);
  }
  return data;
}

// ---------------------------------------------------------------- the graph

const GRAPH_STYLE = [
  {
    selector: 'node',
    style: {
      'background-color': 'data(color)', shape: 'data(shape)', width: 'data(size)',
      height: 'data(size)', label: 'data(label)', 'font-size': 10, color: '#1d232b',
      'text-valign': 'bottom', 'text-margin-y': 3, 'text-wrap': 'ellipsis',
      'text-max-width': 140, 'min-zoomed-font-size': 9, 'border-width': 1,
      'border-color': '#fff', 'text-background-color': '#fbfbfa',
      'text-background-opacity': 0.7, 'text-background-padding': 1,
    },
  },
  { selector: 'node[kind = "event"]', style: { label: '', 'border-color': '#6f7e90' } },
  { selector: 'node[kind = "event"]:selected, node[kind = "event"].match, node[kind = "event"].hover', style: { label: 'data(label)' } },
  { selector: 'node.confirmed', style: { 'border-width': 3, 'border-color': '#2e8a4e' } },
  { selector: 'node.rejected', style: { opacity: 0.45 } },
  {
    selector: 'edge',
    style: {
      width: 'mapData(weight, 0, 1, 0.6, 2.6)', 'line-color': 'data(color)',
      'line-style': 'data(line)', 'target-arrow-shape': 'triangle',
      'target-arrow-color': 'data(color)', 'arrow-scale': 0.6, 'curve-style': 'bezier',
      opacity: 0.75,
    },
  },
  { selector: '.faded', style: { opacity: 0.12, 'text-opacity': 0 } },
  { selector: '.hidden', style: { display: 'none' } },
  { selector: 'node:selected', style: { 'border-width': 4, 'border-color': '#1d232b', 'z-index': 10 } },
  { selector: 'node.match', style: { 'border-width': 4, 'border-color': '#f5c400', 'z-index': 9 } },
  { selector: 'edge.focus', style: { opacity: 1, width: 2.5, 'z-index': 8 } },
];

function toElements(graph) {
  const nodes = listOf(graph, 'nodes');
  const ids = new Set(nodes.map((n) => n.id));
  const edges = listOf(graph, 'edges').filter((e) => ids.has(e.src) && ids.has(e.dst));
  const degree = new Map();
  for (const e of edges) {
    degree.set(e.src, (degree.get(e.src) || 0) + 1);
    degree.set(e.dst, (degree.get(e.dst) || 0) + 1);
  }
  const els = nodes.map((raw) => {
    const n = nodeOf(raw);
    const ks = kindStyle(n.kind);
    const base = n.kind === 'event' ? 9 : 16;
    const size = Math.min(60, base + 5 * Math.sqrt(degree.get(n.id) || 0));
    const status = n.status || n.attrs.status;
    const classes = [n.confirmed || n.attrs.confirmed ? 'confirmed' : '',
      status === 'rejected' ? 'rejected' : ''].join(' ').trim();
    return {
      group: 'nodes', classes,
      data: { id: n.id, kind: n.kind, label: short(n.label || n.text), text: n.text, color: ks.color, shape: ks.shape, size },
    };
  });
  for (const e of edges) {
    const es = edgeStyle(e.type);
    els.push({
      group: 'edges',
      data: { id: `${e.src}|${e.type}|${e.dst}`, source: e.src, target: e.dst, type: e.type, weight: Number(e.weight ?? 0.5), color: es.color, line: es.line },
    });
  }
  return els;
}

function drawGraph(graph) {
  if (state.cy) state.cy.destroy();
  const cy = cytoscape({
    container: $('#graph'),
    elements: toElements(graph),
    style: GRAPH_STYLE,
    // fcose: a spectral start then force-directed refinement; a thousand nodes in about a second.
    layout: { name: 'fcose', quality: 'default', animate: false, randomize: true, nodeRepulsion: () => 6000, idealEdgeLength: () => 55, nodeSeparation: 60, packComponents: true, padding: 30 },
    minZoom: 0.05, maxZoom: 4, selectionType: 'single', boxSelectionEnabled: false,
  });
  cy.on('tap', 'node', (ev) => selectNode(ev.target.id()));
  cy.on('tap', (ev) => { if (ev.target === cy) clearFocus(); });
  cy.on('mouseover', 'node', (ev) => ev.target.addClass('hover'));
  cy.on('mouseout', 'node', (ev) => ev.target.removeClass('hover'));
  state.cy = cy;
  state.hiddenKinds.clear();
  drawLegend();
  return cy;
}

function clearFocus() {
  if (!state.cy) return;
  state.cy.elements().removeClass('faded focus match');
  state.cy.nodes().unselect();
}

function focusNode(id) {
  const cy = state.cy;
  if (!cy) return;
  const node = cy.getElementById(id);
  cy.elements().removeClass('focus');
  if (node.empty()) { cy.elements().removeClass('faded'); return; }
  const hood = node.closedNeighborhood();
  cy.elements().addClass('faded');
  hood.removeClass('faded');
  node.connectedEdges().addClass('focus');
  cy.nodes().unselect();
  node.select();
  cy.animate({ center: { eles: node } }, { duration: 250 });
}

function legendLine(style) {
  const dash = { solid: '', dashed: '5,3', dotted: '1.5,2.5' }[style.line] || '';
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('width', '26'); svg.setAttribute('height', '8');
  const line = document.createElementNS('http://www.w3.org/2000/svg', 'line');
  for (const [k, v] of Object.entries({ x1: 1, y1: 4, x2: 25, y2: 4, stroke: style.color, 'stroke-width': 2, 'stroke-dasharray': dash })) line.setAttribute(k, String(v));
  svg.append(line);
  return svg;
}

function drawLegend() {
  const cy = state.cy;
  const legend = $('#legend');
  legend.replaceChildren();
  if (!cy || cy.nodes().empty()) return;
  const kinds = new Map();
  cy.nodes().forEach((n) => kinds.set(n.data('kind'), (kinds.get(n.data('kind')) || 0) + 1));
  const types = new Map();
  cy.edges().forEach((e) => types.set(e.data('type'), (types.get(e.data('type')) || 0) + 1));
  const kindItems = [...kinds].sort((a, b) => b[1] - a[1]).map(([kind, n]) => h('li', {
    class: 'kind', 'data-kind': kind, title: 'Click to hide or show this kind',
    onclick: (ev) => toggleKind(kind, ev.currentTarget),
  }, h('span', { class: 'swatch', style: { background: kindStyle(kind).color } }), kind, h('span', { class: 'n' }, n)));
  const edgeItems = [...types].sort((a, b) => b[1] - a[1]).map(([type, n]) => h('li', {},
    legendLine(edgeStyle(type)), h('span', { class: 'etype' }, type), h('span', { class: 'n' }, n)));
  legend.append(h('h3', {}, 'Nodes'), h('ul', {}, kindItems), h('h3', {}, 'Edges'), h('ul', {}, edgeItems));
}

function toggleKind(kind, li) {
  const hidden = !state.hiddenKinds.has(kind);
  if (hidden) state.hiddenKinds.add(kind); else state.hiddenKinds.delete(kind);
  li.classList.toggle('off', hidden);
  state.cy.nodes(`[kind = "${kind}"]`).toggleClass('hidden', hidden);
}

// ---------------------------------------------------------------- node details

function nodeLink(id, label, kind) {
  const color = kindStyle(kind).color;
  return h('span', { class: 'link', 'data-node': id, onclick: () => selectNode(id) },
    kind ? h('span', { class: 'badge', style: { background: color } }, kind) : null, ' ', label || id);
}

function labelOf(id) {
  const el = state.cy && state.cy.getElementById(id);
  return el && el.nonempty() ? { label: short(el.data('text'), 70), kind: el.data('kind') } : { label: id, kind: null };
}

const KEY_ATTRS = ['category', 'status', 'confirmed', 'score', 'due', 'source', 'ts', 'event_kind',
  'holder', 'predicate', 'stance', 'strength', 'event_count', 'keywords', 'summary', 'support',
  'first', 'last', 'granularity', 'value', 'aliases'];
const TIME_ATTRS = new Set(['due', 'ts', 'first', 'last']);

function attrValue(k, v) {
  if (TIME_ATTRS.has(k) && typeof v === 'number') return when(v);
  if (Array.isArray(v)) return v.join(', ');
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(3);
  if (typeof v === 'object' && v !== null) return JSON.stringify(v);
  return String(v);
}

function provenanceItem(ev) {
  const n = nodeOf(ev);
  const a = n.attrs;
  return h('li', { class: 'provenance' },
    h('span', { class: 'when' }, when(a.ts ?? n.ts)), ' ',
    h('span', { class: 'who' }, a.source || n.source || 'unknown'), ': ',
    h('span', { class: 'link', 'data-node': n.id, onclick: () => selectNode(n.id) }, n.text));
}

function changed(rec) {
  if (!rec.before || !rec.after) return '';  // an addition or a removal: the op says it all
  const before = rec.before || {};
  const after = rec.after || {};
  const out = [];
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (k === 'attrs') {
      const ba = before.attrs || {};
      const aa = after.attrs || {};
      for (const ak of new Set([...Object.keys(ba), ...Object.keys(aa)])) {
        if (JSON.stringify(ba[ak]) !== JSON.stringify(aa[ak])) {
          out.push(ak === 'status' ? `status ${ba[ak] ?? '—'} → ${aa[ak]}` : ak);
        }
      }
    } else if (!['updated_at', 'last_access', 'access_count'].includes(k) && JSON.stringify(before[k]) !== JSON.stringify(after[k])) {
      out.push(k);
    }
  }
  return out.slice(0, 6).join(', ');
}

function renderDetails(data, history) {
  const n = nodeOf(data.node || data);
  const a = n.attrs;
  const color = kindStyle(n.kind).color;
  const rows = KEY_ATTRS.filter((k) => a[k] !== undefined && a[k] !== null && a[k] !== ''
      && !(Array.isArray(a[k]) && a[k].length === 0))
    .map((k) => [h('dt', {}, k), h('dd', {}, attrValue(k, a[k]))]);
  const prov = listOf(data.provenance, 'events').slice()
    .sort((x, y) => Number(nodeOf(x).attrs.ts ?? 0) - Number(nodeOf(y).attrs.ts ?? 0));
  const edges = listOf(data.edges, 'edges');
  const out = h('section', { id: 'details', 'data-node': n.id },
    h('h2', {}, 'Node ', h('span', { class: 'badge', style: { background: color } }, n.kind)),
    h('div', { class: 'node-id' }, n.id),
    h('p', { class: 'node-text' }, n.text),
    rows.length ? h('dl', { class: 'attrs' }, rows) : null,
    h('h3', {}, `Provenance (${prov.length})`),
    prov.length
      ? h('ol', { class: 'list provenance-list' }, prov.map(provenanceItem))
      : h('p', { class: 'hint' }, n.kind === 'event'
        ? `This is an event: ${when(a.ts)} · ${a.source || 'unknown speaker'}`
        : 'No grounding events.'),
    h('h3', {}, `Neighbours (${edges.length})`),
    h('ol', { class: 'list neighbours' }, edges.slice(0, 80).map((e) => {
      const out = e.src === n.id;
      const other = out ? e.dst : e.src;
      const { label, kind } = labelOf(other);
      return h('li', {}, h('span', { class: 'etype' }, `${out ? '→' : '←'} ${e.type}`), ' ', nodeLink(other, label, kind));
    })),
    edges.length > 80 ? h('p', { class: 'hint' }, `… and ${edges.length - 80} more`) : null,
    h('h3', {}, `History (${history.length})`),
    h('ol', { class: 'list history' }, history.map((r) => h('li', {},
      h('span', { class: 'when' }, when(r.at)), ' ', h('b', {}, r.op), ' ',
      h('span', { class: 'meta' }, [changed(r), r.reasoning].filter(Boolean).join(' — '))))),
    h('details', {}, h('summary', { class: 'meta' }, 'All attributes'), h('pre', {}, JSON.stringify(a, null, 2))),
  );
  $('#details').replaceWith(out);
}

async function selectNode(id) {
  state.selected = id;
  focusNode(id);
  try {
    const enc = encodeURIComponent(id);
    const [data, hist] = await Promise.all([api(`/nodes/${enc}`), api(`/nodes/${enc}/history`)]);
    if (state.selected !== id) return;
    renderDetails(data, listOf(hist, 'history', 'records', 'ops'));
  } catch (err) {
    setStatus(`Node ${id}: ${err.message}`, true);
  }
}

// ---------------------------------------------------------------- search

let searchSeq = 0;

async function search(q) {
  const seq = ++searchSeq;
  const box = $('#results');
  if (!q.trim()) { box.hidden = true; clearFocus(); return; }
  let found;
  try {
    found = listOf(await api(`/search?q=${encodeURIComponent(q)}&k=20`), 'nodes', 'results', 'items').map(nodeOf);
  } catch (err) { setStatus(`Search: ${err.message}`, true); return; }
  if (seq !== searchSeq) return;
  box.hidden = false;
  box.querySelector('.count').textContent = `(${found.length})`;
  box.querySelector('.list').replaceChildren(...found.map((n) => h('li', {}, nodeLink(n.id, short(n.text, 80), n.kind))));
  const cy = state.cy;
  if (!cy) return;
  cy.elements().removeClass('match faded focus');
  const hits = cy.collection(found.map((n) => cy.getElementById(n.id)).filter((el) => el.nonempty()));
  if (hits.empty()) return;
  cy.elements().addClass('faded');
  hits.removeClass('faded').addClass('match');
  hits.connectedEdges().removeClass('faded');
  if (hits.length <= 2) cy.animate({ center: { eles: hits }, zoom: Math.max(cy.zoom(), 1) }, { duration: 300 });
  else cy.animate({ fit: { eles: hits, padding: 80 } }, { duration: 300 });
}

// ---------------------------------------------------------------- intents

function statusText(intent) {
  const status = intent.status || intent.attrs.status || 'pending';
  return (intent.confirmed || intent.attrs.confirmed) && status === 'pending' ? 'accepted' : status;
}

function intentRow(raw) {
  const n = nodeOf(raw);
  const a = n.attrs;
  const status = statusText(n);
  const li = h('li', { 'data-intent': n.id },
    h('span', {}, nodeLink(n.id, n.text || n.label, null)),
    h('span', { class: 'actions' },
      h('button', { type: 'button', class: 'accept', onclick: () => giveFeedback(n.id, 'accept', li), disabled: status !== 'pending' }, 'Accept'),
      h('button', { type: 'button', class: 'reject', onclick: () => giveFeedback(n.id, 'reject', li), disabled: status === 'rejected' }, 'Reject')),
    h('span', { class: 'meta' },
      h('span', { class: `status ${status}` }, status), ' ',
      a.category || n.category || '', (a.due ?? n.due) ? ` · due ${when(a.due ?? n.due)}` : '',
      ` · score ${Number(a.score ?? n.score ?? 0).toFixed(2)}`));
  return li;
}

async function loadIntents() {
  const status = $('#intent-status').value;
  const list = $('#intents .list');
  const found = listOf(await api(`/intents?status=${encodeURIComponent(status)}`), 'intents', 'items');
  list.replaceChildren(...(found.length ? found.map(intentRow) : [h('li', { class: 'hint' }, `No ${status} intents.`)]));
}

async function giveFeedback(id, kind, li) {
  for (const b of li.querySelectorAll('button')) b.disabled = true;
  try {
    const resp = await api(`/intents/${encodeURIComponent(id)}/feedback`, { method: 'POST', body: { kind } });
    const updated = nodeOf(resp.intent || resp);
    li.replaceWith(intentRow(updated));
    const el = state.cy && state.cy.getElementById(id);
    if (el && el.nonempty()) {
      el.toggleClass('confirmed', Boolean(updated.attrs.confirmed));
      el.toggleClass('rejected', statusText(updated) === 'rejected');
    }
    if (state.selected === id) selectNode(id);
  } catch (err) {
    setStatus(`Feedback: ${err.message}`, true);
    for (const b of li.querySelectorAll('button')) b.disabled = false;
  }
}

// ---------------------------------------------------------------- opening a namespace

async function open() {
  setStatus(`Loading ${state.ns}…`);
  try {
    const [graph] = await Promise.all([api(`/graph?limit=${state.limit}`), loadIntents()]);
    const cy = drawGraph(graph);
    $('#q').disabled = false;
    $('#fit').disabled = false;
    const total = graph.total ?? cy.nodes().length;
    setStatus(`${state.ns}: ${cy.nodes().length} of ${total} nodes, ${cy.edges().length} edges`
      + (graph.truncated ? ' (the best-connected first; raise “Nodes” for more)' : ''));
    document.body.dataset.ready = 'true';
  } catch (err) {
    setStatus(err.status === 401 || err.status === 404
      ? `${err.message} — check the namespace and its API key.` : err.message, true);
  }
}

function start() {
  const saved = { ns: sessionStorage.getItem('enfold.ns'), key: sessionStorage.getItem('enfold.key') };
  $('#ns').value = saved.ns || '';
  $('#key').value = saved.key || '';
  $('#limit').value = sessionStorage.getItem('enfold.limit') || '400';
  $('#connect').addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.ns = $('#ns').value.trim();
    state.key = $('#key').value;
    state.limit = Math.max(10, Number($('#limit').value) || 400);
    sessionStorage.setItem('enfold.ns', state.ns);
    sessionStorage.setItem('enfold.key', state.key);
    sessionStorage.setItem('enfold.limit', String(state.limit));
    open();
  });
  let timer = null;
  $('#q').addEventListener('input', (ev) => {
    clearTimeout(timer);
    timer = setTimeout(() => search(ev.target.value), 250);
  });
  $('#search').addEventListener('submit', (ev) => { ev.preventDefault(); clearTimeout(timer); search($('#q').value); });
  $('#fit').addEventListener('click', () => state.cy && state.cy.fit(undefined, 30));
  $('#intent-status').addEventListener('change', () => loadIntents().catch((err) => setStatus(err.message, true)));
  if (saved.ns) $('#connect').requestSubmit();
}

// A handle for people debugging in the console and for the browser test.
window.enfoldUI = { state, selectNode, search, get cy() { return state.cy; } };

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
