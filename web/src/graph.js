// The graph view: cytoscape with a hub-aware force layout, readable labels (labels.js),
// focus and highlight, and the legend beside the graph (click a kind to hide it).
import cytoscape from 'cytoscape';
import fcose from 'cytoscape-fcose';

import { $, actions, eventLabel, h, listOf, nodeOf, short, state } from './dom.js';
import { FONT, FULL_WIDTH, HALIGN, LABEL_PX, MARGIN_X, MARGIN_Y, VALIGN, labelScheduler, screen } from './labels.js';

cytoscape.use(fcose);

// Colour and shape per node kind (the shape keeps kinds apart without colour vision).
export const KINDS = {
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

export function kindStyle(kind) { return KINDS[kind] || OTHER_KIND; }
function edgeStyle(type) { return EDGES[type] || OTHER_EDGE; }

const LABEL_CHARS = 28; // a label longer than this is cut; the full one shows on hover
const FULL_CHARS = 240;

const GRAPH_STYLE = [
  {
    selector: 'node',
    style: {
      'background-color': 'data(color)', shape: 'data(shape)', width: 'data(size)',
      height: 'data(size)', label: '', 'border-width': 1, 'border-color': '#fff',
      'font-family': FONT, 'font-size': screen(LABEL_PX), color: '#1d232b',
      'text-valign': (n) => VALIGN[n.data('pos')] || 'bottom',
      'text-halign': (n) => HALIGN[n.data('pos')] || 'center',
      'text-margin-x': (n) => (MARGIN_X[n.data('pos')] || 0) / n.cy().zoom(),
      'text-margin-y': (n) => (MARGIN_Y[n.data('pos')] || 0) / n.cy().zoom(),
      'text-wrap': 'none', 'text-background-color': '#fbfbfa', 'text-background-opacity': 0.8,
      'text-background-padding': screen(2), 'text-background-shape': 'roundrectangle',
    },
  },
  { selector: 'node[kind = "event"]', style: { 'border-color': '#6f7e90' } },
  { selector: 'node.labelled', style: { label: 'data(label)', 'z-index': 5 } },
  {
    selector: 'node.full',
    style: {
      label: 'data(full)', 'text-wrap': 'wrap', 'text-max-width': screen(FULL_WIDTH),
      'text-background-opacity': 0.95, 'z-index': 20,
    },
  },
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
  { selector: 'node.evidence', style: { 'border-color': '#e0a100' } },
  { selector: 'edge.focus', style: { opacity: 1, width: 2.5, 'z-index': 8 } },
];

/** A node's short label and its full one (for hover and selection). */
export function labelsOf(n) {
  if (n.kind === 'event') {
    const name = eventLabel(n.ts ?? n.attrs.ts, n.source ?? n.attrs.source);
    return { label: name, full: `${name} — ${short(n.text, FULL_CHARS)}` };
  }
  const name = String(n.label || n.text || n.id);
  const text = String(n.text || '');
  // The API's label may be the text cut short: the full label is then the whole text.
  const whole = text.startsWith(name) ? text : name;
  return { label: short(name, LABEL_CHARS), full: short(whole, FULL_CHARS) };
}

function toElements(graph) {
  const nodes = listOf(graph, 'nodes');
  const ids = new Set(nodes.map((n) => nodeOf(n).id));
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
      data: {
        id: n.id, kind: n.kind, text: n.text, color: ks.color, shape: ks.shape, size,
        ts: n.ts ?? n.attrs.ts, source: n.source ?? n.attrs.source, holder: n.holder ?? n.attrs.holder,
        due: n.due ?? n.attrs.due, pos: 'bottom', ...labelsOf(n),
      },
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

// fcose, made hub-aware: a node repels in proportion to the root of its degree and a hub's
// edges are longer, so a hub's neighbours spread out on a wider ring with room for labels.
function layoutOptions() {
  const hub = (n) => Math.sqrt(n.degree());
  return {
    name: 'fcose', quality: 'default', animate: false, randomize: true, packComponents: true,
    padding: 30, nodeSeparation: 75,
    nodeRepulsion: (n) => 4500 + 2500 * hub(n),
    idealEdgeLength: (e) => 45 + 12 * Math.max(hub(e.source()), hub(e.target())),
    edgeElasticity: (e) => 0.45 / (1 + 0.1 * Math.max(hub(e.source()), hub(e.target()))),
  };
}

export function drawGraph(graph) {
  if (state.cy) state.cy.destroy();
  const cy = cytoscape({
    container: $('#graph'),
    elements: toElements(graph),
    style: GRAPH_STYLE,
    layout: layoutOptions(),
    minZoom: 0.05, maxZoom: 4, selectionType: 'single', boxSelectionEnabled: false,
  });
  state.cy = cy;
  const relabel = labelScheduler(cy);
  actions.refreshLabels = relabel;
  cy.on('tap', 'node', (ev) => actions.selectNode(ev.target.id()));
  cy.on('tap', (ev) => { if (ev.target === cy) clearFocus(); });
  cy.on('mouseover', 'node', (ev) => {
    ev.target.addClass('hover');
    $('#graph').title = ev.target.data('full');
    relabel(0);
  });
  cy.on('mouseout', 'node', (ev) => {
    ev.target.removeClass('hover');
    $('#graph').title = '';
    relabel(0);
  });
  cy.on('viewport resize', () => relabel());
  cy.on('select unselect', 'node', () => relabel(0));
  state.hiddenKinds.clear();
  drawLegend();
  relabel(0);
  return cy;
}

export function clearFocus() {
  if (!state.cy) return;
  state.cy.elements().removeClass('faded focus match evidence');
  state.cy.nodes().unselect();
  actions.refreshLabels(0);
}

export function focusNode(id) {
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
  if (state.view === 'graph') cy.animate({ center: { eles: node } }, { duration: 250 });
}

/** Mark these node ids as matches (evidence ones also as evidence), fade the rest and
 * bring the matches into view; returns the ids that are drawn. */
export function highlight(ids, evidence = new Set()) {
  const cy = state.cy;
  if (!cy) return [];
  cy.elements().removeClass('match evidence faded focus');
  const hits = cy.collection(ids.map((id) => cy.getElementById(id)).filter((el) => el.nonempty()));
  if (hits.empty()) { actions.refreshLabels(0); return []; }
  cy.elements().addClass('faded');
  hits.removeClass('faded').addClass('match');
  hits.filter((n) => evidence.has(n.id())).addClass('evidence');
  hits.edgesWith(hits).removeClass('faded');
  if (state.view === 'graph') {
    if (hits.length <= 2) cy.animate({ center: { eles: hits }, zoom: Math.max(cy.zoom(), 1) }, { duration: 300 });
    else cy.animate({ fit: { eles: hits, padding: 80 } }, { duration: 300 });
  }
  actions.refreshLabels(0);
  return hits.map((n) => n.id());
}

/** A drawn node's label and kind, for lists elsewhere on the page. */
export function labelOf(id) {
  const el = state.cy && state.cy.getElementById(id);
  return el && el.nonempty() ? { label: short(el.data('text'), 70), kind: el.data('kind') } : { label: id, kind: null };
}

/** A drawn node's data (undefined when it is not drawn). */
export function drawn(id) {
  const el = state.cy && state.cy.getElementById(id);
  return el && el.nonempty() ? el.data() : undefined;
}

// ---------------------------------------------------------------- the legend

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
  actions.refreshLabels(0);
}

