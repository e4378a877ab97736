// Which nodes of the graph show their label, and where: a greedy placement that keeps labels
// from overlapping. Labels keep one size on screen whatever the zoom; the nodes that matter
// most (the selected and hovered ones, then matches, then hubs by degree) place theirs first,
// each below, above, right or left of its node, wherever it covers neither a label already
// placed nor another node; a label with no such place is left out — so around a hub only
// the labels with room show, and zooming in makes room for more.

export const LABEL_PX = 11; // label font size on screen, at any zoom
export const FULL_WIDTH = 260; // wrap width (screen px) of a full label (hover, selection)
export const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const MARGIN = 3; // screen px between a node and its label
const PAD = 2; // text background padding (screen px)
const GAP = 2; // extra room kept between two labels
// Cytoscape's bounds of a label (what boundingBox() and its hit tests use) reach 2 model px
// beyond the drawn background on every side; placement keeps those bounds apart too.
const BOUNDS_SLACK = 2;
const MIN_NODE_PX = 5; // a node drawn smaller than this gets no label (zoomed far out)
const HUBS_MIN = 5; // at least this many of the best-scored labels may cover other nodes,
const HUBS_SHARE = 0.03; // or this share of the nodes in view

// Derived kinds name things; events and time anchors are many and alike, so they yield.
// A node's score is its degree plus its kind's bonus; higher scores place their labels first.
const KIND_BONUS = { concept: 8, intent: 8, person: 4, fact: 3, claim: 2, time: 0, event: 0 };

/** Style values that keep labels one size on screen (cytoscape scales them by the zoom). */
export const screen = (px) => (ele) => px / ele.cy().zoom();

let measurer = null;
const widths = new Map();

/** The width in screen pixels of a label at LABEL_PX, seen at `zoom`: measured as cytoscape
 * measures it (the canvas font at the model size LABEL_PX / zoom, rounded up to a whole model
 * pixel) and scaled to the screen, so a label's box here is the box cytoscape draws. Text does
 * not scale in proportion to its font size (hinting), so a width measured once at LABEL_PX
 * can be off by several pixels at another zoom. */
export function textWidth(text, zoom = 1) {
  const px = LABEL_PX / zoom;
  const key = `${px}|${text}`;
  let w = widths.get(key);
  if (w === undefined) {
    if (measurer === null) measurer = document.createElement('canvas').getContext('2d');
    measurer.font = `normal normal ${px}px ${FONT}`;
    w = Math.ceil(measurer.measureText(text).width) * zoom;
    if (widths.size > 20000) widths.clear();
    widths.set(key, w);
  }
  return w;
}

/** Selected and hovered nodes show their full label whatever it covers. */
function forced(n) {
  return n.selected() || n.hasClass('hover');
}

// Where a label may sit around its node, in the order tried.
export const POSITIONS = ['bottom', 'top', 'right', 'left'];
export const VALIGN = { bottom: 'bottom', top: 'top', right: 'center', left: 'center' };
export const HALIGN = { bottom: 'center', top: 'center', right: 'right', left: 'left' };
export const MARGIN_X = { right: MARGIN, left: -MARGIN };
export const MARGIN_Y = { bottom: MARGIN, top: -MARGIN };

/** The screen box [x1, y1, x2, y2] a node's label takes at a position. */
function labelBox(n, pos, full) {
  const p = n.renderedPosition();
  const w = textWidth(full ? n.data('full') : n.data('label'), n.cy().zoom());
  const lines = full ? Math.max(1, Math.ceil((w * 1.15) / FULL_WIDTH)) : 1;
  const width = (full ? Math.min(w, FULL_WIDTH) : w) + 2 * PAD;
  const height = lines * LABEL_PX * 1.3 + 2 * PAD;
  const hw = n.renderedOuterWidth() / 2;
  const hh = n.renderedOuterHeight() / 2;
  let x1;
  let y1;
  if (pos === 'bottom' || pos === 'top') {
    x1 = p.x - width / 2;
    y1 = pos === 'bottom' ? p.y + hh + MARGIN - PAD : p.y - hh - MARGIN - height + PAD;
  } else {
    y1 = p.y - height / 2;
    x1 = pos === 'right' ? p.x + hw + MARGIN - PAD : p.x - hw - MARGIN - width + PAD;
  }
  const room = GAP + BOUNDS_SLACK * n.cy().zoom();
  return [x1 - room, y1 - room, x1 + width + room, y1 + height + room];
}

function overlaps(a, b) {
  return a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];
}

/** Boxes on a uniform grid of screen cells, for overlap queries near a box. */
class Grid {
  constructor(cell = 48) { this.cell = cell; this.cells = new Map(); }

  *cellsOf(b) {
    const c = this.cell;
    for (let i = Math.floor(b[0] / c); i <= Math.floor(b[2] / c); i++) {
      for (let j = Math.floor(b[1] / c); j <= Math.floor(b[3] / c); j++) yield `${i},${j}`;
    }
  }

  add(box, owner) {
    for (const k of this.cellsOf(box)) {
      const list = this.cells.get(k);
      if (list) list.push([box, owner]); else this.cells.set(k, [[box, owner]]);
    }
  }

  hits(box, except) {
    for (const k of this.cellsOf(box)) {
      for (const [b, owner] of this.cells.get(k) || []) if (owner !== except && overlaps(b, box)) return true;
    }
    return false;
  }
}

/** Label the nodes whose labels fit: `labelled` (short label, at data `pos`) or `full`. A
 * label may not cover another label; it also avoids other nodes' bodies, except a hub's
 * when no position around it is free of them. */
export function placeLabels(cy) {
  const W = cy.width();
  const H = cy.height();
  const candidates = [];
  const bodies = new Grid();
  cy.nodes().forEach((n) => {
    if (n.hasClass('hidden') || n.hasClass('faded')) return;
    const p = n.renderedPosition();
    if (p.x < -W * 0.2 || p.x > W * 1.2 || p.y < -H * 0.2 || p.y > H * 1.2) return;
    const hw = n.renderedOuterWidth() / 2;
    const hh = n.renderedOuterHeight() / 2;
    bodies.add([p.x - hw, p.y - hh, p.x + hw, p.y + hh], n.id());
    const full = forced(n);
    if (!n.data('label') || (!full && hw * 2 < MIN_NODE_PX)) return;
    const score = n.degree() + (KIND_BONUS[n.data('kind')] ?? 1);
    candidates.push({ n, full, match: n.hasClass('match'), score });
  });
  candidates.sort((a, b) => b.full - a.full || b.match - a.match || b.score - a.score
    || (a.n.id() < b.n.id() ? -1 : 1));
  // The hubs: matches and the best-scored few, whose labels may cover other nodes.
  const hubs = Math.max(HUBS_MIN, Math.ceil(candidates.length * HUBS_SHARE));
  candidates.forEach((c, i) => { c.hub = c.match || i < hubs; });
  const labels = new Grid();
  const labelled = [];
  const full = [];
  for (const c of candidates) {
    const id = c.n.id();
    if (c.full) {
      labels.add(labelBox(c.n, 'bottom', true), id);
      full.push(c.n);
      continue;
    }
    const fits = (pos, avoidBodies) => {
      const box = labelBox(c.n, pos, false);
      const inside = box[0] >= 0 && box[1] >= 0 && box[2] <= W && box[3] <= H;
      return inside && !labels.hits(box, id) && !(avoidBodies && bodies.hits(box, id));
    };
    let pos = POSITIONS.find((p) => fits(p, true));
    if (!pos && c.hub) pos = POSITIONS.find((p) => fits(p, false));
    if (!pos) continue;
    labels.add(labelBox(c.n, pos, false), id);
    if (c.n.data('pos') !== pos) c.n.data('pos', pos);
    labelled.push(c.n);
  }
  cy.batch(() => {
    cy.nodes().removeClass('labelled full');
    cy.collection(labelled).addClass('labelled');
    cy.collection(full).addClass('full');
    for (const n of full) if (n.data('pos') !== 'bottom') n.data('pos', 'bottom');
  });
  cy.style().update(); // font sizes follow the zoom
  // Cytoscape keeps each label's bounds (its hit tests, culling and boundingBox()) until a
  // style property changes its value, and a size that follows the zoom is not seen to change:
  // without this the bounds of a label kept its size at an earlier zoom.
  cy.nodes().dirtyBoundingBoxCache();
}

/** placeLabels once the viewport has been still for a moment (and at most once a frame);
 * the graph's scratch `labelsPending` is true until it has run. */
export function labelScheduler(cy) {
  let timer = null;
  return (delay = 60) => {
    clearTimeout(timer);
    cy.scratch('labelsPending', true);
    const place = () => requestAnimationFrame(() => {
      if (cy.destroyed()) return;
      // A moving viewport (a pan or zoom animation) is not still: labels placed for one of
      // its frames would be wrong for the next; wait for it to end.
      if (cy.animated()) { timer = setTimeout(place, delay); return; }
      placeLabels(cy);
      cy.scratch('labelsPending', false);
    });
    timer = setTimeout(place, delay);
  };
}
