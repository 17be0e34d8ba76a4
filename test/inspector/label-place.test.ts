/**
 * placeLabel (src/inspector/label-place.ts): a label goes beside its edge, at the middle when
 * that is free, and moves along the edge, to the other side or farther out when a box or a line
 * is in the way; it never leaves the canvas.
 */
import { describe, expect, it } from 'vitest';
import { type Box, intersects, placeLabel, samplePoints, textBox } from '../../src/inspector/label-place.js';

const canvas: Box = { x: 0, y: 0, width: 400, height: 200 };
/** A straight edge from (100, 100) to (300, 100); its normal points down. */
const edge = { at: (t: number) => ({ x: 100 + 200 * t, y: 100 }), normal: { x: 0, y: 1 } };
const request = { ...edge, lines: ['handler returned'], fontSize: 13, side: -1 };

describe('placeLabel', () => {
  it('puts the label above the middle of a straight edge, clear of the line', () => {
    const spot = placeLabel(request, [], [], canvas);
    expect(spot).toMatchObject({ x: 200, anchor: 'middle' });
    expect(spot.box.y + spot.box.height).toBeLessThanOrEqual(90);
    expect(spot.box).toEqual(textBox(spot.x, spot.y, 'middle', request.lines, 13));
  });

  it('moves away from a box in the way, and from a line when it can', () => {
    const first = placeLabel(request, [], [], canvas);
    const moved = placeLabel(request, [first.box], [], canvas);
    expect(intersects(moved.box, first.box)).toBe(false);
    const crossing = samplePoints((t) => ({ x: 170, y: 200 * t }), 200);
    const offLine = placeLabel(request, [], crossing, canvas);
    expect(offLine.x).toBeGreaterThan(200);
    expect(crossing.some((p) => p.x >= offLine.box.x && p.x <= offLine.box.x + offLine.box.width && p.y >= offLine.box.y && p.y <= offLine.box.y + offLine.box.height)).toBe(false);
  });

  it('keeps on the canvas: with no room above, it goes below', () => {
    const spot = placeLabel(request, [], [], { x: 0, y: 92, width: 400, height: 108 });
    expect(spot.box.y).toBeGreaterThanOrEqual(100);
  });
});
