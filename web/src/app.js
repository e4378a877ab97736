// The graph explorer page of `enfold serve` (/ui): opens a namespace (from the form or a
// `?ns=` link) and shows it as a graph or as a timeline, answers questions through recall
// with their evidence, shows a node (a concept with its events, facts and claims), and
// lists intents with accept/reject buttons. It talks only to the /v1 HTTP API; the key is
// kept in the tab's sessionStorage and never in the address bar.
import { $, actions, api, setStatus, state } from './dom.js';
import { selectNode } from './details.js';
import { drawGraph } from './graph.js';
import { loadIntents } from './intents.js';
import { clearSearch, search } from './search.js';
import { drawTimeline, resetTimeline, selectOnTimeline, showTimeline, wholeSpan } from './timeline.js';

const VIEWS = ['graph', 'timeline'];

/** The address bar names what is shown (namespace, view, node) so it can be shared. */
function updateUrl() {
  if (!state.ns) return;
  const p = new URLSearchParams({ ns: state.ns });
  if (state.view !== 'graph') p.set('view', state.view);
  if (state.selected) p.set('node', state.selected);
  history.replaceState(null, '', `${location.pathname}?${p}`);
}

function showView(view) {
  state.view = VIEWS.includes(view) ? view : 'graph';
  for (const b of document.querySelectorAll('#views [role=tab]')) {
    b.setAttribute('aria-selected', String(b.dataset.view === state.view));
  }
  $('#timeline').hidden = state.view !== 'timeline';
  $('#fit').hidden = state.view !== 'graph';
  $('#whole').hidden = state.view !== 'timeline';
  if (state.view === 'graph' && state.cy) actions.refreshLabels(0);
  if (state.view === 'timeline' && document.body.dataset.ready === 'true') showTimeline();
  updateUrl();
}

actions.selectNode = selectNode;
actions.nodeSelected = (id) => { selectOnTimeline(id); updateUrl(); };
actions.showView = showView;

async function open(node = null) {
  delete document.body.dataset.ready;
  delete $('#timeline').dataset.ready;
  resetTimeline();
  clearSearch();
  state.selected = null;
  setStatus(`Loading ${state.ns}…`);
  try {
    const [graph] = await Promise.all([api(`/graph?limit=${state.limit}`), loadIntents()]);
    const cy = drawGraph(graph);
    $('#q').disabled = false;
    $('#fit').disabled = false;
    const total = graph.total ?? cy.nodes().length;
    state.summary = `${state.ns}: ${cy.nodes().length} of ${total} nodes, ${cy.edges().length} edges`
      + (graph.truncated ? ' (the best-connected first; raise “Nodes” for more)' : '');
    setStatus(state.summary);
    updateUrl();
    document.body.dataset.ready = 'true';
    if (state.view === 'timeline') showTimeline();
    if (node) selectNode(node);
  } catch (err) {
    setStatus(err.status === 401 || err.status === 404
      ? `${err.message} — check the namespace and its API key.` : err.message, true);
    if (err.status === 401) $('#key').focus();
  }
}

function toggleLegend() {
  const pane = $('#legend-pane');
  const open = pane.classList.toggle('collapsed') === false;
  $('#legend-toggle').setAttribute('aria-expanded', String(open));
  $('#legend-toggle').textContent = open ? '‹' : '›';
  if (state.cy) { state.cy.resize(); actions.refreshLabels(0); }
}

function start() {
  const params = new URLSearchParams(location.search);
  if (params.has('key')) { // a secret in an address ends up in histories and logs: never used
    params.delete('key');
    const rest = params.toString();
    history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}`);
  }
  const linked = (params.get('ns') || '').trim();
  const saved = { ns: sessionStorage.getItem('enfold.ns'), key: sessionStorage.getItem('enfold.key') };
  $('#ns').value = linked || saved.ns || '';
  $('#key').value = saved.key || '';
  $('#limit').value = sessionStorage.getItem('enfold.limit') || '400';
  let linkedNode = params.get('node');
  $('#connect').addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.ns = $('#ns').value.trim();
    state.key = $('#key').value;
    state.limit = Math.max(10, Number($('#limit').value) || 400);
    sessionStorage.setItem('enfold.ns', state.ns);
    sessionStorage.setItem('enfold.key', state.key);
    sessionStorage.setItem('enfold.limit', String(state.limit));
    open(linkedNode);
    linkedNode = null;
  });
  let timer = null;
  $('#q').addEventListener('input', (ev) => {
    clearTimeout(timer);
    timer = setTimeout(() => search(ev.target.value), 300);
  });
  $('#search').addEventListener('submit', (ev) => { ev.preventDefault(); clearTimeout(timer); search($('#q').value); });
  $('#fit').addEventListener('click', () => state.cy && state.cy.fit(undefined, 30));
  $('#whole').addEventListener('click', wholeSpan);
  $('#legend-toggle').addEventListener('click', toggleLegend);
  for (const b of document.querySelectorAll('#views [role=tab]')) b.addEventListener('click', () => showView(b.dataset.view));
  $('#intent-status').addEventListener('change', () => loadIntents().catch((err) => setStatus(err.message, true)));
  let resizing = null;
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => { if (state.view === 'timeline') drawTimeline(); }, 150);
  });
  showView(params.get('view') || 'graph');
  if ($('#ns').value) $('#connect').requestSubmit();
}

// A handle for people debugging in the console and for the browser test.
window.enfoldUI = {
  state, selectNode, search, showView,
  get cy() { return state.cy; },
  labelled() { return state.cy ? state.cy.nodes('.labelled, .full').map((n) => n.id()) : []; },
};

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
