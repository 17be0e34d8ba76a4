import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import { NEVER, type JobStore } from '../../src/adapters/store.js';
import { InvalidOptionError } from '../../src/errors.js';
import { startInspector, type Inspector, type InspectorOptions } from '../../src/inspector/index.js';
import { createSupervisor, defineQueue, PermanentJobError } from '../../src/index.js';

const TOKEN = 'test-token-123';
let open: Inspector[] = [];

afterEach(async () => {
  await Promise.all(open.map((inspector) => inspector.close()));
  open = [];
});

async function start(options: Partial<InspectorOptions> & { store: JobStore }): Promise<Inspector> {
  const inspector = await startInspector({ port: 0, pollIntervalMs: 20, ...options });
  open.push(inspector);
  return inspector;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** node:http rather than fetch: the tests set Host and Origin headers as an attacker would. */
function call(inspector: Inspector, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, inspector.url), { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const get = (inspector: Inspector, path: string, headers?: Record<string, string>) => call(inspector, 'GET', path, headers);
const post = (inspector: Inspector, path: string, headers?: Record<string, string>, body?: string) =>
  call(inspector, 'POST', path, headers, body);

const queue = defineQueue('mail', {
  maxAttempts: 1,
  handlers: {
    send: async () => ({ sent: true }),
    bounce: async (): Promise<never> => {
      throw new PermanentJobError('mailbox <b>gone</b>');
    },
  },
});

/** A store with one completed and one dead job, and a supervisor that ran them. */
async function storeWithHistory() {
  const store = memoryStore();
  const { job: sent } = await queue.enqueue(store, 'send', { to: 'a@example.com' }, { uniqueKey: 'mail:a' });
  const { job: bounced } = await queue.enqueue(store, 'bounce', { to: '<script>alert(1)</script>' });
  const supervisor = createSupervisor({ store, queues: [queue] });
  await supervisor.drain();
  await supervisor.stop();
  return { store, sent, bounced };
}

describe('startInspector', () => {
  it('binds 127.0.0.1 by default and refuses bad options', async () => {
    const inspector = await start({ store: memoryStore() });
    expect(inspector.url).toBe(`http://127.0.0.1:${inspector.port}/`);
    await expect(startInspector({ store: memoryStore(), port: -1 })).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(startInspector({ store: memoryStore(), port: 0, token: 'short' })).rejects.toMatchObject({ option: 'token' });
    await expect(startInspector({ store: memoryStore(), port: inspector.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('stops serving on close, and close is idempotent', async () => {
    const inspector = await start({ store: memoryStore() });
    await inspector.close();
    await inspector.close();
    await expect(get(inspector, '/api/info')).rejects.toThrow();
  });
});

describe('the page', () => {
  it('is served with a strict Content-Security-Policy', async () => {
    const inspector = await start({ store: memoryStore() });
    const page = await get(inspector, '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.text).toContain('<script src="/app.js" defer></script>');
    const script = await get(inspector, '/app.js');
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.text).not.toContain('innerHTML');
    expect((await get(inspector, '/style.css')).status).toBe(200);
    expect((await get(inspector, '/index.html')).status).toBe(404);
    expect((await get(inspector, '/../package.json')).status).toBe(404);
  });

  it('answers only to loopback host names, against DNS rebinding', async () => {
    const inspector = await start({ store: memoryStore() });
    const rebound = await get(inspector, '/api/info', { host: `evil.example:${inspector.port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.json.error).toContain('loopback');
    expect((await get(inspector, '/api/info', { host: `localhost:${inspector.port}` })).status).toBe(200);
  });
});

describe('bad requests', () => {
  it.each([
    ['/api/jobs?state=done', 'state: must be one of pending'],
    ['/api/jobs?status=dead', 'unknown parameter "status"'],
    ['/api/jobs?state=dead&state=pending', 'parameter "state" given twice'],
    ['/api/jobs?limit=0', 'limit: must be an integer from 1 to 200'],
    ['/api/jobs?limit=201', 'limit: must be an integer from 1 to 200'],
    ['/api/jobs?limit=1e2', 'limit: must be an integer from 1 to 200'],
    ['/api/jobs?queue=%3Cscript%3E', 'queue: must be 1-128'],
    ['/api/jobs?kind=a%20b', 'kind: must be 1-128'],
    ['/api/jobs?before=1%3B%20drop', 'before: must be a job id'],
    [`/api/jobs?q=${'x'.repeat(257)}`, 'q: at most 256 characters'],
    ['/api/jobs/%ZZ', 'job id: not a valid URL segment'],
    [`/api/jobs/${'9'.repeat(65)}`, 'job id: must be 1-64'],
    ['/api/jobs/1%2F2', 'job id: must be 1-64'],
    ['/api/info?verbose=1', 'unknown parameter "verbose"; this endpoint takes none'],
    ['/api/queues?x', 'unknown parameter "x"'],
  ])('GET %s is a 400: %s', async (path, message) => {
    const inspector = await start({ store: memoryStore() });
    const answer = await get(inspector, path);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toContain(message);
    expect((await get(inspector, '/api/info')).status).toBe(200);
  });

  it('answers 404 for what does not exist and 405 for other methods', async () => {
    const inspector = await start({ store: memoryStore() });
    expect((await get(inspector, '/api/jobs/12345')).status).toBe(404);
    expect((await get(inspector, '/api/jobs/12345/machine.svg')).status).toBe(404);
    expect((await get(inspector, '/api/nothing')).status).toBe(404);
    expect((await post(inspector, '/api/jobs/1/explode')).status).toBe(404);
    expect((await call(inspector, 'PUT', '/api/jobs')).status).toBe(405);
  });

  it('answers 500 with the reason when the store fails, and goes on serving', async () => {
    const store = memoryStore();
    const broken = new Proxy(store, {
      get(target, name) {
        if (name === 'getJob') return () => Promise.reject(new Error('connection reset'));
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as JobStore;
    const inspector = await start({ store: broken });
    const answer = await get(inspector, '/api/jobs/1');
    expect(answer).toMatchObject({ status: 500, json: { error: 'internal error: connection reset' } });
    expect((await get(inspector, '/api/jobs')).status).toBe(200);
  });
});

describe('reads', () => {
  it('escapes job values in JSON, and never sends a lease token', async () => {
    const { store, bounced } = await storeWithHistory();
    const claimedQueue = defineQueue('held', { handlers: { wait: () => new Promise(() => {}) } });
    const { job: held } = await claimedQueue.enqueue(store, 'wait', {});
    await store.claimJobs({ workerId: 'w9', leaseMs: 60_000, queues: [{ queue: 'held', limit: 1 }] });
    const inspector = await start({ store });

    const detail = await get(inspector, `/api/jobs/${bounced.id}`);
    expect(detail.text).not.toContain('<');
    expect(detail.text).toContain('\\u003cscript\\u003ealert(1)\\u003c/script\\u003e');
    expect(detail.json.job.payload).toEqual({ to: '<script>alert(1)</script>' });
    expect(detail.json.job.error).toMatchObject({ code: 'permanent_error', message: 'mailbox <b>gone</b>' });
    expect(detail.json.events.map((e: { toState: string }) => e.toState)).toEqual(['pending', 'running', 'dead']);
    expect(detail.json.path).toMatchObject({ current: 'dead' });

    const running = await get(inspector, `/api/jobs/${held.id}`);
    expect(running.json.job).toMatchObject({ state: 'running', workerId: 'w9' });
    expect(running.text).not.toContain('leaseToken');
    const list = await get(inspector, '/api/jobs');
    expect(list.text).not.toContain('leaseToken');
    expect(list.text).not.toContain('payload');
    expect((await get(inspector, '/api/queues')).text).not.toContain('leaseToken');
  });

  it('lists jobs newest first with filters, finds one by id or unique key, and pages', async () => {
    const { store, sent, bounced } = await storeWithHistory();
    const inspector = await start({ store });
    const ids = (answer: Answer) => answer.json.jobs.map((job: { id: string }) => job.id);
    expect(ids(await get(inspector, '/api/jobs'))).toEqual([bounced.id, sent.id]);
    expect(ids(await get(inspector, '/api/jobs?state=dead'))).toEqual([bounced.id]);
    expect(ids(await get(inspector, '/api/jobs?queue=mail&kind=send'))).toEqual([sent.id]);
    expect(ids(await get(inspector, `/api/jobs?q=${sent.id}`))).toEqual([sent.id]);
    expect(ids(await get(inspector, '/api/jobs?q=mail%3Aa'))).toEqual([sent.id]);
    expect(ids(await get(inspector, '/api/jobs?q=nothing'))).toEqual([]);
    const first = await get(inspector, '/api/jobs?limit=1');
    expect(first.json).toMatchObject({ nextBefore: bounced.id });
    expect(ids(await get(inspector, `/api/jobs?limit=1&before=${first.json.nextBefore}`))).toEqual([sent.id]);
  });

  it('sends a running job’s progress in the running list and the job detail, never its lease token', async () => {
    const store = memoryStore();
    const [enqueued] = await store.enqueueJobs({ jobs: [{ queue: 'q', kind: 'k', payload: {}, maxAttempts: 1 }] });
    const job = enqueued!.job;
    const [claimed] = await store.claimJobs({ workerId: 'w', leaseMs: 60_000, queues: [{ queue: 'q', limit: 1 }] });
    expect(await store.setProgressIfRunning({ updates: [{ id: job.id, leaseToken: claimed!.leaseToken, percent: 40, message: 'resizing' }] })).toEqual([true]);
    const inspector = await start({ store });
    const running = (await get(inspector, '/api/queues')).json.running;
    expect(running).toEqual([expect.objectContaining({ id: job.id, progress: expect.objectContaining({ percent: 40, message: 'resizing' }) })]);
    const detail = (await get(inspector, `/api/jobs/${job.id}`)).json.job;
    expect(detail.progress).toMatchObject({ percent: 40, message: 'resizing' });
    expect(detail).not.toHaveProperty('leaseToken');
  });

  it('sums up each queue: counts, throughput from the history, running jobs', async () => {
    const { store } = await storeWithHistory();
    const inspector = await start({ store });
    const view = (await get(inspector, '/api/queues')).json;
    expect(view.buckets).toHaveLength(10);
    const [mail] = view.queues;
    expect(mail).toMatchObject({ queue: 'mail', counts: { pending: 0, dead: 1 }, oldestWaitMs: null, process: null });
    expect(mail.throughput.completed.at(-1)).toBe(1);
    expect(mail.throughput.dead.at(-1)).toBe(1);
    expect(view.running).toEqual([]);
  });

  it('draws the job machine, and a job\'s path through it', async () => {
    const { store, sent } = await storeWithHistory();
    const inspector = await start({ store });
    const plain = await get(inspector, '/api/machine.svg');
    expect(plain.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(plain.text).not.toMatch(/class="[^"]*visited/);
    const path = await get(inspector, `/api/jobs/${sent.id}/machine.svg`);
    expect(path.text).toMatch(/class="node final visited current" data-state="completed"/);
  });
});

describe('actions', () => {
  it('are refused with 403 when the inspector has no token', async () => {
    const { store, bounced } = await storeWithHistory();
    const inspector = await start({ store });
    expect((await get(inspector, '/api/info')).json.actions).toBe(false);
    const answer = await post(inspector, `/api/jobs/${bounced.id}/retry`, { 'x-jobvisor-token': TOKEN });
    expect(answer).toMatchObject({ status: 403, json: { error: 'actions are disabled: start the inspector with a token' } });
    expect((await store.getJob({ id: bounced.id }))!.state).toBe('dead');
  });

  it('need the token: a missing or wrong one is a 403; header, bearer or form field work', async () => {
    const { store, bounced } = await storeWithHistory();
    const inspector = await start({ store, token: TOKEN });
    const retry = `/api/jobs/${bounced.id}/retry`;
    expect((await post(inspector, retry)).status).toBe(403);
    expect((await post(inspector, retry, { 'x-jobvisor-token': 'wrong-token-123' })).status).toBe(403);
    expect((await post(inspector, retry, { 'content-type': 'application/x-www-form-urlencoded' }, 'token=nope')).status).toBe(403);
    expect((await store.getJob({ id: bounced.id }))!.state).toBe('dead');

    const answer = await post(inspector, retry, { 'x-jobvisor-token': TOKEN });
    expect(answer).toMatchObject({ status: 200, json: { message: `job ${bounced.id} is pending again`, job: { state: 'pending' } } });
    await store.cancelJob({ id: bounced.id });
    expect((await post(inspector, retry, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    await store.cancelJob({ id: bounced.id });
    const form = await post(inspector, retry, { 'content-type': 'application/x-www-form-urlencoded' }, `token=${TOKEN}`);
    expect(form.status).toBe(200);
  });

  it('refuse a request from another origin, even with the token', async () => {
    const { store, bounced } = await storeWithHistory();
    const inspector = await start({ store, token: TOKEN });
    const answer = await post(inspector, `/api/jobs/${bounced.id}/retry`, { 'x-jobvisor-token': TOKEN, origin: 'https://evil.example' });
    expect(answer).toMatchObject({ status: 403, json: { error: 'cross-origin requests may not act' } });
    const same = await post(inspector, `/api/jobs/${bounced.id}/retry`, {
      'x-jobvisor-token': TOKEN,
      origin: inspector.url.slice(0, -1),
    });
    expect(same.status).toBe(200);
  });

  it('say why they did nothing: 404 for no such job, 409 for the wrong state', async () => {
    const { store, sent, bounced } = await storeWithHistory();
    const inspector = await start({ store, token: TOKEN });
    const auth = { 'x-jobvisor-token': TOKEN };
    expect(await post(inspector, '/api/jobs/999/retry', auth)).toMatchObject({ status: 404, json: { error: 'no job with id 999' } });
    expect(await post(inspector, `/api/jobs/${sent.id}/retry`, auth)).toMatchObject({
      status: 409,
      json: { error: `job ${sent.id} is completed: only dead, cancelled or skipped jobs can be retried` },
    });
    expect((await post(inspector, `/api/jobs/${bounced.id}/cancel`, auth)).status).toBe(409);
  });

  it('cancel a pending job at once, and a running one through its worker', async () => {
    const store = memoryStore();
    const slow = defineQueue('slow', { handlers: { wait: ({ signal }) => new Promise<void>((resolve) => {
      signal.addEventListener('abort', () => resolve());
    }) } });
    const { job: first } = await slow.enqueue(store, 'wait', {});
    const { job: second } = await slow.enqueue(store, 'wait', {});
    const supervisor = createSupervisor({ store, queues: [slow], pollIntervalMs: 10 });
    await supervisor.start();
    await vi.waitFor(async () => expect((await store.getJob({ id: first.id }))!.state).toBe('running'));
    const auth = { 'x-jobvisor-token': TOKEN };

    // An inspector of its own: the store cancels the waiting job, and asks the running one's worker.
    const alone = await start({ store, token: TOKEN });
    expect(await post(alone, `/api/jobs/${second.id}/cancel`, auth)).toMatchObject({ status: 200, json: { job: { state: 'cancelled' } } });
    const asked = await post(alone, `/api/jobs/${first.id}/cancel`, auth);
    expect(asked.status).toBe(200);
    expect(asked.json.message).toContain('asked to cancel');
    await vi.waitFor(async () => expect((await store.getJob({ id: first.id }))!.state).toBe('cancelled'));

    // An inspector beside the supervisor: the supervisor aborts the job it runs.
    const { job: third } = await slow.enqueue(store, 'wait', {});
    await vi.waitFor(async () => expect((await store.getJob({ id: third.id }))!.state).toBe('running'));
    const beside = await start({ store, token: TOKEN, supervisor });
    expect(await post(beside, `/api/jobs/${third.id}/cancel`, auth)).toMatchObject({ status: 200, json: { message: `job ${third.id} is being cancelled` } });
    await vi.waitFor(async () => expect((await store.getJob({ id: third.id }))!.state).toBe('cancelled'));
    await supervisor.stop();
  });

  it('delete a job that no worker holds, with its history', async () => {
    const { store, bounced } = await storeWithHistory();
    const inspector = await start({ store, token: TOKEN });
    const answer = await post(inspector, `/api/jobs/${bounced.id}/delete`, { 'x-jobvisor-token': TOKEN });
    expect(answer).toMatchObject({ status: 200, json: { message: `job ${bounced.id} is deleted`, job: null } });
    expect((await get(inspector, `/api/jobs/${bounced.id}`)).status).toBe(404);
    expect(await store.getJobEvents({ id: bounced.id })).toEqual([]);
  });
});

describe('the signal action', () => {
  const auth = { 'x-jobvisor-token': TOKEN };
  const json = { ...auth, 'content-type': 'application/json' };

  /** A job that stored a step and sleeps waiting for the signal "shipped". */
  async function waitingJob() {
    const store = memoryStore();
    const { job } = await queue.enqueue(store, 'send', {});
    const [claimed] = await store.claimJobs({ workerId: 'w1', leaseMs: 60_000, queues: [{ queue: 'mail', limit: 1 }] });
    const lease = { id: claimed!.id, leaseToken: claimed!.leaseToken };
    expect(await store.checkpointSteps({ steps: [{ ...lease, name: 'charge', result: { chargeId: 'ch_1' } }] })).toEqual([true]);
    expect(await store.suspendIfRunning({ ...lease, kind: 'signal', name: 'shipped', signal: 'shipped', wake: { at: NEVER } })).toEqual({ answer: 'sleeping' });
    return { store, id: job.id };
  }

  it('shows the job waiting, its steps in the detail and not in lists', async () => {
    const { store, id } = await waitingJob();
    const inspector = await start({ store });
    const detail = await get(inspector, `/api/jobs/${id}`);
    expect(detail.json.job).toMatchObject({ state: 'sleeping', waitingForSignal: 'shipped' });
    expect(detail.json.durable).toEqual([
      { name: 'charge', kind: 'step', at: expect.any(String), status: 'stored', stored: true, value: { chargeId: 'ch_1' } },
      { name: 'shipped', kind: 'signal', at: expect.any(String), status: 'waiting', stored: false, until: null, signal: 'shipped' },
    ]);
    const [listed] = (await get(inspector, '/api/jobs')).json.jobs;
    expect(listed).toMatchObject({ id, state: 'sleeping', waitingForSignal: 'shipped' });
    expect(listed).not.toHaveProperty('steps');
  });

  it('needs the token and the same origin, as every action', async () => {
    const { store, id } = await waitingJob();
    const readOnly = await start({ store });
    expect((await post(readOnly, `/api/jobs/${id}/signal`, json, '{"name": "shipped"}')).status).toBe(403);
    const inspector = await start({ store, token: TOKEN });
    expect((await post(inspector, `/api/jobs/${id}/signal`, { 'content-type': 'application/json' }, '{"name": "shipped"}')).status).toBe(403);
    expect(await post(inspector, `/api/jobs/${id}/signal`, { ...json, origin: 'https://evil.example' }, '{"name": "shipped"}')).toMatchObject({
      status: 403,
      json: { error: 'cross-origin requests may not act' },
    });
    expect((await store.getJob({ id }))!.state).toBe('sleeping');
  });

  it('wakes the job with the payload (JSON body), and keeps one for a job not waiting (form body)', async () => {
    const { store, id } = await waitingJob();
    const inspector = await start({ store, token: TOKEN });
    expect(await post(inspector, `/api/jobs/${id}/signal`, json, '{"name": "shipped", "payload": {"carrier": "dhl"}}')).toMatchObject({
      status: 200,
      json: { message: `job ${id} woke: signal "shipped" delivered, the job is pending again`, job: { state: 'pending', waitingForSignal: null } },
    });
    const form = await post(inspector, `/api/jobs/${id}/signal`, { 'content-type': 'application/x-www-form-urlencoded' }, `token=${TOKEN}&name=approved`);
    expect(form).toMatchObject({ status: 200, json: { message: `job ${id} is pending: signal "approved" kept in its mailbox for its next wait for "approved"` } });
    const [claimed] = await store.claimJobs({ workerId: 'w2', leaseMs: 60_000, queues: [{ queue: 'mail', limit: 1 }] });
    const lease = { id, leaseToken: claimed!.leaseToken };
    expect(await store.suspendIfRunning({ ...lease, kind: 'signal', name: 'shipped', signal: 'shipped', wake: { at: NEVER } })).toEqual({ answer: 'received', payload: { carrier: 'dhl' } });
    expect(await store.suspendIfRunning({ ...lease, kind: 'signal', name: 'approved', signal: 'approved', wake: { at: NEVER } })).toEqual({ answer: 'received', payload: {} });
  });

  it('says why it did nothing: 400 for a bad name, payload or body, 404 for no such job, 409 for one that ended', async () => {
    const { store, id } = await waitingJob();
    const inspector = await start({ store, token: TOKEN });
    const signal = (body: string, headers: Record<string, string> = json, job = id) => post(inspector, `/api/jobs/${job}/signal`, headers, body);
    expect(await signal('{"name": "a b"}')).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^name: must be 1-128 characters/) } });
    expect(await signal('{"payload": 1}')).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^name: /) } });
    expect(await signal('{"name": "shipped"')).toMatchObject({ status: 400, json: { error: expect.stringContaining('not valid JSON') } });
    expect(await signal('["shipped"]')).toMatchObject({ status: 400, json: { error: expect.stringContaining('a JSON object') } });
    expect(await signal('name=shipped&payload={nope', { ...auth, 'content-type': 'application/x-www-form-urlencoded' })).toMatchObject({
      status: 400,
      json: { error: expect.stringMatching(/^payload is not valid JSON/) },
    });
    expect((await store.getJob({ id }))!.state).toBe('sleeping');
    expect(await signal('{"name": "shipped"}', json, '999')).toMatchObject({ status: 404, json: { error: 'no job with id 999' } });
    await store.cancelJob({ id });
    expect(await signal('{"name": "shipped"}')).toMatchObject({ status: 409, json: { error: `job ${id} has ended (cancelled): a signal to it could never be received` } });
  });
});

describe('live events', () => {
  /** Server-sent events as they arrive, parsed, until `stop()`. */
  async function listen(inspector: Inspector) {
    const events: Array<{ event: string; data: any }> = [];
    let stop!: () => void;
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(new URL('/api/events', inspector.url), (res) => {
        expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
        let buffer = '';
        res.on('data', (chunk: Buffer) => {
          buffer += chunk.toString('utf8');
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (block.startsWith('retry:')) resolve();
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event && data) events.push({ event, data: JSON.parse(data) });
          }
        });
      });
      req.on('error', reject);
      req.end();
      stop = () => req.destroy();
    });
    return { events, stop };
  }

  it('streams each transition as it is written, and deletions', async () => {
    const store = memoryStore();
    const inspector = await start({ store, token: TOKEN });
    const { events, stop } = await listen(inspector);
    const { job } = await queue.enqueue(store, 'send', { n: 2 });
    const supervisor = createSupervisor({ store, queues: [queue] });
    await supervisor.drain();
    const transitions = () =>
      events
        .filter((e) => e.event === 'jobs')
        .flatMap((e) => e.data)
        .filter((e: { jobId: string }) => e.jobId === job.id)
        .map((e: { fromState: string | null; toState: string }) => `${e.fromState}->${e.toState}`);
    await vi.waitFor(() => expect(transitions()).toEqual(['null->pending', 'pending->running', 'running->completed']));
    await post(inspector, `/api/jobs/${job.id}/delete`, { 'x-jobvisor-token': TOKEN });
    await vi.waitFor(() => expect(events.at(-1)).toEqual({ event: 'deleted', data: { jobId: job.id } }));
    stop();
    await supervisor.stop();
  });
});
