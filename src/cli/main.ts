#!/usr/bin/env node
/**
 * The `jobvisor` command. Each command is built by commands/<name>.ts; registering one is
 * its entry in the list below.
 */
import { cancelCommand } from './commands/cancel.js';
import { demoCommand } from './commands/demo.js';
import { diagramCommand } from './commands/diagram.js';
import { enqueueCommand } from './commands/enqueue.js';
import { inspectCommand } from './commands/inspect.js';
import { flowCommand } from './commands/flow.js';
import { jobCommand } from './commands/job.js';
import { jobsCommand } from './commands/jobs.js';
import { migrateCommand } from './commands/migrate.js';
import { pruneCommand } from './commands/prune.js';
import { queueCommand } from './commands/queue.js';
import { retryCommand } from './commands/retry.js';
import { signalCommand } from './commands/signal.js';
import { statsCommand } from './commands/stats.js';
import { workerCommand } from './commands/worker.js';
import { endQuietlyWhenStdoutCloses } from './output.js';
import { createProgram, runProgram } from './program.js';

const program = createProgram([
  demoCommand(),
  migrateCommand(),
  workerCommand(),
  enqueueCommand(),
  jobsCommand(),
  jobCommand(),
  flowCommand(),
  statsCommand(),
  retryCommand(),
  cancelCommand(),
  signalCommand(),
  pruneCommand(),
  queueCommand(),
  inspectCommand(),
  diagramCommand(),
]);

endQuietlyWhenStdoutCloses();
process.exitCode = await runProgram(program, process.argv);
// Every command closes what it opened; should a library leave a handle open all the same,
// do not hang the shell or script that called us.
setTimeout(() => process.exit(), 2_000).unref();
