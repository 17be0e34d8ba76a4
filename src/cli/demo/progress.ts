/**
 * The demo's live view. On a terminal: a progress bar and a table of states per queue,
 * redrawn in place. Otherwise (a pipe, a CI log): one plain line per second.
 */
import { JOB_STATES, type JobState } from '../../types.js';
import { stateStyle, table } from '../format.js';
import { type Paint, painter } from '../terminal.js';

export type StateCounts = Record<JobState, number>;

export interface Progress {
  /** Per queue, this run's jobs by state. */
  queues: ReadonlyMap<string, StateCounts>;
  finished: number;
  total: number;
  elapsedMs: number;
}

export interface ProgressView {
  update(progress: Progress): void;
  /** Ends the view: `clear` erases the live frame (the summary follows), else it stays. */
  finish(clear: boolean): void;
}

const BAR_WIDTH = 32;
const PLAIN_EVERY_MS = 1_000;

export function createProgressView(stream: NodeJS.WriteStream): ProgressView {
  return stream.isTTY ? liveView(stream) : plainView(stream);
}

export function emptyCounts(): StateCounts {
  return Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as StateCounts;
}

function liveView(stream: NodeJS.WriteStream): ProgressView {
  const paint = painter(stream);
  let drawn = 0;
  const restoreCursor = () => stream.write('\x1b[?25h');
  process.once('exit', restoreCursor);
  stream.write('\x1b[?25l');
  return {
    update(progress) {
      const width = stream.columns || 80;
      const done = Math.round((progress.finished / Math.max(1, progress.total)) * BAR_WIDTH);
      const bar = paint('green', '█'.repeat(done)) + paint('dim', '░'.repeat(BAR_WIDTH - done));
      const lines = [
        `  ${bar} ${progress.finished}/${progress.total} jobs finished · ${seconds(progress.elapsedMs)}`,
        '',
        ...queueTable(progress.queues, paint).map((line) => `  ${line}`),
      ];
      // Back to the first line of the previous frame, clear to the end of the screen, redraw.
      const up = drawn > 0 ? `\x1b[${drawn}F\x1b[J` : '';
      stream.write(up + lines.map((line) => clip(line, width)).join('\n') + '\n');
      drawn = lines.length;
    },
    finish(clear) {
      if (clear && drawn > 0) stream.write(`\x1b[${drawn}F\x1b[J`);
      restoreCursor();
      process.off('exit', restoreCursor);
    },
  };
}

function plainView(stream: NodeJS.WriteStream): ProgressView {
  let lastAt = -Infinity;
  return {
    update(progress) {
      const complete = progress.finished === progress.total;
      if (!complete && progress.elapsedMs - lastAt < PLAIN_EVERY_MS) return;
      lastAt = progress.elapsedMs;
      const totals = emptyCounts();
      for (const counts of progress.queues.values()) for (const s of JOB_STATES) totals[s] += counts[s];
      const states = JOB_STATES.filter((s) => totals[s] > 0).map((s) => `${s} ${totals[s]}`);
      stream.write(`[${seconds(progress.elapsedMs)}] ${progress.finished}/${progress.total} finished: ${states.join(', ')}\n`);
    },
    finish() {},
  };
}

/** Per queue, its jobs by state (zeroes as dots, so that the live ones stand out), and its
 *  attempts when given (more attempts than jobs: retries). Without them it fits 80 columns. */
export function queueTable(queues: ReadonlyMap<string, StateCounts>, paint: Paint, attempts?: ReadonlyMap<string, number>): string[] {
  const right = (header: string) => ({ header, align: 'right' as const });
  const columns = [{ header: 'QUEUE' }, ...JOB_STATES.map((s) => right(s.toUpperCase())), ...(attempts ? [right('ATTEMPTS')] : [])];
  const rows = [...queues].map(([queue, counts]) => [
    queue,
    ...JOB_STATES.map((s) => (counts[s] ? String(counts[s]) : '·')),
    ...(attempts ? [String(attempts.get(queue) ?? 0)] : []),
  ]);
  const style = (r: number, c: number) => {
    const state = JOB_STATES[c - 1];
    if (state === undefined) return undefined;
    return rows[r]![c] === '·' ? 'dim' : stateStyle(state);
  };
  return table(columns, rows, style, paint);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Cuts a line to the terminal width, escape codes not counted, so that no line wraps
 *  (a wrapped line would throw the redraw's line count off). */
function clip(line: string, width: number): string {
  let visible = 0;
  let out = '';
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\x1b') {
      const end = line.indexOf('m', i);
      out += line.slice(i, end + 1);
      i = end;
      continue;
    }
    if (visible >= width - 1) continue;
    out += line[i];
    visible += 1;
  }
  return out;
}
