import { Command } from 'commander';
import { sendSignal } from '../../signals.js';
import { assertJsonPayload } from '../../validation.js';
import { addConnectionOptions, type ConnectionOptions, withStore } from '../connection.js';
import { print, printJson } from '../output.js';
import { parseJobId, parseSignalName } from '../parse.js';
import { readPayload } from './enqueue.js';

interface SignalOptions extends ConnectionOptions {
  payloadFile?: string;
  json?: boolean;
}

export function signalCommand(): Command {
  return addConnectionOptions(new Command('signal'))
    .summary('send a signal to a job that waits (or will wait) for it')
    .description(
      'Send a signal to a job (docs/durable-jobs.md). A job sleeping in job.waitForSignal(name) wakes at once and ' +
        'receives the payload; otherwise the signal waits in the job\'s mailbox for its next wait of that name. ' +
        'A job that has ended cannot be signalled (exit 5).',
    )
    .argument('<id>', 'job id', parseJobId)
    .argument('<name>', 'signal name', parseSignalName)
    .argument('[payload]', 'the payload as JSON; - reads it from stdin (default: {})')
    .option('--payload-file <path>', 'read the payload (JSON) from this file')
    .option('--json', 'print {"id", "name", "delivered", "state"}')
    .action(async (id: string, name: string, payloadArgument: string | undefined, options: SignalOptions) => {
      const payload = await readPayload(payloadArgument, options.payloadFile);
      // Checked before connecting: a bad payload never reaches the store.
      assertJsonPayload(payload);
      await withStore(options, async ({ store }) => {
        const { delivered, state } = await sendSignal(store, id, name, payload);
        if (options.json) printJson({ id, name, delivered, state });
        else if (delivered === 'woke') print(`job ${id} woke: signal "${name}" delivered, the job is ${state} again`);
        else print(`job ${id} is ${state}: signal "${name}" kept in its mailbox for its next wait for "${name}"`);
      });
    });
}
