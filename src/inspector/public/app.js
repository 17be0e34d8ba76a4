// The inspector's page: plain DOM, no framework, no build step. Every value that comes from
// a job (payload, error, kind, keys) reaches the page through textContent, never as markup.
'use strict';

const $ = (selector) => document.querySelector(selector);

/** An element with attributes and children; strings become text nodes. */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child ?? '')));
  return node;
}

const state = {
  info: null,
  token: sessionStorage.getItem('jobvisor-token') || '',
  /** The current page's cursor: null for the newest jobs. */
  before: null,
  nextBefore: null,
  jobId: null,
  /** The flow page's flow, and the ids of its jobs (the transitions that redraw it). */
  flowId: null,
  flowJobIds: new Set(),
  /** The queue page's queue. */
  queueName: null,
};

// ── API ────────────────────────────────────────────────────────────────────────────────

async function api(path, options = {}) {
  const headers = { accept: 'application/json', ...(state.token ? { 'x-jobvisor-token': state.token } : {}), ...(options.headers || {}) };
  let response;
  try {
    response = await fetch(path, { ...options, headers });
  } catch (error) {
    // No answer at all (not an HTTP error): the server is gone or the network is.
    $('#offline').hidden = false;
    throw Object.assign(new Error('the inspector does not answer'), { status: 0 });
  }
  const body = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw Object.assign(new Error(body.error || `HTTP ${response.status}`), { status: response.status });
  return body;
}

function flash(message, kind = 'info') {
  const node = $('#flash');
  node.textContent = message;
  node.className = kind;
  node.hidden = false;
  clearTimeout(flash.timer);
  flash.timer = setTimeout(() => (node.hidden = true), kind === 'error' ? 10000 : 4000);
}

// ── formatting ─────────────────────────────────────────────────────────────────────────

function ago(iso) {
  if (!iso) return '';
  const ms = Date.now() - Date.parse(iso);
  return ms >= 0 ? `${duration(ms)} ago` : `in ${duration(-ms)}`;
}

function duration(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

/** What a handler last reported with job.progress(percent, message). */
/** A bar with the rounded percent, and the handler's message. */
function progressText(progress) {
  if (!progress) return '—';
  const percent = Math.round(progress.percent);
  return el(
    'span',
    { class: 'progress', title: `${progress.percent}% at ${fullTime(progress.at)}` },
    el('progress', { max: 100, value: percent }),
    ` ${percent}%`,
    progress.message ? el('span', { class: 'muted' }, ` ${progress.message}`) : '',
  );
}

/** A date with its day, in the reader's zone, named: "Tue, 1 Dec 2026, 19:40:12 CET". */
function fullTime(iso) {
  return new Date(iso).toLocaleString(undefined, {
    weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit',
    timeZoneName: 'short',
  });
}

/** A history row's time: its date, to the millisecond, with the zone: "1 Dec 2026, 19:40:12.345 CET". */
function eventTime(iso) {
  return new Date(iso).toLocaleString(undefined, {
    day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit',
    fractionalSecondDigits: 3, hourCycle: 'h23', timeZoneName: 'short',
  });
}

function time(iso) {
  return iso ? el('time', { datetime: iso, title: fullTime(iso) }, ago(iso)) : '';
}

function stateBadge(jobState) {
  return el('span', { class: `state ${jobState}` }, jobState);
}

const HELD_TITLE = 'running in the store, but its worker claimed it ahead and it waits there for a free slot (as of the worker\'s last heartbeat)';

/** A job's badge: a running one its worker holds for a slot says `held` (held.ts). */
function jobBadge(job) {
  if (job.state === 'running' && job.phase === 'held') return el('span', { class: 'state held', title: HELD_TITLE }, 'held');
  return stateBadge(job.state);
}

/** A queue's running count: when the workers say, those whose handler runs, then those held. */
function runningCount(q, max, link) {
  const split = q.running;
  if (!split || split.held === 0) return link(count(q.counts.running, max));
  const capped = q.counts.running >= max ? '+' : '';
  return el('span', {}, link(String(split.started)), el('div', { class: 'muted small held-count', title: HELD_TITLE }, `+${split.held}${capped} held`));
}

function jobLink(id) {
  return el('a', { href: `#/jobs/${encodeURIComponent(id)}` }, id);
}

function count(n, max) {
  return n >= max ? `${n}+` : String(n);
}

/** A tiny bar chart of a series, drawn with SVG elements (no markup strings). */
function sparkline(series, color) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  const width = 80;
  const height = 18;
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('width', width);
  svg.setAttribute('height', height);
  svg.setAttribute('class', 'spark');
  const max = Math.max(1, ...series);
  const bar = width / series.length;
  series.forEach((value, i) => {
    const rect = document.createElementNS(ns, 'rect');
    const h = value === 0 ? 1 : Math.max(2, (value / max) * height);
    rect.setAttribute('x', String(i * bar + 1));
    rect.setAttribute('y', String(height - h));
    rect.setAttribute('width', String(bar - 2));
    rect.setAttribute('height', String(h));
    rect.setAttribute('fill', value === 0 ? '#d0d7de' : color);
    svg.append(rect);
  });
  return svg;
}

function sum(series) {
  return series.reduce((a, b) => a + b, 0);
}

function addSeries(a, b) {
  if (!a) return b || null;
  if (!b) return a;
  return a.map((value, i) => value + (b[i] || 0));
}

// ── overview ───────────────────────────────────────────────────────────────────────────

async function loadQueues() {
  const view = await api('/api/queues');
  const body = $('#queues tbody');
  const rows = view.queues.map((q) => {
    const completed = q.throughput.completed || view.buckets.map(() => 0);
    const failed = addSeries(q.throughput.retrying, q.throughput.dead) || view.buckets.map(() => 0);
    const link = (jobState) => (text) => el('a', { href: `/?queue=${encodeURIComponent(q.queue)}&state=${jobState}` }, text);
    const filter = (jobState) => (jobState === 'running' ? runningCount(q, view.maxCount, link(jobState)) : link(jobState)(count(q.counts[jobState], view.maxCount)));
    // Beside a supervisor: what this process did since it started.
    const here = q.process
      ? el('div', { class: 'muted small' }, `here: ${q.process.running} running, ${q.process.completed} completed, ${q.process.retrying + q.process.dead} failed`)
      : '';
    return el(
      'tr',
      { 'data-queue': q.queue },
      el('td', {}, el('a', { href: `#/queues/${encodeURIComponent(q.queue)}`, title: 'its page: counts, dead jobs by error' }, q.queue), here),
      el(
        'td',
        { class: 'queue-status' },
        q.pausedAt
          ? el('span', { class: 'state paused', title: `paused since ${fullTime(q.pausedAt)}: no worker claims its jobs` }, 'paused')
          : el('span', { class: 'state active' }, 'active'),
      ),
      ...['pending', 'retrying', 'running', 'waiting', 'sleeping', 'dead', 'skipped', 'cancelled'].map((s) =>
        el('td', { class: `num ${q.counts[s] > 0 ? s : ''}` }, filter(s)),
      ),
      el('td', { title: q.oldestRunAt ? `runAt ${q.oldestRunAt}` : '' }, q.oldestWaitMs === null ? '—' : duration(q.oldestWaitMs)),
      el('td', { class: 'spark-cell', title: 'per minute, oldest first' }, sparkline(completed, '#1a7f37'), ` ${sum(completed)}`),
      el('td', { class: 'spark-cell', title: 'attempts that failed (retrying or dead), per minute' }, sparkline(failed, '#cf222e'), ` ${sum(failed)}`),
      el('td', { class: 'act-col' }, state.info.actions ? queueButton(q) : ''),
    );
  });
  body.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 14, class: 'muted' }, 'no jobs yet'))]));
  $('#queue-names').replaceChildren(...view.queues.map((q) => el('option', { value: q.queue })));
  $('#queues-note').textContent = `jobs completed and attempts failed in the last ${view.buckets.length} min, per minute${view.partial ? ' (at least: history read in part)' : ''}`;

  const running = view.running.map((job) =>
    el(
      'tr',
      { 'data-job-id': job.id },
      el('td', {}, jobLink(job.id)),
      el('td', {}, job.queue),
      el('td', {}, job.kind),
      el('td', { class: 'num' }, `${job.attempt} / ${job.maxAttempts}`),
      el('td', { class: 'wrap' }, job.workerId || '', job.phase === 'held' ? el('div', {}, jobBadge(job)) : ''),
      el('td', {}, time(job.leaseExpiresAt)),
      el('td', {}, progressText(job.progress)),
    ),
  );
  $('#running tbody').replaceChildren(...(running.length ? running : [el('tr', {}, el('td', { colspan: 7, class: 'muted' }, 'nothing running'))]));
  $('#running-note').textContent = view.runningMore ? `the newest ${view.running.length}` : '';

  const lastError = view.supervisor && view.supervisor.lastError;
  $('#store-error').hidden = !lastError;
  if (lastError) $('#store-error').textContent = `last store error in this process, ${ago(lastError.at)}: ${lastError.message}`;
  await loadThroughput();
}

async function loadWorkers() {
  const view = await api('/api/workers');
  const rows = view.workers.map((w) =>
    el(
      'tr',
      { 'data-worker-id': w.workerId, class: w.quiet ? 'quiet' : '' },
      el('td', { class: 'wrap' }, w.workerId, w.quiet ? el('div', { class: 'error small' }, 'no heartbeat lately: stopped without saying, or cut off') : ''),
      el('td', {}, w.host),
      el('td', { class: 'num' }, String(w.pid)),
      el('td', { class: 'wrap' }, w.queues.join(', ')),
      // Held in the store now; the heartbeat's own count (prefetched jobs too) is as of its last beat.
      el('td', { class: 'num', title: `at its last heartbeat: ${w.running} held in all` }, ...workerRunning(w)),
      el('td', {}, time(w.startedAt)),
      el('td', {}, time(w.lastSeenAt)),
      el('td', { class: 'held' }, ...(w.jobs.length ? w.jobs.flatMap((job) => [jobLink(job.id), ` ${job.queue}/${job.kind} `, job.phase === 'held' ? jobBadge(job) : '', ' ']) : [el('span', { class: 'muted' }, 'none')])),
    ),
  );
  $('#workers-table tbody').replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 8, class: 'muted' }, 'no worker is running on this store'))]));
  $('#workers-note').textContent = `each supervisor writes a heartbeat every ${Math.round(view.heartbeatMs / 1000)} s${view.jobsMore ? '; jobs: the newest running only' : ''}`;
  $('#orphans').hidden = view.orphans.length === 0;
  $('#orphans').replaceChildren(`running jobs held by a worker not listed (its lease lapses, then the reaper rescues them): `, ...view.orphans.flatMap((job) => [jobLink(job.id), ' ']));
}

/** Its handlers running and the jobs it holds for a slot, as its heartbeat says; an older
 *  version's row says neither: then what the store holds for it. */
function workerRunning(w) {
  if (!w.held) return [String(w.jobs.length)];
  // What the store holds for it now, less what its last heartbeat said waits for a slot.
  const started = w.jobs.filter((job) => job.phase !== 'held').length;
  return [String(started), w.held.length > 0 ? el('div', { class: 'muted small held-count', title: HELD_TITLE }, `+${w.held.length} held`) : ''];
}

function queueButton(q) {
  const action = q.pausedAt ? 'resume' : 'pause';
  const button = el('button', { type: 'button', 'data-queue-action': action }, action);
  button.addEventListener('click', async () => {
    if (action === 'pause' && !confirm(`Pause queue ${q.queue}? No worker will claim its jobs until it is resumed.`)) return;
    try {
      const result = await api(`/api/queues/${encodeURIComponent(q.queue)}/${action}`, { method: 'POST' });
      flash(result.message);
      await refresh();
    } catch (error) {
      flash(`${action} refused (${error.status || 'error'}): ${error.message}`, 'error');
    }
  });
  return button;
}

// ── a queue's page ─────────────────────────────────────────────────────────────────────

const COUNTED_STATES = ['pending', 'retrying', 'running', 'waiting', 'sleeping', 'dead', 'skipped', 'cancelled'];

/** Under a queue's pending count: how many are due now, scheduled for later (never ran) and
 *  snoozed (ran before, wait to run again). Due is what the others leave of an exact count. */
function pendingSplit(q, maxCount) {
  const { scheduled, snoozed } = q.later;
  const exact = q.counts.pending < maxCount;
  const parts = [exact ? `${q.counts.pending - scheduled - snoozed} due` : 'due: many', `${count(scheduled, maxCount)} scheduled`, `${count(snoozed, maxCount)} snoozed`];
  return el('div', { class: 'small muted pending-split' }, parts.join(' · '));
}

/** A queue definition's limits as one line: concurrency, per key, rate, gate, attempts, deadline. */
function limitsText(limits) {
  const parts = [`concurrency ${limits.concurrency} per worker`];
  parts.push(`${limits.perKeyConcurrency} per concurrency key`);
  if (limits.rateLimit) parts.push(`at most ${limits.rateLimit.max} starts per ${duration(limits.rateLimit.intervalMs)}`);
  if (limits.gate) parts.push(`gate "${limits.gate}"`);
  if (limits.fairShare) parts.push('fair share across tenants');
  parts.push(`${limits.maxAttempts} attempt${limits.maxAttempts === 1 ? '' : 's'}`);
  parts.push(limits.deadlineMs === null ? 'no deadline' : `deadline ${duration(limits.deadlineMs)}`);
  parts.push(`lease ${duration(limits.leaseMs)}`);
  return `limits: ${parts.join(', ')}`;
}

/** A queue's own page (#/queues/<name>): its counts and limits, its throughput over the last
 *  hour, pause or resume, its dead jobs by error. */
async function loadQueue(name) {
  const [view, dead, tenants, throughput] = await Promise.all([
    api('/api/queues'),
    api(`/api/queues/${encodeURIComponent(name)}/dead-groups`),
    api(`/api/queues/${encodeURIComponent(name)}/tenants`),
    api('/api/throughput?window=1h'),
  ]);
  if (state.queueName !== name) return;
  const q = view.queues.find((queue) => queue.queue === name);
  const series = throughput.queues.find((queue) => queue.queue === name);
  $('#queue-name').textContent = name;
  $('#queue-jobs').href = `/?queue=${encodeURIComponent(name)}`;
  $('#queue-status').replaceChildren(q && q.pausedAt ? el('span', { class: 'state paused', title: `paused since ${fullTime(q.pausedAt)}` }, 'paused') : el('span', { class: 'state active' }, 'active'));
  $('#queue-act').replaceChildren(state.info.actions ? queueButton(q || { queue: name, pausedAt: null }) : '');
  const link = (jobState) => (text) => el('a', { href: `/?queue=${encodeURIComponent(name)}&state=${jobState}` }, text);
  const filter = (jobState) =>
    q && jobState === 'running' ? runningCount(q, view.maxCount, link(jobState)) : link(jobState)(count(q ? q.counts[jobState] : 0, view.maxCount));
  $('#queue-counts tbody').replaceChildren(
    el(
      'tr',
      {},
      ...COUNTED_STATES.map((s) => el('td', { class: `num ${q && q.counts[s] > 0 ? s : ''}` }, filter(s), s === 'pending' && q ? pendingSplit(q, view.maxCount) : '')),
      el('td', { title: q && q.oldestRunAt ? `runAt ${q.oldestRunAt}` : '' }, !q || q.oldestWaitMs === null ? '—' : duration(q.oldestWaitMs)),
      el('td', { class: 'num', id: 'queue-completed-hour' }, series ? String(series.completed.reduce((a, b) => a + b, 0)) : '0'),
    ),
  );
  $('#queue-throughput tbody').replaceChildren(
    series && [...series.completed, ...series.failed, ...series.attempts].some((n) => n > 0)
      ? el('tr', {}, el('td', { class: 'tp-cell' }, jobsChart(series, throughput, 'min')), el('td', { class: 'tp-cell' }, runTimeChart(series, throughput)))
      : el('tr', {}, el('td', { colspan: 2, class: 'muted tp-idle' }, 'idle: nothing ended in the last hour')),
  );
  const known = state.info.queues && state.info.queues.find((queue) => queue.name === name);
  $('#queue-limits').replaceChildren(
    known ? limitsText(known.limits) : el('span', { class: 'muted' }, 'limits: as its workers define them (start the inspector with its queues to show them here)'),
  );
  const rows = dead.groups.map((group) =>
    el(
      'tr',
      {},
      el('td', { class: 'num' }, String(group.count)),
      el('td', {}, group.code ?? '—'),
      el('td', { class: 'error-cell', title: group.message ?? '' }, el('span', { class: 'clip' }, group.message ?? '—')),
      el('td', {}, time(group.firstAt)),
      el('td', {}, time(group.lastAt)),
      el('td', {}, jobLink(group.newestJobId)),
      el('td', { class: 'act-col' }, state.info.actions ? retryGroupButton(name, group) : ''),
    ),
  );
  $('#dead-groups tbody').replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 7, class: 'muted' }, 'no dead jobs'))]));
  $('#tenants').hidden = tenants.tenants.length === 0;
  $('#tenants-table tbody').replaceChildren(
    ...tenants.tenants.map((t) =>
      el(
        'tr',
        { 'data-tenant': t.tenant ?? '' },
        el('td', {}, t.tenant ?? el('span', { class: 'muted' }, 'default tenant')),
        el('td', { class: 'num' }, String(t.waiting)),
        el('td', { class: 'num' }, String(t.running)),
      ),
    ),
  );
  $('#tenants-note').textContent = `claims go round-robin across them${tenants.partial ? '; counted in the first 10,000 jobs only' : ''}`;
  $('#enqueue').hidden = !state.info.actions;
  $('#enqueue-kinds').replaceChildren(...(known ? known.kinds : []).map((kind) => el('option', { value: kind })));
  $('#dead-groups-note').textContent = dead.partial
    ? `the newest ${dead.examined} dead jobs, grouped; older ones are not counted`
    : `${dead.examined} dead job${dead.examined === 1 ? '' : 's'}, grouped by error code and message`;
}

/** The enqueue form's fields as the API takes them; a number field left empty is left out. */
function enqueueRequest(form, queue) {
  const text = form.elements.payload.value.trim();
  let payload;
  try {
    payload = text === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw new Error(`payload is not valid JSON: ${error.message}`);
  }
  const number = (name) => (form.elements[name].value === '' ? undefined : Number(form.elements[name].value));
  const runIn = number('runIn');
  return {
    queue,
    kind: form.elements.kind.value.trim(),
    payload,
    ...(runIn === undefined ? {} : { runInMs: Math.round(runIn * 1000) }),
    ...(number('priority') === undefined ? {} : { priority: number('priority') }),
    ...(form.elements.uniqueKey.value === '' ? {} : { uniqueKey: form.elements.uniqueKey.value }),
    ...(number('maxAttempts') === undefined ? {} : { maxAttempts: number('maxAttempts') }),
  };
}

async function enqueueJob(event) {
  event.preventDefault();
  try {
    const body = enqueueRequest(event.target, state.queueName);
    const result = await api('/api/jobs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    flash(result.message);
    location.hash = `#/jobs/${encodeURIComponent(result.job.id)}`;
  } catch (error) {
    flash(`enqueue refused${error.status ? ` (${error.status})` : ''}: ${error.message}`, 'error');
  }
}

function retryGroupButton(queue, group) {
  const button = el('button', { type: 'button', 'data-group-action': 'retry' }, 'retry these');
  button.addEventListener('click', async () => {
    const what = `${group.code ?? 'no code'}: ${group.message ?? 'no message'}`;
    if (!confirm(`Retry the ${group.count} dead jobs of queue ${queue} that died of "${what}"?`)) return;
    try {
      const result = await api(`/api/queues/${encodeURIComponent(queue)}/dead-groups/retry`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: group.code, message: group.message }),
      });
      flash(result.message);
    } catch (error) {
      flash(`retry refused (${error.status || 'error'}): ${error.message}`, 'error');
    }
    await refresh();
  });
  return button;
}

// ── schedules ──────────────────────────────────────────────────────────────────────────

async function loadSchedules() {
  const view = await api('/api/schedules');
  const rows = view.schedules.map((s) =>
    el(
      'tr',
      { 'data-schedule': s.name },
      el('td', {}, s.name),
      el(
        'td',
        { class: 'schedule-status' },
        !s.registered
          ? el('span', { class: 'state', title: 'no supervisor running it has registered it in the store yet' }, 'not started')
          : s.pausedAt
            ? el('span', { class: 'state paused', title: `paused since ${fullTime(s.pausedAt)}: its ticks pass with no job` }, 'paused')
            : el('span', { class: 'state active' }, 'active'),
      ),
      el('td', {}, el('code', {}, s.timetable)),
      el('td', {}, el('a', { href: `#/queues/${encodeURIComponent(s.queue)}` }, s.queue), `/${s.kind}`),
      el('td', {}, s.lastTickAt ? time(s.lastTickAt) : '—'),
      el('td', {}, s.pausedAt ? el('span', { class: 'muted', title: fullTime(s.nextTickAt) }, 'paused') : time(s.nextTickAt)),
      el('td', { class: 'act-col row-actions' }, ...(state.info.actions ? scheduleButtons(s) : [])),
    ),
  );
  $('#schedules-table tbody').replaceChildren(
    ...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 7, class: 'muted' }, 'no schedules: start the inspector with them (startInspector({ schedules }), or jobvisor inspect --worker-module)'))]),
  );
  $('#schedules-note').textContent = `times by the store's clock; a paused schedule advances without enqueueing`;
}

function scheduleButtons(s) {
  const actions = ['run', ...(s.registered ? [s.pausedAt ? 'resume' : 'pause'] : [])];
  return actions.map((action) => {
    const button = el('button', { type: 'button', 'data-schedule-action': action }, action === 'run' ? 'run now' : action);
    button.addEventListener('click', async () => {
      const question = {
        run: `Enqueue schedule ${s.name}'s job (${s.queue}/${s.kind}) now? Its own ticks go on as before.`,
        pause: `Pause schedule ${s.name}? Its ticks pass with no job until it is resumed.`,
        resume: `Resume schedule ${s.name}? It enqueues again from its next tick.`,
      }[action];
      if (!confirm(question)) return;
      try {
        const result = await api(`/api/schedules/${encodeURIComponent(s.name)}/${action}`, { method: 'POST' });
        flash(result.message);
      } catch (error) {
        flash(`${action} refused (${error.status || 'error'}): ${error.message}`, 'error');
      }
      await refresh();
    });
    return button;
  });
}

/** The list's filters and page live in the real URL's query (`/?queue=mail&state=dead&before=120`),
 *  so reload, Back and a shared link show the same list. */
const LIST_PARAMS = ['queue', 'state', 'kind', 'q', 'in'];
function filterParams() {
  const params = new URLSearchParams();
  const query = new URLSearchParams(location.search);
  for (const name of LIST_PARAMS) if (query.get(name)) params.set(name, query.get(name));
  return params;
}

/** Goes to the list with these filters (and page), as a new history entry. */
function navigateList(params) {
  const query = params.toString();
  history.pushState(null, '', `/${query ? `?${query}` : ''}`);
  route();
}

/** The total the filters match (queue, state, kind), and the bulk buttons when they narrow. */
async function loadTotals() {
  const params = filterParams();
  params.delete('q');
  params.delete('in');
  const { count, capped } = await api(`/api/jobs-count?${params}`);
  state.total = { count, capped, filtered: params.toString() !== '' };
  const described = [...params].map(([name, value]) => `${name} ${value}`).join(', ');
  $('#totals').textContent = `${count}${capped ? '+' : ''} job${count === 1 ? '' : 's'} ${described ? `match ${described}` : 'in all'}`;
  $('#bulk-actions').hidden = !(state.info.actions && state.total.filtered && count > 0);
}

async function bulk(action) {
  const params = filterParams();
  params.delete('q');
  params.delete('in');
  const { count, capped } = state.total;
  const described = [...params].map(([name, value]) => `${name} ${value}`).join(', ');
  if (!confirm(`${action} all ${count}${capped ? '+' : ''} jobs matching ${described}?`)) return;
  try {
    const result = await api(`/api/bulk/${action}?${params}`, { method: 'POST' });
    flash(result.message);
  } catch (error) {
    flash(`${action} all refused (${error.status || 'error'}): ${error.message}`, 'error');
  }
  await Promise.all([loadJobs(), loadQueues()]).catch(() => {});
}

const SEARCH_STRETCHES = 20;

async function loadJobs() {
  loadTotals().catch(() => {});
  const params = filterParams();
  state.before = new URLSearchParams(location.search).get('before');
  if (state.before) params.set('before', state.before);
  // Each answer looks at a bounded stretch of the table; a filter that matches nothing there
  // goes on into older stretches (up to SEARCH_STRETCHES of them) before it says so.
  let page = await api(`/api/jobs?${params}`);
  for (let stretch = 1; page.jobs.length === 0 && page.nextBefore && stretch < SEARCH_STRETCHES; stretch++) {
    params.set('before', page.nextBefore);
    page = await api(`/api/jobs?${params}`);
  }
  state.nextBefore = page.nextBefore;
  const rows = page.jobs.map(jobRow);
  const empty = page.nextBefore ? 'no match in the newest jobs looked at: look further with "older"' : 'no jobs match';
  $('#jobs tbody').replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 9, class: 'muted' }, empty))]));
  $('#older').disabled = !page.nextBefore;
  $('#newest').disabled = !state.before;
  $('#pager-note').textContent = state.before ? `jobs older than ${state.before}` : 'newest first';
}

function jobRow(job) {
  return el(
    'tr',
    { 'data-job-id': job.id },
    el('td', {}, jobLink(job.id)),
    el('td', {}, job.queue),
    el('td', {}, job.kind),
    el('td', { class: 'state-cell' }, jobBadge(job)),
    el('td', { class: 'num' }, `${job.attempt} / ${job.maxAttempts}`),
    el('td', { title: job.uniqueKey || '' }, el('span', { class: 'clip' }, job.uniqueKey || '')),
    el('td', {}, time(job.updatedAt)),
    el('td', { class: 'error-cell', title: job.error ? job.error.message : '' }, el('span', { class: 'clip' }, job.error ? `${job.error.code}: ${job.error.message}` : '')),
    el('td', { class: 'act-col row-actions' }, ...(state.info.actions ? rowActions(job) : [])),
  );
}

/** What can be done to a job in this state: the same rule on the job's page and its row. */
function allowedAction(action, jobState) {
  if (action === 'retry') return ['dead', 'cancelled', 'skipped'].includes(jobState);
  if (action === 'cancel') return ['pending', 'retrying', 'waiting', 'sleeping', 'running'].includes(jobState);
  return jobState !== 'running';
}

/** A row's buttons: each asks first, as the bulk actions do, and sends the token. */
function rowActions(job) {
  return ['retry', 'cancel', 'delete']
    .filter((action) => allowedAction(action, job.state))
    .map((action) => {
      const button = el('button', { type: 'button', 'data-row-action': action, title: `${action} job ${job.id}` }, action);
      button.addEventListener('click', async () => {
        if (!confirm(`${action} job ${job.id} (${job.queue}/${job.kind}, ${job.state})?`)) return;
        try {
          const result = await api(`/api/jobs/${encodeURIComponent(job.id)}/${action}`, { method: 'POST' });
          flash(result.message);
        } catch (error) {
          flash(`${action} refused (${error.status || 'error'}): ${error.message}`, 'error');
        }
        await Promise.all([loadJobs(), loadQueues()]).catch(() => {});
      });
      return button;
    });
}

function fillFilterForm() {
  const form = $('#filters');
  const params = filterParams();
  for (const name of LIST_PARAMS) form.elements[name].value = params.get(name) || '';
  searchPlaceholder();
}

/** The search box says what the search looks in. */
function searchPlaceholder() {
  const form = $('#filters');
  form.elements.q.placeholder = { payload: '{"user": 7}: JSON it contains', error: 'text in the message' }[form.elements.in.value] || 'id or unique key';
}

// ── one job ────────────────────────────────────────────────────────────────────────────

async function loadJob(id) {
  let view;
  try {
    view = await api(`/api/jobs/${encodeURIComponent(id)}`);
  } catch (error) {
    $('#job-id').textContent = id;
    $('#job-state').replaceChildren(error.status === 404 ? 'not found (deleted?)' : error.message);
    return;
  }
  const { job, events, path } = view;
  $('#job-id').textContent = job.id;
  $('#job-state').replaceChildren(stateBadge(job.state));
  const fields = [
    ['queue', job.queue],
    ['kind', job.kind],
    ['attempts', `${job.attempt} of ${job.maxAttempts}`],
    ['priority', job.priority],
    ['unique key', job.uniqueKey || '—'],
    ...(job.tenant !== null ? [['tenant (fair share)', job.tenant]] : []),
    // Until its first claim, enqueues with the key join its burst and move when it runs.
    ...(job.debounceKey !== null ? [['debounce key', job.debounceKey]] : []),
    // The row keeps the last worker's id after its attempt: say so unless one holds it now.
    [job.state === 'running' ? 'worker' : 'last worker', job.workerId || '—'],
    ['lease expires', job.leaseExpiresAt ? time(job.leaseExpiresAt) : '—'],
    ['progress', progressText(job.progress)],
    ['expires (all attempts)', job.expiresAt ? time(job.expiresAt) : '—'],
    ['cancel requested', job.cancelRequestedAt ? time(job.cancelRequestedAt) : '—'],
    [job.debounceKey !== null && job.attempt === 0 ? 'runs at (unless the burst goes on)' : 'run at', time(job.runAt)],
    ['created', time(job.createdAt)],
    ['updated', time(job.updatedAt)],
    ['finished', job.finishedAt ? time(job.finishedAt) : '—'],
    ['machine state', path.current || 'not claimed yet'],
  ];
  $('#job-fields tbody').replaceChildren(...fields.map(([name, value]) => el('tr', {}, el('th', {}, name), el('td', {}, value))));
  $('#job-payload').textContent = JSON.stringify(job.payload, null, 2);
  const failed = job.error !== null;
  $('#job-outcome-title').textContent = failed ? 'error' : 'result';
  $('#job-outcome').className = failed ? 'error' : '';
  $('#job-outcome').textContent = failed
    ? [`${job.error.code}${job.error.name ? ` (${job.error.name})` : ''}: ${job.error.message}`, job.error.stack || ''].join('\n').trim()
    : job.result === null ? '—' : JSON.stringify(job.result, null, 2);
  $('#job-history tbody').replaceChildren(
    ...events.map((event) =>
      el(
        'tr',
        {},
        el('td', {}, el('time', { datetime: event.at, title: ago(event.at) }, eventTime(event.at))),
        el('td', {}, event.fromState ? stateBadge(event.fromState) : 'enqueued', ' → ', stateBadge(event.toState)),
        el('td', { class: 'num' }, event.attempt),
        el('td', { class: 'wrap' }, event.workerId || ''),
        el('td', { class: 'error-cell' }, event.error ? `${event.error.code}: ${event.error.message}` : ''),
      ),
    ),
  );
  for (const button of document.querySelectorAll('#actions button[data-action]')) {
    const action = button.dataset.action;
    button.disabled = !allowedAction(action, job.state);
  }
  renderSignalForm(job);
  renderDurable(view.durable);
  renderStory(view.story);
  loadJobFlow(job).catch(() => {});
  // Progress writes no history row, so no event tells of it: a running job is read again.
  state.jobRunning = job.state === 'running';
  await loadDiagram(job.id);
}

/** As the server colours each attempt's steps (story-svg.ts). */
const ATTEMPT_COLORS = ['#6e7781', '#0969da', '#bc4c00', '#8250df', '#1a7f37', '#bf3989', '#9a6700', '#0550ae', '#cf222e'];
function attemptColor(attempt) {
  return attempt === 0 ? ATTEMPT_COLORS[0] : ATTEMPT_COLORS[1 + ((attempt - 1) % (ATTEMPT_COLORS.length - 1))];
}

function durationText(ms) {
  if (ms === null) return 'running';
  return ms < 1000 ? `${ms} ms` : ms < 60000 ? `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s` : duration(ms);
}

/** The steps in order, and one row per attempt: start, duration, outcome, worker, error. */
function renderStory(story) {
  $('#job-steps').replaceChildren(
    ...story.steps.map((s) =>
      el(
        'li',
        { 'data-step': s.n, 'data-attempt': s.attempt },
        el('span', { class: 'step-n', 'data-color': attemptColor(s.attempt) }, String(s.n)),
        ' ',
        s.from ? stateBadge(s.from) : '',
        s.from ? ' → ' : '',
        stateBadge(s.to),
        ` ${s.label}`,
        s.attempt > 0 ? el('span', { class: 'muted small' }, ` (attempt ${s.attempt})`) : '',
      ),
    ),
  );
  // Colours from data, set as properties: the CSP allows no inline style attributes.
  for (const dot of document.querySelectorAll('#job-steps .step-n')) dot.style.background = dot.dataset.color;
  $('#job-attempts tbody').replaceChildren(
    ...(story.attempts.length
      ? story.attempts.map((a) => {
          const error = a.error
            ? el(
                'details',
                {},
                el('summary', {}, `${a.error.code}: ${a.error.message}`),
                el('pre', { class: 'error' }, a.error.stack || '(no stack)'),
              )
            : '';
          const row = el(
            'tr',
            { 'data-attempt': a.attempt },
            el('td', { class: 'num' }, el('span', { class: 'step-n', 'data-color': attemptColor(a.attempt) }, String(a.attempt))),
            el('td', {}, el('time', { datetime: a.startedAt, title: ago(a.startedAt) }, fullTime(a.startedAt))),
            el('td', { class: 'num' }, durationText(a.durationMs)),
            el('td', {}, a.outcome ? stateBadge(a.outcome) : stateBadge('running'), a.how ? ` ${a.how}` : ''),
            el('td', { class: 'wrap' }, a.workerId || ''),
            el('td', { class: 'error-cell wrap' }, error),
          );
          return row;
        })
      : [el('tr', {}, el('td', { colspan: 6, class: 'muted' }, 'not claimed yet'))]),
  );
  for (const dot of document.querySelectorAll('#job-attempts .step-n')) dot.style.background = dot.dataset.color;
}

function diagramView() {
  const checked = document.querySelector('input[name="diagram-view"]:checked');
  return checked ? checked.value : 'story';
}

/** The server draws both views; the SVG holds only names from the machine and numbers. */
async function loadDiagram(id) {
  const file = diagramView() === 'machine' ? 'machine.svg' : 'story.svg';
  const response = await fetch(`/api/jobs/${encodeURIComponent(id)}/${file}`, { headers: state.token ? { 'x-jobvisor-token': state.token } : {} });
  if (!response.ok) return;
  const doc = new DOMParser().parseFromString(await response.text(), 'image/svg+xml');
  if (doc.documentElement.nodeName !== 'svg') return;
  $('#job-diagram').replaceChildren(document.importNode(doc.documentElement, true));
  $('#job-diagram').dataset.view = file === 'machine.svg' ? 'machine' : 'story';
}

/** The "send signal" form: shown while the job sleeps waiting for a signal, with its name. */
function renderSignalForm(job) {
  const form = $('#signal-form');
  const waits = job.state === 'sleeping' && job.waitingForSignal !== null;
  if (waits && (form.hidden || form.dataset.jobId !== job.id)) {
    $('#signal-name').value = job.waitingForSignal;
    $('#signal-payload').value = '{}';
  }
  form.dataset.jobId = job.id;
  form.hidden = !waits;
}

async function sendSignal(event) {
  event.preventDefault();
  const id = state.jobId;
  const name = $('#signal-name').value;
  let payload;
  try {
    payload = JSON.parse($('#signal-payload').value || '{}');
  } catch (error) {
    return flash(`the payload is not valid JSON: ${error.message}`, 'error');
  }
  if (!confirm(`Send signal "${name}" to job ${id}?`)) return;
  try {
    const result = await api(`/api/jobs/${encodeURIComponent(id)}/signal`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, payload }),
    });
    flash(result.message);
    await loadJob(id);
  } catch (error) {
    flash(`signal refused (${error.status || 'error'}): ${error.message}`, 'error');
  }
}

const DURABLE_STATUS = { timedOut: 'timed out' };

/** The job's stored steps, sleeps and signal waits (routes.ts's `durable`), in order. */
function renderDurable(steps) {
  $('#job-durable').hidden = steps.length === 0;
  $('#job-durable-steps tbody').replaceChildren(
    ...steps.map((s) => {
      const value = 'value' in s ? JSON.stringify(s.value) : s.kind === 'sleep' ? `until ${new Date(s.until).toISOString()}` : '';
      const detail = s.kind === 'signal' ? `signal "${s.signal}"${s.until ? `, timeout ${new Date(s.until).toISOString()}` : ''}` : '';
      return el(
        'tr',
        { 'data-step-name': s.name, 'data-status': s.status, class: s.status === 'superseded' ? 'muted' : undefined },
        el('td', {}, s.name),
        el('td', {}, s.kind),
        el('td', {}, DURABLE_STATUS[s.status] || s.status),
        el('td', {}, s.stored ? 'yes' : 'no'),
        el('td', { class: 'wrap' }, [value, detail].filter(Boolean).join(' · ')),
        el('td', {}, time(s.at)),
      );
    }),
  );
}

/** What the job page asks before each action. */
const ACTION_QUESTIONS = {
  retry: (id) => `Retry job ${id}? It goes back to pending and runs again.`,
  cancel: (id) => `Cancel job ${id}? A running job is asked to stop; a waiting one ends at once.`,
  delete: (id) => `Delete job ${id} and its history?`,
};

async function act(action) {
  const id = state.jobId;
  if (!confirm(ACTION_QUESTIONS[action](id))) return;
  try {
    const result = await api(`/api/jobs/${encodeURIComponent(id)}/${action}`, { method: 'POST' });
    flash(result.message);
    if (action === 'delete') location.hash = '#/';
    else await loadJob(id);
  } catch (error) {
    flash(`${action} refused (${error.status || 'error'}): ${error.message}`, 'error');
  }
}

// ── a flow ─────────────────────────────────────────────────────────────────────────────

/** The flow's DAG (drawn by the server: names escaped there) and its counts per state. */
async function loadFlow(id) {
  let view;
  try {
    view = await api(`/api/flows/${encodeURIComponent(id)}`);
  } catch (error) {
    $('#flow-id').textContent = id;
    $('#flow-name').textContent = error.status === 404 ? 'not found' : error.message;
    return;
  }
  state.flowJobIds = new Set(view.jobs.map((entry) => entry.job.id));
  $('#flow-id').textContent = view.id;
  $('#flow-name').textContent = view.name;
  $('#flow-counts').replaceChildren(
    `${view.jobs.length} job${view.jobs.length === 1 ? '' : 's'}: `,
    ...Object.entries(view.counts).flatMap(([jobState, n]) => [stateBadge(jobState), ` ${n} `]),
  );
  const response = await fetch(`/api/flows/${encodeURIComponent(id)}/graph.svg`, { headers: state.token ? { 'x-jobvisor-token': state.token } : {} });
  if (!response.ok || state.flowId !== id) return;
  const doc = new DOMParser().parseFromString(await response.text(), 'image/svg+xml');
  if (doc.documentElement.nodeName !== 'svg') return;
  $('#flow-diagram').replaceChildren(document.importNode(doc.documentElement, true));
}

/** On a job's page: the flow it belongs to, asked again only when the job's state moves. */
async function loadJobFlow(job) {
  const key = `${job.id}:${job.state}`;
  if (state.jobFlowKey === key) return;
  if (!String(state.jobFlowKey).startsWith(`${job.id}:`)) $('#job-flow').hidden = true;
  state.jobFlowKey = key;
  const { flow } = await api(`/api/jobs/${encodeURIComponent(job.id)}/flow`);
  if (state.jobId !== job.id) return;
  $('#job-flow').hidden = !flow;
  if (flow) {
    $('#job-flow').replaceChildren(
      'in flow ',
      el('a', { href: `#/flows/${encodeURIComponent(flow.id)}`, id: 'job-flow-link' }, `${flow.id} ${flow.name}`),
      ` as ${flow.node ?? '?'} (${flow.jobs} jobs)`,
    );
  }
}

// ── routing and live updates ───────────────────────────────────────────────────────────

function route() {
  const match = /^#\/jobs\/([^?]+)/.exec(location.hash);
  state.jobId = match ? decodeURIComponent(match[1]) : null;
  const flowMatch = /^#\/flows\/([^?/]+)/.exec(location.hash);
  state.flowId = flowMatch ? decodeURIComponent(flowMatch[1]) : null;
  $('#flow').hidden = state.flowId === null;
  if (state.flowId !== null) $('#flow-diagram').replaceChildren();
  state.workersPage = state.jobId === null && /^#\/workers\b/.test(location.hash);
  state.schedulesPage = /^#\/schedules\b/.test(location.hash);
  $('#schedules').hidden = !state.schedulesPage;
  $('#tab-schedules').classList.toggle('current', state.schedulesPage);
  const queueMatch = /^#\/queues\/([^?/]+)/.exec(location.hash);
  state.queueName = queueMatch ? decodeURIComponent(queueMatch[1]) : null;
  $('#queue').hidden = state.queueName === null;
  $('#overview').hidden = state.jobId !== null || state.workersPage || state.flowId !== null || state.queueName !== null || state.schedulesPage;
  $('#workers').hidden = !state.workersPage;
  $('#job').hidden = state.jobId === null;
  $('#tab-workers').classList.toggle('current', state.workersPage);
  $('#tab-overview').classList.toggle('current', !state.workersPage && state.jobId === null && state.queueName === null && !state.schedulesPage);
  return refresh();
}

async function refresh() {
  try {
    if (state.jobId !== null) await loadJob(state.jobId);
    else if (state.flowId !== null) await loadFlow(state.flowId);
    else if (state.workersPage) await loadWorkers();
    else if (state.queueName !== null) await loadQueue(state.queueName);
    else if (state.schedulesPage) await loadSchedules();
    else {
      fillFilterForm();
      await Promise.all([loadQueues(), loadJobs()]);
    }
  } catch (error) {
    flash(error.message, 'error');
  }
}

// ── one refresh loop ──────────────────────────────────────────────────────────────────
// Transitions (server-sent events) only mark the view as changed; one loop, at the rate the
// user picks (kept in localStorage), reads again what the view shows when it changed, and
// every AGE_MS anyway (relative times, queue ages). Nothing is read while the tab is hidden.

const RATE_KEY = 'jobvisor-refresh-ms';
const DEFAULT_RATE_MS = 2000;
const AGE_MS = 15000;
const loop = { timer: null, changed: false, lastRead: 0, running: false };

/** The user's rate in ms (0: paused), or the default when none (or an unknown one) is kept. */
function refreshRate() {
  const stored = localStorage.getItem(RATE_KEY);
  return [...$('#refresh-rate').options].some((option) => option.value === stored) ? Number(stored) : DEFAULT_RATE_MS;
}

/** The next tick, or none: paused by the user (rate 0) or while the tab is hidden. */
function scheduleTick() {
  clearTimeout(loop.timer);
  loop.timer = null;
  const rate = refreshRate();
  if (rate === 0 || document.visibilityState === 'hidden') return;
  loop.timer = setTimeout(tick, rate);
}

async function tick() {
  // A running job's progress moves without a transition: its page reads it on every tick.
  const due = loop.changed || Date.now() - loop.lastRead >= AGE_MS || (state.jobId !== null && state.jobRunning);
  if (due && !loop.running) {
    loop.changed = false;
    loop.running = true;
    try {
      await readView();
    } finally {
      loop.running = false;
    }
  }
  scheduleTick();
}

/** Reads again what the view shows; the loop's only requests. */
async function readView() {
  loop.lastRead = Date.now();
  if (state.jobId !== null) return loadJob(state.jobId).catch(() => {});
  if (state.flowId !== null) return loadFlow(state.flowId).catch(() => {});
  if (state.workersPage) return loadWorkers().catch(() => {});
  if (state.queueName !== null) return loadQueue(state.queueName).catch(() => {});
  if (state.schedulesPage) return loadSchedules().catch(() => {});
  const reads = [loadQueues()];
  // The newest page gains new jobs; an older one has its rows' states set from the events.
  if (!state.before) reads.push(loadJobs());
  return Promise.all(reads).catch(() => {});
}

function onTransitions(events) {
  $('#live').title = `last transition ${fullTime(new Date().toISOString())}`;
  if (state.jobId !== null) {
    if (events.some((event) => event.jobId === state.jobId)) loop.changed = true;
    return;
  }
  if (state.flowId !== null) {
    if (events.some((event) => state.flowJobIds.has(event.jobId))) loop.changed = true;
    return;
  }
  loop.changed = true;
  if (state.workersPage || state.queueName !== null || state.schedulesPage || !state.before) return;
  for (const event of events) {
    const row = document.querySelector(`#jobs tr[data-job-id="${CSS.escape(event.jobId)}"]`);
    if (!row) continue;
    row.querySelector('.state-cell').replaceChildren(stateBadge(event.toState));
    // The row's buttons follow its state (queue and kind as the row shows them).
    const job = { id: event.jobId, queue: row.cells[1].textContent, kind: row.cells[2].textContent, state: event.toState };
    if (state.info.actions) row.querySelector('.row-actions').replaceChildren(...rowActions(job));
  }
}

function startLoop() {
  const select = $('#refresh-rate');
  select.value = String(refreshRate());
  select.addEventListener('change', () => {
    localStorage.setItem(RATE_KEY, select.value);
    scheduleTick();
  });
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') return scheduleTick();
    // Back in view: what changed meanwhile, at once.
    loop.changed = true;
    tick();
  });
  scheduleTick();
}

function connect() {
  const source = new EventSource('/api/events');
  const live = $('#live');
  source.addEventListener('open', () => {
    $('#offline').hidden = true;
    live.textContent = 'live';
    live.className = 'live on';
    refresh();
  });
  source.addEventListener('error', () => {
    $('#offline').hidden = false;
    live.textContent = 'reconnecting…';
    live.className = 'live off';
  });
  source.addEventListener('jobs', (message) => onTransitions(JSON.parse(message.data)));
  source.addEventListener('deleted', (message) => {
    const { jobId } = JSON.parse(message.data);
    if (state.jobId === jobId) loadJob(jobId);
    else loop.changed = true;
  });
  source.addEventListener('reset', () => refresh());
}

/** Asks the server whether the token is the right one; the answer is shown beside the box. */
async function checkToken(token) {
  const note = $('#token-note');
  try {
    await api('/api/session', { method: 'POST', headers: { 'x-jobvisor-token': token } });
    note.textContent = 'accepted';
    note.className = 'token-note ok';
    return true;
  } catch (error) {
    note.textContent = error.status === 403 ? 'refused' : `not checked: ${error.message}`;
    note.className = 'token-note bad';
    return false;
  }
}

/** Bound beyond loopback, the inspector shows nothing until the token is given. */
async function loadInfo() {
  try {
    return await api('/api/info');
  } catch (error) {
    if (error.status !== 401) throw error;
    $('#token-form').hidden = false;
    flash('this inspector needs its token to show anything: enter it above', 'error');
    await new Promise((resolve) => {
      $('#token-form').addEventListener('submit', async function once(event) {
        event.preventDefault();
        state.token = $('#token').value;
        if (!(await checkToken(state.token))) return;
        sessionStorage.setItem('jobvisor-token', state.token);
        $('#token-form').removeEventListener('submit', once);
        resolve();
      });
    });
    return api('/api/info');
  }
}

async function start() {
  state.info = await loadInfo();
  const select = $('#filters').elements.state;
  for (const s of state.info.states) select.append(el('option', { value: s }, s));
  if (state.info.supervisor) $('#worker').textContent = `in process with worker ${state.info.supervisor.workerId}`;
  $('#token-form').hidden = !state.info.actions;
  $('#readonly').hidden = state.info.actions;
  $('#actions').hidden = !state.info.actions;
  $('#token').value = state.token;

  if (state.info.actions && state.token) await checkToken(state.token);
  $('#token-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    state.token = $('#token').value;
    sessionStorage.setItem('jobvisor-token', state.token);
    if (!state.token) {
      $('#token-note').textContent = '';
      return flash('token cleared');
    }
    if (await checkToken(state.token)) flash('token accepted for this tab');
  });
  $('#filters').addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const [name, value] of new FormData(event.target)) if (value) params.set(name, String(value).trim());
    navigateList(params);
  });
  $('#filters').addEventListener('reset', () => navigateList(new URLSearchParams()));
  $('#filters').elements.in.addEventListener('change', searchPlaceholder);
  $('#older').addEventListener('click', () => {
    const params = filterParams();
    params.set('before', state.nextBefore);
    navigateList(params);
  });
  $('#newest').addEventListener('click', () => navigateList(filterParams()));
  window.addEventListener('popstate', () => route());
  for (const button of document.querySelectorAll('#actions button[data-action]')) {
    button.addEventListener('click', () => act(button.dataset.action));
  }
  $('#signal-form').addEventListener('submit', sendSignal);
  $('#enqueue-form').addEventListener('submit', enqueueJob);
  for (const button of document.querySelectorAll('#bulk-actions button')) {
    button.addEventListener('click', () => bulk(button.dataset.bulk));
  }
  for (const radio of document.querySelectorAll('input[name="diagram-view"]')) {
    radio.addEventListener('change', () => state.jobId !== null && loadDiagram(state.jobId));
  }
  window.addEventListener('hashchange', () => route());
  await route();
  loop.lastRead = Date.now();
  connect();
  startLoop();
}

start().catch((error) => flash(`cannot reach the inspector: ${error.message}`, 'error'));
