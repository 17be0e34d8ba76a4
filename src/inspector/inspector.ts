/**
 * The inspector: a local page of queues, jobs and each job's path through the job machine,
 * live, served by `node:http` on 127.0.0.1.
 *
 *   GET  /                          the page (index.html, app.js, style.css)
 *   GET  /api/info                  whether actions are enabled, the supervisor beside it
 *   GET  /api/queues                backlog, throughput and running jobs per queue
 *   GET  /api/throughput?window=1h|24h   per queue and bucket: completed, failed, p50/p95 run time
 *   GET  /api/workers               every supervisor on the store, with the jobs it holds
 *   GET  /api/jobs?queue&state&kind&q&in&before&limit    a page of jobs, newest first (q in: key, payload, error)
 *   GET  /api/jobs/:id              one job with its history and machine path
 *   GET  /api/jobs/:id/machine.svg  the job machine with that path highlighted
 *   GET  /api/jobs/:id/story.svg    the user's view of the machine with the job's numbered steps
 *   GET  /api/machine.svg           the job machine
 *   GET  /api/flows/:id             a flow: its jobs and edges (flow-routes.ts)
 *   GET  /api/flows/:id/graph.svg   the flow's DAG, each job coloured by its state
 *   GET  /api/jobs/:id/flow         the flow the job belongs to, if any
 *   GET  /api/events                server-sent events: transitions as they are written
 *   GET  /api/schedules             each schedule given: timetable, last and next tick, paused
 *   POST /api/schedules/:name/{pause,resume,run}   with the token
 *   POST /api/jobs                  with the token; body {"queue", "kind", "payload", …}: enqueue one job
 *   POST /api/jobs/:id/{retry,cancel,delete}   with the token: header or form field
 *   POST /api/jobs/:id/signal      with the token; body {"name", "payload"} (JSON) or form fields
 *   POST /api/queues/:name/{pause,resume}      with the token
 *   GET  /api/queues/:name/dead-groups         the queue's dead jobs grouped by error
 *   GET  /api/queues/:name/tenants             a fair queue's tenants with their backlogs
 *   POST /api/queues/:name/dead-groups/retry   with the token; body {"code", "message"}: that group's jobs
 *   GET  /api/jobs-count?queue&state&kind      how many jobs match, through an index (exact up to 10,000)
 *   POST /api/bulk/{retry,cancel,delete}?queue&state&kind   on every job that matches, with the token
 *   POST /api/session               checks a token; when right, a cookie for the event stream
 *
 * Without a token the page is read-only and the actions answer 403. Bound to anything but
 * loopback, it refuses to start without a token, and then every read needs it too.
 */
import { randomBytes } from 'node:crypto';
import { createServer as createNetServer } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { JobStore, Unsubscribe } from '../adapters/store.js';
import { InvalidOptionError } from '../errors.js';
import type { Queue } from '../queue.js';
import type { Schedule } from '../schedule.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import type { Logger } from '../types.js';
import { ACTIONS, QUEUE_ACTIONS, runAction, runQueueAction, runSignal, type Action, type QueueAction } from './actions.js';
import { safeJson } from './escape.js';
import { EventFeed, type FeedBatch } from './event-feed.js';
import {
  checkHost,
  checkOrigin,
  HttpError,
  isLoopbackAddress,
  presentedCookie,
  presentedToken,
  readBody,
  sendError,
  sendJson,
  sendText,
  sessionCookieName,
  setSecurityHeaders,
  tokenMatches,
} from './http.js';
import { countMatching, runBulkAction } from './bulk.js';
import { deadGroups, retryDeadGroup } from './dead-groups.js';
import { ENQUEUE_BODY_BYTES, runEnqueue } from './enqueue.js';
import { listSchedules, runScheduleAction, SCHEDULE_ACTIONS, type ScheduleAction } from './schedules.js';
import { parseFilters, parseJobId, parseNoQuery, parseQueueName } from './params.js';
import { ThroughputStats } from './throughput.js';
import { QueueStats } from './queue-stats.js';
import * as flows from './flow-routes.js';
import * as read from './routes.js';

export const DEFAULT_INSPECTOR_PORT = 4780;

export interface InspectorOptions {
  store: JobStore;
  /** A supervisor in this process: its counters on the page, and cancel of the jobs it runs. */
  supervisor?: Supervisor;
  /** Default 127.0.0.1. Anything but loopback needs a token, which then guards reads too. */
  host?: string;
  /** Default 4780; 0 picks a free port (see `url`). */
  port?: number;
  /** Enables retry, cancel and delete for requests that carry it. Default none: read-only. */
  token?: string;
  /** Default pino at `warn`, quiet as a library should be (`silent` under a test runner). */
  logger?: Logger;
  /** How often the history is polled while a page is open. Default 1,000 ms. */
  pollIntervalMs?: number;
  /** The queue definitions (defineQueue): the enqueue form checks a job's queue and kind
   *  against them and uses their settings. Without them it enqueues into queues the store's
   *  jobs use, with the default settings. */
  queues?: readonly Queue[];
  /** The schedule definitions (defineSchedule): the schedules page lists them with their last
   *  and next tick, and runs, pauses or resumes one. Without them the page has none. */
  schedules?: readonly Schedule[];
}

export interface Inspector {
  /** e.g. `http://127.0.0.1:4780/` */
  readonly url: string;
  readonly port: number;
  /** Stops serving and ends open pages' streams. Idempotent. */
  close(): Promise<void>;
}

const STATIC_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/throughput.js': { file: 'throughput.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};
/** Next to this module; `npm run build` copies them into dist/. */
const PUBLIC_DIR = new URL('./public/', import.meta.url);
/** The backlog counts (index reads) are read again at most this often, however busy the store. */
const STATS_CACHE_MS = 2_000;
/** What comes from the history (throughput) is read again at most this often: each read is
 *  of the last two buckets only, but the history grows with every transition. */
const HISTORY_REFRESH_MS = 5_000;
const KEEPALIVE_MS = 15_000;
/** A fair queue's waiting (and running) jobs read at most for its tenants' counts. */
const TENANTS_SCAN = 10_000;

export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const { store, supervisor } = options;
  if (!store) throw new InvalidOptionError('store', 'is required');
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? DEFAULT_INSPECTOR_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidOptionError('port', `must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const token = options.token;
  if (token !== undefined && (typeof token !== 'string' || token.length < 8)) {
    throw new InvalidOptionError('token', 'must be a string of at least 8 characters');
  }
  // Bound elsewhere, the Host check cannot tell a rebinding page from a real name: the token does.
  const readsNeedToken = !isLoopbackAddress(host);
  if (readsNeedToken && token === undefined) {
    throw new InvalidOptionError('token', `is required to listen on ${host}, which is not loopback: every request will need it`);
  }
  const session = randomBytes(24).toString('base64url');
  let cookieName = '';
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  if (!Number.isInteger(pollIntervalMs) || pollIntervalMs < 10) {
    throw new InvalidOptionError('pollIntervalMs', `must be an integer >= 10, got ${String(pollIntervalMs)}`);
  }
  const logger = options.logger ?? defaultLogger();
  const queues = options.queues;
  if (queues !== undefined && (!Array.isArray(queues) || !queues.every((q) => typeof q?.name === 'string' && typeof q.handlers === 'object'))) {
    throw new InvalidOptionError('queues', 'must be an array of queues made by defineQueue');
  }
  const schedules = options.schedules ?? [];
  if (!Array.isArray(schedules) || !schedules.every((s) => typeof s?.name === 'string' && typeof s.jobFor === 'function')) {
    throw new InvalidOptionError('schedules', 'must be an array of schedules made by defineSchedule');
  }

  const files = new Map<string, Buffer>();
  for (const [path, { file }] of Object.entries(STATIC_FILES)) files.set(path, await readFile(new URL(file, PUBLIC_DIR)));

  const feed = new EventFeed(store, { pollIntervalMs, logger });
  const readContext: read.ReadContext = {
    store,
    supervisor,
    stats: new QueueStats(store, supervisor, STATS_CACHE_MS, HISTORY_REFRESH_MS),
    throughput: new ThroughputStats(store, HISTORY_REFRESH_MS, Date.now, logger),
    actionsEnabled: token !== undefined,
    queues,
  };
  const streams = new Set<ServerResponse>();
  const wakeups = new WakeUps(store, supervisor, feed, logger);

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    checkHost(req, host);
    const url = new URL(req.url ?? '/', 'http://inspector');
    const path = url.pathname;
    const segments = path.split('/').filter(Boolean);

    if (req.method === 'POST' && path === '/api/session') {
      checkOrigin(req);
      const body = await readBody(req);
      if (token === undefined) throw new HttpError(403, 'the inspector was started without a token: it is read-only');
      if (!tokenMatches(token, presentedToken(req, body))) throw new HttpError(403, 'token refused: it is not the one the inspector was started with');
      res.setHeader('set-cookie', `${cookieName}=${session}; Path=/; HttpOnly; SameSite=Strict`);
      sendJson(res, 200, { accepted: true });
      return;
    }
    if (req.method === 'POST' && path.startsWith('/api/bulk/')) {
      const action = segments[2];
      if (!ACTIONS.includes(action as Action) || segments.length !== 3) throw new HttpError(404, `no such action: POST ${path}`);
      await authorizeAction(req);
      const result = await runBulkAction(action as Action, parseFilters(url.searchParams), store, supervisor);
      logger.info({ action, filters: Object.fromEntries(url.searchParams), applied: result.applied }, 'inspector: bulk action');
      readContext.stats.invalidate();
      feed.wake();
      sendJson(res, 200, result);
      return;
    }
    if (req.method === 'POST' && segments.length === 4 && segments[0] === 'api' && segments[1] === 'schedules') {
      const action = segments[3] as ScheduleAction;
      if (!SCHEDULE_ACTIONS.includes(action)) throw new HttpError(404, `no such action: POST ${path}`);
      await authorizeAction(req);
      const name = parseQueueName(segments[2]!, 'schedule');
      const result = await runScheduleAction(store, schedules, name, action);
      logger.info({ schedule: name, action }, 'inspector: schedule action');
      readContext.stats.invalidate();
      feed.wake();
      sendJson(res, 200, result);
      return;
    }
    if (req.method === 'POST' && path === '/api/jobs') {
      const body = await authorizeAction(req, ENQUEUE_BODY_BYTES);
      const result = await runEnqueue(store, queues, body, req.headers['content-type'] ?? '');
      logger.info({ jobId: result.job.id, action: 'enqueue', created: result.created }, 'inspector: job action');
      readContext.stats.invalidate();
      feed.wake();
      sendJson(res, 200, result);
      return;
    }
    if (req.method === 'POST' && segments.length === 5 && segments[0] === 'api' && segments[1] === 'queues' && segments[3] === 'dead-groups' && segments[4] === 'retry') {
      const body = await authorizeAction(req);
      const queue = parseQueueName(segments[2]!);
      const result = await retryDeadGroup(store, queue, body, req.headers['content-type'] ?? '');
      logger.info({ queue, action: 'retry dead group', applied: result.applied }, 'inspector: bulk action');
      readContext.stats.invalidate();
      feed.wake();
      sendJson(res, 200, result);
      return;
    }
    if (req.method === 'POST' && segments[0] === 'api' && segments[1] === 'queues') {
      const [, , rawName, action, ...rest] = segments;
      if (!rawName || !QUEUE_ACTIONS.includes(action as QueueAction) || rest.length > 0) {
        throw new HttpError(404, `no such action: POST ${path}`);
      }
      await authorizeAction(req);
      const queue = parseQueueName(rawName);
      const result = await runQueueAction(action as QueueAction, queue, store);
      logger.info({ queue, action }, 'inspector: queue action');
      readContext.stats.invalidate();
      feed.wake();
      sendJson(res, 200, result);
      return;
    }
    if (req.method === 'POST' && segments.length === 4 && segments[0] === 'api' && segments[1] === 'jobs' && segments[3] === 'signal') {
      const body = await authorizeAction(req);
      const id = parseJobId(segments[2]!);
      const result = await runSignal(id, body, req.headers['content-type'] ?? '', store);
      logger.info({ jobId: id, action: 'signal' }, 'inspector: job action');
      feed.wake();
      sendJson(res, 200, result);
      return;
    }
    if (req.method === 'POST') {
      const [api, jobs, rawId, action, ...rest] = segments;
      if (api !== 'api' || jobs !== 'jobs' || !rawId || !ACTIONS.includes(action as Action) || rest.length > 0) {
        throw new HttpError(404, `no such action: POST ${path}`);
      }
      await authorizeAction(req);
      const id = parseJobId(rawId);
      const result = await runAction(action as Action, id, store, supervisor);
      logger.info({ jobId: id, action }, 'inspector: job action');
      if (action === 'delete') feed.broadcast({ type: 'deleted', jobId: id });
      feed.wake();
      sendJson(res, 200, result);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, `method ${req.method} not allowed`);

    const staticFile = STATIC_FILES[path];
    if (staticFile) {
      // The page keeps its list's filters in its own query (`/?state=dead`): it reads them.
      if (path !== '/') parseNoQuery(url.searchParams);
      sendText(res, staticFile.type, files.get(path)!);
      return;
    }
    if (segments[0] !== 'api') throw new HttpError(404, `not found: ${path}`);
    if (readsNeedToken && !tokenMatches(token!, presentedToken(req, '')) && !tokenMatches(session, presentedCookie(req, cookieName))) {
      throw new HttpError(401, `this inspector listens on ${host}: every request needs the token`);
    }
    const [, resource, rawId, sub, ...rest] = segments;
    if (resource === 'jobs-count' && rawId === undefined) {
      sendJson(res, 200, await countMatching(store, parseFilters(url.searchParams)));
      return;
    }
    if (resource === 'jobs' && rawId === undefined) {
      sendJson(res, 200, await read.listJobs(readContext, url.searchParams));
      return;
    }
    if (resource === 'throughput' && rawId === undefined) return sendJson(res, 200, await read.throughput(readContext, url.searchParams));
    parseNoQuery(url.searchParams);
    if (resource === 'info' && rawId === undefined) return sendJson(res, 200, read.info(readContext));
    if (resource === 'queues' && rawId === undefined) return sendJson(res, 200, await read.queues(readContext));
    if (resource === 'workers' && rawId === undefined) return sendJson(res, 200, await read.workers(readContext));
    if (resource === 'schedules' && rawId === undefined) return sendJson(res, 200, await listSchedules(store, schedules));
    if (resource === 'queues' && rawId !== undefined && sub === 'dead-groups' && rest.length === 0) {
      return sendJson(res, 200, await deadGroups(store, parseQueueName(rawId)));
    }
    if (resource === 'queues' && rawId !== undefined && sub === 'tenants' && rest.length === 0) {
      return sendJson(res, 200, await store.getTenantBacklogs({ queue: parseQueueName(rawId), maxScan: TENANTS_SCAN }));
    }
    if (resource === 'machine.svg' && rawId === undefined) {
      return sendText(res, 'image/svg+xml; charset=utf-8', await read.jobMachineSvg(readContext, undefined));
    }
    if (resource === 'events' && rawId === undefined) return openStream(req, res);
    if (resource === 'jobs' && rawId !== undefined && rest.length === 0) {
      const id = parseJobId(rawId);
      if (sub === undefined) return sendJson(res, 200, await read.getJob(readContext, id));
      if (sub === 'machine.svg') return sendText(res, 'image/svg+xml; charset=utf-8', await read.jobMachineSvg(readContext, id));
      if (sub === 'story.svg') return sendText(res, 'image/svg+xml; charset=utf-8', await read.jobStorySvg(readContext, id));
      if (sub === 'flow') return sendJson(res, 200, await flows.jobFlow(readContext, id));
    }
    if (resource === 'flows' && rawId !== undefined && rest.length === 0) {
      const id = flows.parseFlowId(rawId);
      if (sub === undefined) return sendJson(res, 200, await flows.getFlow(readContext, id));
      if (sub === 'graph.svg') return sendText(res, 'image/svg+xml; charset=utf-8', await flows.flowSvg(readContext, id));
    }
    throw new HttpError(404, `not found: ${path}`);
  }

  /** Actions come from this origin and carry the token (header or form field). */
  async function authorizeAction(req: IncomingMessage, maxBodyBytes?: number): Promise<string> {
    checkOrigin(req);
    const body = await readBody(req, maxBodyBytes);
    if (token === undefined) throw new HttpError(403, 'actions are disabled: start the inspector with a token');
    if (!tokenMatches(token, presentedToken(req, body))) throw new HttpError(403, 'a valid token is required');
    return body;
  }

  /** Server-sent events: `jobs` with a batch of transitions, `deleted`, or `reset` when the
   *  feed fell behind and the page should reload what it shows. */
  function openStream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    streams.add(res);
    // Transitions make the next read of the backlogs (index reads) fresh; the history is read
    // again on its own period (HISTORY_REFRESH_MS), however busy the store.
    const unsubscribe = feed.subscribe((batch) => {
      readContext.stats.invalidate();
      res.write(formatEvent(batch));
    });
    wakeups.retain();
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    req.on('close', () => {
      clearInterval(keepalive);
      unsubscribe();
      wakeups.release();
      streams.delete(res);
    });
  }

  const server: Server = createServer((req, res) => {
    setSecurityHeaders(res);
    route(req, res).catch((error: unknown) => {
      if (error instanceof HttpError) {
        if (!res.headersSent) sendError(res, error.status, error.message);
        return;
      }
      logger.error({ err: error, url: req.url }, 'inspector: request failed');
      if (!res.headersSent) sendError(res, 500, `internal error: ${error instanceof Error ? error.message : String(error)}`);
      else res.end();
    });
  });
  if (isLoopbackAddress(host) && port !== 0) await refuseTakenLoopback(port);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}/`;
  cookieName = sessionCookieName(bound);
  logger.info({ url, actions: token !== undefined, readsNeedToken }, 'inspector listening');
  if (readsNeedToken) logger.warn({ url }, `inspector on ${host}, not loopback: every request, reads too, needs the token`);

  let closed: Promise<void> | undefined;
  return {
    url,
    port: bound,
    close() {
      closed ??= (async () => {
        for (const res of streams) res.end();
        await feed.close();
        await wakeups.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })();
      return closed;
    },
  };
}

/**
 * A browser may reach "localhost" on either loopback, so an inspector on ::1 beside another
 * on 127.0.0.1 (same port) would answer some requests for it: refuse a port that either
 * loopback already serves. A loopback this machine lacks (no IPv6) is no obstacle.
 */
async function refuseTakenLoopback(port: number): Promise<void> {
  for (const address of ['127.0.0.1', '::1']) {
    await new Promise<void>((resolve, reject) => {
      const probe = createNetServer();
      probe.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EADDRINUSE') return resolve();
        reject(Object.assign(new Error(`port ${port} is already in use on ${address}`), { code: 'EADDRINUSE', address, port }));
      });
      probe.listen({ port, host: address, exclusive: true }, () => probe.close(() => resolve()));
    });
  }
}

function formatEvent(batch: FeedBatch): string {
  switch (batch.type) {
    case 'events':
      return `event: jobs\ndata: ${safeJson(batch.events)}\n\n`;
    case 'deleted':
      return `event: deleted\ndata: ${safeJson({ jobId: batch.jobId })}\n\n`;
    case 'reset':
      return 'event: reset\ndata: {}\n\n';
  }
}

/**
 * While a page listens, the feed polls at once when something likely changed: the store
 * announces an enqueue or a retry, or the supervisor's counters move (a claim, an outcome).
 */
class WakeUps {
  #listeners = 0;
  #unsubscribe: Promise<Unsubscribe | undefined> | undefined;
  #unsubscribeCounters: (() => void) | undefined;

  constructor(
    private readonly store: JobStore,
    private readonly supervisor: Supervisor | undefined,
    private readonly feed: EventFeed,
    private readonly logger: Logger,
  ) {}

  retain(): void {
    if (this.#listeners++ > 0) return;
    const wake = () => this.feed.wake();
    if (this.store.capabilities.notifications) {
      this.#unsubscribe = this.store.subscribe(wake).catch((error: unknown) => {
        this.logger.warn({ err: error }, 'inspector: no store notifications; polling only');
        return undefined;
      });
    }
    const subscription = this.supervisor?.counters.subscribe(wake);
    this.#unsubscribeCounters = subscription ? () => subscription.unsubscribe() : undefined;
  }

  release(): void {
    if (--this.#listeners > 0) return;
    void this.close();
  }

  async close(): Promise<void> {
    this.#unsubscribeCounters?.();
    this.#unsubscribeCounters = undefined;
    const unsubscribe = await this.#unsubscribe;
    this.#unsubscribe = undefined;
    await unsubscribe?.();
  }
}

function defaultLogger(): Logger {
  const underTest = process.env.VITEST !== undefined || process.env.NODE_ENV === 'test';
  return pino({ name: 'jobvisor-inspector', level: underTest ? 'silent' : 'warn' });
}
