// Small helpers of the page: building DOM without parsing HTML, times, the status line, and
// the shared state every view reads.

export const state = {
  ns: '', key: '', limit: 400, cy: null, selected: null, hiddenKinds: new Set(), view: 'graph',
  summary: '', // the status line once a namespace is open
};

// What the views call on each other (set by app.js), so that no module imports a view that
// imports it back.
export const actions = {
  selectNode: () => {}, nodeSelected: () => {}, showView: () => {}, refreshLabels: () => {},
};

export const $ = (sel) => document.querySelector(sel);

/** Build a DOM element; children are nodes or text (never parsed as HTML). */
export function h(tag, attrs = {}, ...children) {
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

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes (children appended like h()). */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/** The text on one line, cut to n characters with an ellipsis. */
export function short(text, n = 42) {
  const t = String(text ?? '').replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

function dateOf(ts) {
  if (ts === undefined || ts === null || ts === '') return null;
  const d = new Date(Number(ts) * 1000);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** Epoch seconds as "YYYY-MM-DD HH:MM" (UTC, like the API's dates). */
export function when(ts) {
  const d = dateOf(ts);
  if (d === null) return ts === undefined || ts === null ? '' : String(ts);
  return d.toISOString().slice(0, 16).replace('T', ' ');
}

export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Epoch seconds as a short day, "Oct 3" (UTC). */
export function day(ts) {
  const d = dateOf(ts);
  return d === null ? '' : `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
}

/** An event's short name: its day and speaker, "Oct 3 · Maya". */
export function eventLabel(ts, source) {
  return [day(ts), source].filter(Boolean).join(' · ') || 'event';
}

export function setStatus(text, isError = false) {
  const el = $('#status');
  el.textContent = text;
  el.classList.toggle('error', isError);
}

/** The list inside a response that may be a bare array or wrap it under a key. */
export function listOf(data, ...keys) {
  if (Array.isArray(data)) return data;
  for (const k of keys) if (data && Array.isArray(data[k])) return data[k];
  return [];
}

/** A node record from the API, flattened to {id, kind, text, label, attrs, ...}. */
export function nodeOf(raw) {
  const n = raw && raw.node ? { ...raw.node, score: raw.score } : { ...raw };
  n.attrs = n.attrs || {};
  return n;
}

/** The kind of a node id by its prefix (ids are "<prefix>_<hex>"), for nodes not drawn. */
const PREFIXES = { ev: 'event', co: 'concept', in: 'intent', ti: 'time', pe: 'person', cl: 'claim', fa: 'fact' };
export function kindOfId(id) {
  return PREFIXES[String(id).split('_', 1)[0]] || null;
}

// ---------------------------------------------------------------- the HTTP API

export class ApiError extends Error {
  constructor(status, title, detail) {
    super(detail ? `${title}: ${detail}` : title);
    this.status = status;
  }
}

/** A call to this namespace's /v1 API with the tab's key; problem+json becomes ApiError. */
export async function api(path, { method = 'GET', body } = {}) {
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
