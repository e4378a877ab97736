// The timeline view: the namespace's events by time (GET /events, page by page), one lane
// per speaker, with the intents' deadlines (their `due`) marked across the lanes; below it
// the same span as a list, day by day. Wheel to zoom, drag to pan, "Whole span" to reset;
// click an event or a deadline to open it in the side panel.
import { $, MONTHS, actions, api, day, h, listOf, nodeOf, s, setStatus, short, state, when } from './dom.js';
import { KINDS } from './graph.js';

const PAGE = 1000; // events per request
const MAX_EVENTS = 20000; // the most the view loads
const MAX_ROWS = 1500; // the most the list shows at once
const LANES = 8; // speakers with their own lane; the rest share "others"
const LANE_H = 24;
const GUTTER = 118; // room for the lane names
const RIGHT = 22;
const LABEL_ROW = 15; // a row of deadline labels
const LABEL_ROWS = 2;
const AXIS_H = 24;
const HOUR = 3600;
const DAY = 86400;
const PALETTE = ['#2f72d6', '#2e9e5b', '#d1435b', '#8e5cc8', '#138a8a', '#a65300', '#5b6b7d', '#c2185b', '#93a1b2'];
const DEADLINE = KINDS.intent.color;

let tl = fresh();

function fresh() {
  return { events: [], deadlines: [], loading: null, loaded: false, truncated: false, span: null, view: null, hits: new Set(), selected: null };
}

/** Forget the loaded events (a namespace was opened). */
export function resetTimeline() { tl = fresh(); }

/** Load every event (up to MAX_EVENTS) and every intent with a deadline; once per namespace. */
export function loadTimeline() {
  if (!tl.loading) {
    const mine = tl;
    mine.loading = (async () => {
      const events = [];
      let cursor = null;
      do {
        const page = await api(`/events?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        events.push(...listOf(page, 'events').map(nodeOf));
        cursor = page.next_cursor;
        if (cursor && events.length >= MAX_EVENTS) { mine.truncated = true; break; }
      } while (cursor);
      const intents = listOf(await api('/intents?status=all'), 'intents', 'items').map(nodeOf);
      mine.events = events.map((e) => ({ id: e.id, ts: Number(e.attrs.ts ?? e.created_at), source: e.attrs.source || null, text: e.text }));
      mine.deadlines = intents.filter((i) => typeof i.attrs.due === 'number')
        .map((i) => ({ id: i.id, ts: i.attrs.due, text: i.text, status: i.attrs.status || 'pending' }))
        .sort((a, b) => a.ts - b.ts);
      const times = [...mine.events, ...mine.deadlines].map((x) => x.ts);
      if (times.length) {
        const lo = Math.min(...times);
        const hi = Math.max(...times);
        const pad = Math.max((hi - lo) * 0.03, HOUR);
        mine.span = [lo - pad, hi + pad];
        mine.view = [...mine.span];
      }
      mine.loaded = true;
    })().catch((err) => { mine.loading = null; throw err; });
  }
  return tl.loading;
}

// ---------------------------------------------------------------- scale and axis

function hhmm(ts) { return new Date(ts * 1000).toISOString().slice(11, 16); }

/** Axis ticks for [v0, v1]: at most `max`, on whole hours, days or months (UTC). */
function ticks(v0, v1, max) {
  const span = v1 - v0;
  const steps = [HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY];
  const step = steps.find((st) => span / st <= max);
  const out = [];
  if (step) {
    for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      out.push({ t, label: step < DAY ? (t % DAY === 0 ? day(t) : hhmm(t)) : day(t) });
    }
    return out;
  }
  const months = [1, 2, 3, 6, 12, 24, 60, 120].find((m) => span / (m * 30.44 * DAY) <= max) || 240;
  const d = new Date(v0 * 1000);
  let y = d.getUTCFullYear();
  let m = d.getUTCMonth() + 1;
  m = Math.ceil(m / months) * months;
  for (;;) {
    const t = Date.UTC(y, m, 1) / 1000;
    if (t > v1) break;
    if (t >= v0) out.push({ t, label: months >= 12 ? String(new Date(t * 1000).getUTCFullYear()) : `${MONTHS[new Date(t * 1000).getUTCMonth()]} ${new Date(t * 1000).getUTCFullYear()}` });
    m += months;
    y += Math.floor(m / 12);
    m %= 12;
  }
  return out;
}

function lanesOf(events) {
  const counts = new Map();
  for (const e of events) counts.set(e.source || 'unknown', (counts.get(e.source || 'unknown') || 0) + 1);
  const names = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([n]) => n);
  const own = names.length > LANES ? names.slice(0, LANES - 1) : names;
  const lane = new Map(own.map((n, i) => [n, i]));
  const labels = names.length > LANES ? [...own, `${names.length - own.length} others`] : own;
  return { labels, of: (e) => lane.get(e.source || 'unknown') ?? labels.length - 1 };
}

// ---------------------------------------------------------------- drawing

/** Draw the chart and the list for the current view window. */
export function drawTimeline() {
  const box = $('#timeline');
  const chart = box.querySelector('.tl-chart');
  const list = box.querySelector('#timeline-list');
  if (!tl.loaded) return;
  if (!tl.span) {
    chart.replaceChildren(h('p', { class: 'hint' }, 'No events yet.'));
    list.replaceChildren();
    return;
  }
  const [v0, v1] = tl.view;
  const width = Math.max(320, chart.clientWidth || 800);
  const lanes = lanesOf(tl.events);
  const top = LABEL_ROWS * LABEL_ROW + 6;
  const lanesTop = top + AXIS_H;
  const height = lanesTop + lanes.labels.length * LANE_H + 8;
  const x = (t) => GUTTER + ((t - v0) / (v1 - v0)) * (width - GUTTER - RIGHT);
  const svg = s('svg', { width, height, class: 'tl-svg', role: 'img', 'aria-label': 'Events over time, one lane per speaker, with deadlines' });

  lanes.labels.forEach((name, i) => {
    const y = lanesTop + i * LANE_H;
    svg.append(s('rect', { x: 0, y, width, height: LANE_H, class: i % 2 ? 'tl-lane odd' : 'tl-lane' }),
      s('text', { x: 8, y: y + LANE_H / 2 + 4, class: 'tl-lane-name' }, short(name, 16)));
  });
  for (const tk of ticks(v0, v1, Math.max(2, Math.floor((width - GUTTER) / 90)))) {
    const tx = x(tk.t);
    svg.append(s('line', { x1: tx, x2: tx, y1: lanesTop - 4, y2: height - 8, class: 'tl-grid' }),
      s('text', { x: tx, y: lanesTop - 8, class: 'tl-tick', 'text-anchor': 'middle' }, tk.label));
  }
  // Deadlines: a dashed line across the lanes, a diamond on the axis and the intent's text
  // in one of the label rows above (left out where neither row has room; hover shows it).
  const rowEnds = new Array(LABEL_ROWS).fill(-Infinity);
  for (const d of tl.deadlines) {
    if (d.ts < v0 || d.ts > v1) continue;
    const dx = x(d.ts);
    const label = `${day(d.ts)}: ${short(d.text, 30)}`;
    const w = label.length * 5.6;
    // The label reads rightwards from its line, or leftwards where the chart ends.
    const leftward = dx + 8 + w > width - 2;
    const [from, to] = leftward ? [dx - 8 - w, dx + 6] : [dx - 6, dx + 8 + w];
    const row = rowEnds.findIndex((end) => end < from - 6);
    const mid = 4 + (Math.max(row, 0) + 0.5) * LABEL_ROW; // the diamond sits in its label's row
    const g = s('g', { class: `tl-deadline ${d.status}`, 'data-node': d.id, 'data-ts': d.ts, onclick: () => actions.selectNode(d.id) },
      s('title', {}, `due ${when(d.ts)} — ${d.text}`),
      s('line', { x1: dx, x2: dx, y1: mid, y2: height - 8, stroke: DEADLINE, class: 'tl-due-line' }),
      s('path', { d: `M${dx} ${mid - 5}l5 5l-5 5l-5 -5z`, fill: DEADLINE }));
    if (row >= 0) {
      rowEnds[row] = to;
      g.append(s('text', { x: leftward ? dx - 8 : dx + 8, y: mid + 4, 'text-anchor': leftward ? 'end' : 'start', class: 'tl-due-label' }, label));
    }
    svg.append(g);
  }
  for (const e of tl.events) {
    if (e.ts < v0 || e.ts > v1) continue;
    const lane = lanes.of(e);
    const classes = ['tl-event', tl.hits.has(e.id) ? 'hit' : '', tl.selected === e.id ? 'selected' : ''].filter(Boolean).join(' ');
    svg.append(s('circle', {
      class: classes, 'data-node': e.id, 'data-ts': e.ts, cx: x(e.ts), cy: lanesTop + lane * LANE_H + LANE_H / 2, r: 4.5,
      fill: PALETTE[Math.min(lane, PALETTE.length - 1)], onclick: () => actions.selectNode(e.id),
    }, s('title', {}, `${when(e.ts)} · ${e.source || 'unknown'}: ${short(e.text, 200)}`)));
  }
  chart.replaceChildren(svg);
  attachZoom(svg, width);
  const shown = tl.events.filter((e) => e.ts >= v0 && e.ts <= v1).length;
  box.querySelector('.tl-range').textContent = `${when(v0)} – ${when(v1)} · ${shown} of ${tl.events.length} events`
    + (tl.truncated ? ` (the first ${tl.events.length} only)` : '');
  drawList(list, v0, v1);
}

function drawList(list, v0, v1) {
  const rows = [
    ...tl.events.filter((e) => e.ts >= v0 && e.ts <= v1).map((e) => ({ ...e, type: 'event' })),
    ...tl.deadlines.filter((d) => d.ts >= v0 && d.ts <= v1).map((d) => ({ ...d, type: 'deadline' })),
  ].sort((a, b) => a.ts - b.ts || (a.type === 'deadline') - (b.type === 'deadline'));
  const items = [];
  let lastDay = '';
  for (const r of rows.slice(0, MAX_ROWS)) {
    const d = when(r.ts).slice(0, 10);
    if (d !== lastDay) { items.push(h('li', { class: 'tl-day' }, d)); lastDay = d; }
    items.push(r.type === 'event'
      ? h('li', { class: `tl-row event${tl.selected === r.id ? ' selected' : ''}${tl.hits.has(r.id) ? ' hit' : ''}`, 'data-node': r.id, onclick: () => actions.selectNode(r.id) },
        h('span', { class: 'when' }, hhmm(r.ts)), ' ', h('span', { class: 'who' }, r.source || 'unknown'), ': ', h('span', { class: 'text' }, r.text))
      : h('li', { class: `tl-row deadline ${r.status}`, 'data-node': r.id, onclick: () => actions.selectNode(r.id) },
        h('span', { class: 'when' }, hhmm(r.ts)), ' ', h('span', { class: 'due' }, 'due'), ' ', h('span', { class: 'text' }, r.text)));
  }
  if (rows.length > MAX_ROWS) items.push(h('li', { class: 'hint' }, `… and ${rows.length - MAX_ROWS} more: zoom in to see them`));
  list.replaceChildren(...items);
}

function attachZoom(svg, width) {
  const [v0, v1] = tl.view;
  const perPx = (v1 - v0) / (width - GUTTER - RIGHT);
  svg.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const at = v0 + (ev.offsetX - GUTTER) * perPx;
    const f = ev.deltaY > 0 ? 1.25 : 0.8;
    setView(at - (at - v0) * f, at + (v1 - at) * f);
  }, { passive: false });
  svg.addEventListener('pointerdown', (ev) => {
    if (ev.target.closest('.tl-event, .tl-deadline')) return;
    const startX = ev.clientX;
    svg.setPointerCapture(ev.pointerId);
    svg.classList.add('panning');
    svg.addEventListener('pointerup', (up) => {
      svg.classList.remove('panning');
      const dt = (up.clientX - startX) * perPx;
      if (Math.abs(up.clientX - startX) > 3) setView(v0 - dt, v1 - dt);
    }, { once: true });
  });
}

function setView(a, b) {
  const [s0, s1] = tl.span;
  const span = Math.min(Math.max(b - a, HOUR), (s1 - s0) * 4);
  const mid = (a + b) / 2;
  tl.view = [mid - span / 2, mid + span / 2];
  drawTimeline();
}

/** Show the whole span again. */
export function wholeSpan() {
  if (tl.span) { tl.view = [...tl.span]; drawTimeline(); }
}

/** Mark the recalled evidence on the timeline. */
export function markTimeline(ids) {
  tl.hits = ids;
  for (const el of document.querySelectorAll('#timeline [data-node]')) {
    if (el.matches('.tl-event, .tl-row.event')) el.classList.toggle('hit', ids.has(el.dataset.node));
  }
}

/** Mark the selected node on the timeline. */
export function selectOnTimeline(id) {
  tl.selected = id;
  for (const el of document.querySelectorAll('#timeline .selected')) el.classList.remove('selected');
  for (const el of document.querySelectorAll(`#timeline [data-node="${CSS.escape(id)}"]`)) el.classList.add('selected');
}

/** Load if needed, then draw (the view was opened or resized). */
export async function showTimeline() {
  try {
    if (!tl.loaded) setStatus('Loading the timeline…');
    await loadTimeline();
    drawTimeline();
    setStatus(state.summary);
    $('#timeline').dataset.ready = 'true';
  } catch (err) {
    setStatus(`Timeline: ${err.message}`, true);
  }
}
