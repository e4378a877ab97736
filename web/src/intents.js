// The side panel's intents: soonest due first, with accept and reject buttons.
import { $, actions, api, h, listOf, nodeOf, setStatus, state, when } from './dom.js';
import { nodeLink } from './details.js';

export function statusText(intent) {
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

export async function loadIntents() {
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
    if (state.selected === id) actions.selectNode(id);
  } catch (err) {
    setStatus(`Feedback: ${err.message}`, true);
    for (const b of li.querySelectorAll('button')) b.disabled = false;
  }
}
