/**
 * Where an edge's label goes in a hand-placed diagram (story-svg.ts): beside its curve, at the
 * first of a list of spots along it (middle first, both sides, near then farther) whose box
 * meets no other box (states, step numbers, labels already placed) and stays on the canvas;
 * among those, one that also keeps off every line is preferred. Text boxes are estimated from
 * the number of characters, on the wide side of the fonts a browser picks for system-ui.
 */

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Point {
  x: number;
  y: number;
}

export type Anchor = 'start' | 'middle' | 'end';

/** Width of a character and height of a line, per pixel of font size. */
const CHAR_EM = 0.6;
const LINE_EM = 1.2;

export function intersects(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

function contains(box: Box, p: Point): boolean {
  return p.x >= box.x && p.x <= box.x + box.width && p.y >= box.y && p.y <= box.y + box.height;
}

/** The box of text lines whose first baseline is at `y`, anchored at `x`. */
export function textBox(x: number, y: number, anchor: Anchor, lines: readonly string[], fontSize: number): Box {
  const width = Math.max(...lines.map((line) => line.length)) * fontSize * CHAR_EM;
  const left = anchor === 'start' ? x : anchor === 'middle' ? x - width / 2 : x - width;
  // From the first line's ascent to the last line's descent.
  return { x: left, y: y - fontSize, width, height: lines.length * fontSize * LINE_EM };
}

export interface LabelSpot {
  x: number;
  /** The first line's baseline. */
  y: number;
  anchor: Anchor;
  box: Box;
}

export interface LabelRequest {
  lines: readonly string[];
  fontSize: number;
  /** The point at `t` along the edge, and the unit normal of the edge there. */
  at(t: number): Point;
  normal: Point;
  /** The side of the normal to try first (1 or -1). */
  side: number;
}

const ALONG = [0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78];
const AWAY = [10, 22, 36];

export function placeLabel(request: LabelRequest, boxes: readonly Box[], lines: readonly Point[], canvas: Box): LabelSpot {
  const { normal, fontSize } = request;
  const height = request.lines.length * fontSize * LINE_EM;
  let fallback: LabelSpot | undefined;
  let first: LabelSpot | undefined;
  for (const away of AWAY) {
    for (const t of ALONG) {
      for (const side of [request.side, -request.side]) {
        const p = request.at(t);
        const nx = normal.x * side;
        const ny = normal.y * side;
        const anchor: Anchor = Math.abs(nx) < 0.5 ? 'middle' : nx > 0 ? 'start' : 'end';
        const x = p.x + nx * away;
        // Above or below the line, the whole block clears it; beside it, centred on it.
        const top = Math.abs(nx) < 0.5 ? (ny < 0 ? p.y + ny * away - height : p.y + ny * away) : p.y + ny * away - height / 2;
        const spot: LabelSpot = { x, y: top + fontSize, anchor, box: textBox(x, top + fontSize, anchor, request.lines, fontSize) };
        first ??= spot;
        if (!inside(spot.box, canvas) || boxes.some((b) => intersects(b, spot.box))) continue;
        if (!lines.some((q) => contains(spot.box, q))) return spot;
        fallback ??= spot;
      }
    }
  }
  // No free spot (a diagram changed without room for its labels): the middle, overlapping.
  return fallback ?? first!;
}

function inside(box: Box, canvas: Box): boolean {
  return box.x >= canvas.x && box.y >= canvas.y && box.x + box.width <= canvas.x + canvas.width && box.y + box.height <= canvas.y + canvas.height;
}

/** Points every few pixels along a curve, for keeping labels off it. */
export function samplePoints(at: (t: number) => Point, length: number, every = 6): Point[] {
  const count = Math.max(2, Math.ceil(length / every));
  return Array.from({ length: count + 1 }, (_, i) => at(i / count));
}
