// The side panel's node view: a node's text, attributes, provenance (the grounding events
// with time and speaker), neighbours and history; for a concept also its facts and the
// claims about it or resting on its events, each with its holder (the concept view).
import { $, actions, api, h, kindOfId, listOf, nodeOf, setStatus, short, state, when } from './dom.js';
import { drawn, focusNode, kindStyle, labelOf } from './graph.js';

export function nodeLink(id, label, kind) {
  const color = kindStyle(kind).color;
  return h('span', { class: 'link', 'data-node': id, onclick: () => actions.selectNode(id) },
    kind ? h('span', { class: 'badge', style: { background: color } }, kind) : null, ' ', label || id);
}

const KEY_ATTRS = ['category', 'status', 'confirmed', 'score', 'due', 'source', 'ts', 'event_kind',
  'holder', 'predicate', 'stance', 'strength', 'event_count', 'keywords', 'summary', 'support',
  'first', 'last', 'granularity', 'value', 'aliases'];
const TIME_ATTRS = new Set(['due', 'ts', 'first', 'last', 'valid_from']);

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
    h('span', { class: 'link', 'data-node': n.id, onclick: () => actions.selectNode(n.id) }, n.text));
}

function changed(rec) {
  if (!rec.before || !rec.after) return ''; // an addition or a removal: the op says it all
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

// ---------------------------------------------------------------- the concept view

const enc = encodeURIComponent;
const MAX_LOOKUPS = 60; // events and facts/claims fetched for one concept view

function kindOf(id) {
  const d = drawn(id);
  return d ? d.kind : kindOfId(id);
}

/** The concept's facts and claims: those joined to it by an edge (a claim ABOUT it, a fact
 * RELATED_TO it) and those SUPPORTED_BY one of its events. */
async function conceptParts(concept, edges, events) {
  const wanted = new Set();
  for (const e of edges) {
    const other = e.src === concept.id ? e.dst : e.src;
    if (['fact', 'claim'].includes(kindOf(other))) wanted.add(other);
  }
  const eventEdges = await Promise.all(events.slice(0, MAX_LOOKUPS).map((ev) => api(`/nodes/${enc(ev.id)}`)
    .then((d) => listOf(d.edges, 'edges')).catch(() => [])));
  for (const list of eventEdges) {
    for (const e of list) if (e.type === 'SUPPORTED_BY' && ['fact', 'claim'].includes(kindOf(e.src))) wanted.add(e.src);
  }
  const found = await Promise.all([...wanted].slice(0, MAX_LOOKUPS).map((id) => api(`/nodes/${enc(id)}`).catch(() => null)));
  const facts = [];
  const claims = [];
  for (const d of found) {
    if (!d) continue;
    const n = nodeOf(d.node);
    if (n.kind === 'fact') facts.push(n);
    else if (n.kind === 'claim') claims.push({ ...n, holderName: holderName(n, listOf(d.edges, 'edges')) });
  }
  facts.sort((a, b) => Number(a.attrs.first ?? 0) - Number(b.attrs.first ?? 0));
  claims.sort((a, b) => Number(a.attrs.valid_from ?? 0) - Number(b.attrs.valid_from ?? 0));
  return { facts, claims };
}

function holderName(claim, edges) {
  if (claim.attrs.holder) return String(claim.attrs.holder);
  const holds = edges.find((e) => e.type === 'HOLDS' && e.dst === claim.id);
  const person = holds && drawn(holds.src);
  return person ? person.text : 'someone';
}

function factItem(f) {
  const a = f.attrs;
  const span = a.first && a.last && a.first !== a.last ? `${when(a.first)} – ${when(a.last)}` : when(a.first);
  return h('li', { class: 'fact', 'data-node': f.id },
    h('span', { class: 'link fact-text', onclick: () => actions.selectNode(f.id) }, f.text),
    h('div', { class: 'meta' }, [a.support ? `${a.support} events` : '', span].filter(Boolean).join(' · ')));
}

function claimItem(c) {
  const a = c.attrs;
  return h('li', { class: `claim${a.superseded_by ? ' superseded' : ''}`, 'data-node': c.id },
    h('span', { class: 'holder' }, c.holderName), ' ',
    a.predicate ? h('span', { class: 'predicate' }, a.predicate) : null, ' ',
    h('span', { class: 'link claim-text', onclick: () => actions.selectNode(c.id) }, c.text), ' ',
    a.stance ? h('span', { class: `stance ${a.stance}` }, a.stance) : null,
    a.superseded_by ? h('span', { class: 'meta' }, ' (superseded)') : null,
    a.valid_from ? h('div', { class: 'when' }, `since ${when(a.valid_from)}`) : null);
}

// ---------------------------------------------------------------- rendering

function renderDetails(data, history, parts) {
  const n = nodeOf(data.node || data);
  const a = n.attrs;
  const isConcept = n.kind === 'concept';
  const color = kindStyle(n.kind).color;
  const rows = KEY_ATTRS.filter((k) => a[k] !== undefined && a[k] !== null && a[k] !== ''
      && !(Array.isArray(a[k]) && a[k].length === 0))
    .map((k) => [h('dt', {}, k), h('dd', {}, attrValue(k, a[k]))]);
  const prov = listOf(data.provenance, 'events').slice()
    .sort((x, y) => Number(nodeOf(x).attrs.ts ?? 0) - Number(nodeOf(y).attrs.ts ?? 0));
  const edges = listOf(data.edges, 'edges');
  const concept = !isConcept ? [] : [
    h('h3', {}, parts ? `Facts (${parts.facts.length})` : 'Facts …'),
    parts && parts.facts.length ? h('ol', { class: 'list concept-facts' }, parts.facts.map(factItem))
      : h('p', { class: 'hint' }, parts ? 'No facts rest on this concept’s events.' : 'Loading…'),
    h('h3', {}, parts ? `Claims (${parts.claims.length})` : 'Claims …'),
    parts && parts.claims.length ? h('ol', { class: 'list concept-claims' }, parts.claims.map(claimItem))
      : h('p', { class: 'hint' }, parts ? 'No one’s claims are about it or rest on its events.' : 'Loading…'),
  ];
  const out = h('section', { id: 'details', 'data-node': n.id, 'data-kind': n.kind, 'data-concept': isConcept && parts ? 'ready' : null },
    h('h2', {}, 'Node ', h('span', { class: 'badge', style: { background: color } }, n.kind)),
    h('div', { class: 'node-id' }, n.id),
    h('p', { class: 'node-text' }, n.text),
    rows.length ? h('dl', { class: 'attrs' }, rows) : null,
    h('h3', {}, `${isConcept ? 'Events' : 'Provenance'} (${prov.length})`),
    prov.length
      ? h('ol', { class: 'list provenance-list' }, prov.map(provenanceItem))
      : h('p', { class: 'hint' }, n.kind === 'event'
        ? `This is an event: ${when(a.ts)} · ${a.source || 'unknown speaker'}`
        : 'No grounding events.'),
    concept,
    h('h3', {}, `Neighbours (${edges.length})`),
    h('ol', { class: 'list neighbours' }, edges.slice(0, 80).map((e) => {
      const outgoing = e.src === n.id;
      const other = outgoing ? e.dst : e.src;
      const { label, kind } = labelOf(other);
      return h('li', {}, h('span', { class: 'etype' }, `${outgoing ? '→' : '←'} ${e.type}`), ' ', nodeLink(other, label, kind || kindOfId(other)));
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

export async function selectNode(id) {
  state.selected = id;
  focusNode(id);
  actions.nodeSelected(id);
  try {
    const [data, hist] = await Promise.all([api(`/nodes/${enc(id)}`), api(`/nodes/${enc(id)}/history`)]);
    if (state.selected !== id) return;
    const history = listOf(hist, 'history', 'records', 'ops');
    renderDetails(data, history, null);
    const n = nodeOf(data.node);
    if (n.kind !== 'concept') return;
    const parts = await conceptParts(n, listOf(data.edges, 'edges'), listOf(data.provenance, 'events').map(nodeOf));
    if (state.selected === id) renderDetails(data, history, parts);
  } catch (err) {
    setStatus(`Node ${short(id, 40)}: ${err.message}`, true);
  }
}
