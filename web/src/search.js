// The page's search: the question goes through recall (GET /recall), and the answer is its
// evidence — the verbatim events with time and speaker — plus the concepts, facts, claims
// and intents it brought; all of them are highlighted in the graph and the timeline.
import { $, actions, api, h, setStatus, short, when } from './dom.js';
import { highlight } from './graph.js';
import { nodeLink } from './details.js';
import { markTimeline } from './timeline.js';

export const RECALL_K = 10;
let seq = 0;

function evidenceItem(e) {
  return h('li', { class: 'evidence', 'data-event': e.id },
    h('span', { class: 'when' }, when(e.ts)), ' ',
    h('span', { class: 'who' }, e.source || 'unknown'), ': ',
    h('span', { class: 'link text', 'data-node': e.id, onclick: () => actions.selectNode(e.id) }, e.text));
}

function recalledItem(item) {
  const text = item.kind === 'claim' ? `${item.holder || 'someone'}: ${item.text}` : item.text;
  return h('li', { class: 'recalled' }, nodeLink(item.id, short(text, 80), item.kind));
}

export function clearSearch() {
  seq += 1;
  $('#results').hidden = true;
  highlight([]);
  markTimeline(new Set());
}

/** Recall for the question q and show the pack (the newest question wins a race). */
export async function search(q) {
  const mine = ++seq;
  if (!q.trim()) { clearSearch(); return null; }
  let pack;
  try {
    pack = await api(`/recall?q=${encodeURIComponent(q)}&k=${RECALL_K}`);
  } catch (err) { setStatus(`Recall: ${err.message}`, true); return null; }
  if (mine !== seq) return null;
  const evidence = pack.evidence || [];
  const others = [...(pack.concepts || []), ...(pack.facts || []), ...(pack.claims || []), ...(pack.intents || [])];
  const box = $('#results');
  box.hidden = false;
  box.querySelector('.count').textContent = `(${evidence.length})`;
  box.querySelector('.note').textContent = pack.note || '';
  box.querySelector('.evidence-list').replaceChildren(...(evidence.length ? evidence.map(evidenceItem)
    : [h('li', { class: 'hint' }, 'No events answer this.')]));
  const rest = box.querySelector('.recalled-list');
  rest.replaceChildren(...others.map(recalledItem));
  box.querySelector('.recalled-head').hidden = others.length === 0;
  const evidenceIds = new Set(evidence.map((e) => e.id));
  highlight([...evidence, ...others].map((x) => x.id), evidenceIds);
  markTimeline(evidenceIds);
  return pack;
}

