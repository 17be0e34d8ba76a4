/** Plain-text rendering shared by the commands: aligned tables, times, errors, history. */
import type { JobErrorInfo, JobEvent, JobProgress, JobRecord } from '../types.js';
import { type Paint, STATE_STYLE } from './terminal.js';

export interface Column {
  header: string;
  align?: 'left' | 'right';
}

/** Rows of cells under headers, each column as wide as its widest cell; `paint` styles a
 *  cell after padding so that escape codes do not upset the alignment. */
export function table(
  columns: readonly Column[],
  rows: readonly (readonly string[])[],
  style: (row: number, column: number) => Parameters<Paint>[0] = () => undefined,
  paint: Paint = (_, text) => text,
): string[] {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[], styleOf: (column: number) => Parameters<Paint>[0]) =>
    cells
      .map((cell, i) => {
        const padded = columns[i]?.align === 'right' ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!);
        return paint(styleOf(i), padded);
      })
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header), () => 'bold'), ...rows.map((r, i) => line(r, (c) => style(i, c)))];
}

/** `2026-06-01 09:00:00Z`: second precision, always UTC. */
export function time(date: Date | null): string {
  return date ? `${date.toISOString().slice(0, 19).replace('T', ' ')}Z` : '-';
}

export function errorText(error: JobErrorInfo | null): string {
  return error ? `${error.code}: ${error.message.replace(/\s*\n\s*/g, ' ')}` : '';
}

export function stateStyle(state: string): Parameters<Paint>[0] {
  return STATE_STYLE[state];
}

export function jobsTable(jobs: readonly JobRecord[], paint: Paint): string[] {
  // A progress column only for a page where some job reported progress.
  const withProgress = jobs.some((j) => j.progress !== null);
  const columns: Column[] = [
    { header: 'ID', align: 'right' },
    { header: 'QUEUE' },
    { header: 'KIND' },
    { header: 'STATE' },
    ...(withProgress ? [{ header: 'PROGRESS' }] : []),
    { header: 'ATTEMPT', align: 'right' },
    { header: 'UPDATED' },
    { header: 'ERROR' },
  ];
  const rows = jobs.map((j) => [
    j.id,
    j.queue,
    j.kind,
    j.state,
    ...(withProgress ? [j.progress ? truncate(progressText(j.progress), 30) : ''] : []),
    `${j.attempt}/${j.maxAttempts}`,
    time(j.updatedAt),
    j.error ? truncate(errorText(j.error), 60) : '',
  ]);
  return table(columns, rows, (row, column) => (column === 3 ? stateStyle(rows[row]![3]!) : undefined), paint);
}

/** `40% parsing pages`. */
export function progressText(progress: JobProgress): string {
  const percent = `${Math.round(progress.percent * 10) / 10}%`;
  return progress.message ? `${percent} ${progress.message.replace(/\s*\n\s*/g, ' ')}` : percent;
}

/** `pending → running → retrying → running → completed`, from the stored history. */
export function historyPath(events: readonly JobEvent[]): string {
  return events.map((e) => e.toState).join(' → ');
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
