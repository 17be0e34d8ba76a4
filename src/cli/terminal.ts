/** ANSI styling for a terminal: only when the stream is a TTY and NO_COLOR is not set. */

const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
} as const;

export type Style = keyof typeof CODES;
export type Paint = (style: Style | undefined, text: string) => string;

export function painter(stream: NodeJS.WriteStream): Paint {
  const on = stream.isTTY === true && process.env.NO_COLOR === undefined;
  return (style, text) => {
    if (!on || style === undefined) return text;
    const [open, close] = CODES[style];
    return `\x1b[${open}m${text}\x1b[${close}m`;
  };
}

/** How each row state is shown. */
export const STATE_STYLE: Partial<Record<string, Style>> = {
  pending: 'blue',
  running: 'cyan',
  retrying: 'yellow',
  completed: 'green',
  dead: 'red',
  skipped: 'magenta',
};
