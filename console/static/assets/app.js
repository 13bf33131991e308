// executor console: plain JavaScript over the executor's HTTP API (docs/api.md).
// No framework, no build step, no external URL: everything is fetched from this origin.
'use strict';

(() => {
  // ---------------------------------------------------------------- DOM helpers

  const $ = (sel, root = document) => root.querySelector(sel);

  // h builds an element: attrs sets attributes (on* keys add listeners, `text` sets the
  // text), children are nodes or strings. Data never goes through innerHTML.
  function h(tag, attrs = {}, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k === 'text') el.textContent = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      el.append(c instanceof Node ? c : String(c));
    }
    return el;
  }

  const enc = encodeURIComponent;
  const TERMINAL_PLAN = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

  function fmtTime(s) {
    if (!s) return '—';
    const d = new Date(s);
    if (Number.isNaN(d.getTime())) return s;
    const pad = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
      `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  // fmtCount writes a count with thousands separators: 100000 → "100,000".
  function fmtCount(n) {
    return Number(n || 0).toLocaleString('en-US');
  }

  function fmtMs(ms) {
    if (ms >= 60000) return `${Math.floor(ms / 60000)}m${Math.round((ms % 60000) / 1000)}s`;
    return `${(ms / 1000).toFixed(1)}s`;
  }

  // timeKey makes RFC 3339 times with nanoseconds comparable as strings.
  function timeKey(s) {
    const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(s || '');
    if (!m) return '';
    const secs = Date.parse(m[1] + m[3]);
    return String(secs).padStart(16, '0') + (m[2] || '').padEnd(9, '0');
  }

  function statusBadge(status, testid) {
    return h('span', { class: 'badge', 'data-status': status, 'data-testid': testid, text: status || '—' });
  }

  // fmtSpan is a coarse duration: "42s", "3m05s", "2h04m", "3d4h".
  function fmtSpan(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    const pad = (n) => String(n).padStart(2, '0');
    if (s < 60) return `${s}s`;
    if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
    if (s < 86400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
    return `${Math.floor(s / 86400)}d${Math.floor((s % 86400) / 3600)}h`;
  }

  // fmtAge is how far an RFC 3339 time is from now: "3m05s" ago, or "in 3m05s" ahead.
  function fmtAge(s) {
    const t = Date.parse(s);
    if (!Number.isFinite(t)) return '?';
    const ms = Date.now() - t;
    return ms < 0 ? `in ${fmtSpan(-ms)}` : fmtSpan(ms);
  }

  // ageEl shows fmtAge(since), kept current by the page's ticker (every [data-since]).
  function ageEl(since, attrs = {}) {
    return h('span', { ...attrs, 'data-since': since, title: since, text: fmtAge(since) });
  }

  function tickAges() {
    for (const el of document.querySelectorAll('[data-since]')) el.textContent = fmtAge(el.dataset.since);
  }

  // ---------------------------------------------------------------- API and errors

  class ApiError extends Error {
    constructor(problem) {
      super(problem.detail || problem.title || `HTTP ${problem.status}`);
      this.problem = problem;
      this.status = problem.status;
    }
  }

  // CONSOLE_HEADER goes with every call: with auth enabled, a change authenticated by the
  // login cookie needs it (a page of another site cannot send it).
  const CONSOLE_HEADER = { 'X-Executor-Console': '1' };

  // api calls the executor; a non-2xx answer throws an ApiError carrying the problem. A 401
  // (the token was revoked, or the cookie is gone) reloads the page: the server shows its
  // login form instead of the console.
  async function api(method, path, { body, contentType, headers = {} } = {}) {
    const init = { method, headers: { Accept: 'application/json', ...CONSOLE_HEADER, ...headers } };
    if (body !== undefined) {
      init.body = body;
      init.headers['Content-Type'] = contentType || 'application/json';
    }
    let res;
    try {
      res = await fetch(path, init);
    } catch (e) {
      throw new ApiError({ status: 0, title: 'Network error', detail: `${method} ${path}: ${e.message || e}` });
    }
    if (res.status === 401) {
      location.reload();
      throw new ApiError({ status: 401, title: 'Unauthorized', detail: 'not logged in: reloading' });
    }
    showRole(res.headers.get('X-Executor-Role'), res.headers.get('X-Executor-Actor'));
    const text = await res.text();
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch { data = null; }
    }
    if (!res.ok) {
      const p = data && typeof data === 'object' ? data : {};
      throw new ApiError({
        status: res.status, title: p.title || res.statusText || `HTTP ${res.status}`,
        detail: p.detail || text || `${method} ${path} answered ${res.status}`, ...p,
      });
    }
    return { data, status: res.status, headers: res.headers };
  }

  // taskRules reads GET /v1/task-statuses once: what each task status means and allows
  // (terminal, settled, atRest, retryable, cancellable, undoable, skippable) as the executor applies it, so the
  // console keeps no list of its own. It resolves to a map from status to its rules; a failed
  // read is tried again on the next call.
  let rulesRead = null;
  function taskRules() {
    if (!rulesRead) {
      rulesRead = api('GET', '/v1/task-statuses')
        .then(({ data }) => Object.fromEntries(data.statuses.map((r) => [r.status, r])))
        .catch((e) => { rulesRead = null; throw e; });
    }
    return rulesRead;
  }

  // showRole shows who is logged in, and the log-out button, once the API reports a role
  // (it does only when auth is enabled).
  // showRole shows who is logged in: the token holder's name and role ("alice (operate)"), or
  // the role alone for a token without a name.
  function showRole(role, actor) {
    if (!role) return;
    const who = $('#whoami');
    who.textContent = actor && actor !== 'anonymous' ? `${actor} (${role})` : role;
    who.dataset.role = role;
    who.dataset.actor = actor || '';
    who.hidden = false;
    $('#logout').hidden = false;
  }

  // logout clears the login cookie and goes back to the login form.
  async function logout() {
    try {
      await fetch('/logout', { method: 'POST', headers: CONSOLE_HEADER, redirect: 'manual' });
    } finally {
      location.replace('/');
    }
  }

  function showError(err) {
    const p = err && err.problem ? err.problem : { title: 'Error', detail: String((err && err.message) || err) };
    const parts = [p.status ? `${p.status} ${p.title || ''}`.trim() : p.title, p.detail].filter(Boolean);
    $('#banner-text').textContent = parts.join(': ');
    $('#banner').hidden = false;
    $('#banner').dataset.status = p.status || '';
  }

  function clearError() {
    $('#banner').hidden = true;
    $('#banner-text').textContent = '';
  }

  // problemBox renders a problem with its field errors (and conflicting tenants).
  function problemBox(p, testid = 'problem') {
    const box = h('div', { class: 'problem', 'data-testid': testid, id: testid, role: 'alert' },
      h('div', { class: 'problem-title', 'data-testid': 'problem-title' }, `${p.status || ''} ${p.title || ''}`.trim()),
      p.detail ? h('div', { class: 'problem-detail', 'data-testid': 'problem-detail', text: p.detail }) : null);
    if (Array.isArray(p.errors) && p.errors.length) {
      box.append(h('ul', { class: 'field-errors' }, p.errors.map((fe) =>
        h('li', { 'data-testid': 'field-error', 'data-field': fe.field },
          h('code', { text: fe.field }), ': ', fe.detail))));
    }
    if (Array.isArray(p.tenants) && p.tenants.length) {
      box.append(h('div', { 'data-testid': 'conflict-tenants' }, 'Conflicting tenants: ',
        p.tenants.map((t, i) => [i ? ', ' : '', h('a', { href: `#/tenants/${enc(t)}`, text: t })])));
    }
    return box;
  }

  // confirmed runs fn after the operator confirmed msg, showing any error in the banner.
  async function confirmed(msg, fn) {
    if (!window.confirm(msg)) return;
    clearError();
    try { await fn(); } catch (e) { showError(e); }
  }

  // ---------------------------------------------------------------- views and routing

  // Each view registers its EventSources and timers here; they are closed on navigation.
  let cleanups = [];
  function onLeave(fn) { cleanups.push(fn); }

  // watch opens an EventSource on url, shows its state in the header, and closes it when
  // the view changes. handlers maps event names to functions of the parsed data. It
  // resolves once the stream is open (or after 2 s), so that a view can load its state
  // knowing that no later transition is missed.
  function watch(url, handlers) {
    const es = new EventSource(url);
    const live = $('#live');
    let opened;
    const open = new Promise((resolve) => { opened = resolve; setTimeout(resolve, 2000); });
    es.onopen = () => { live.dataset.state = 'on'; opened(); };
    es.onerror = () => {
      live.dataset.state = es.readyState === EventSource.CLOSED ? 'off' : 'reconnecting';
      opened(); // a refused stream (a 400) must not hold the view back
      // A refused stream may be a revoked token: a plain call finds out (api reloads on 401).
      if (es.readyState === EventSource.CLOSED) api('GET', '/v1/plans?limit=1').catch(() => {});
    };
    for (const [name, fn] of Object.entries(handlers)) {
      es.addEventListener(name, (msg) => {
        let data = {};
        try { data = JSON.parse(msg.data || '{}'); } catch { /* gap carries {} */ }
        fn(data);
      });
    }
    onLeave(() => { es.close(); live.dataset.state = 'off'; opened(); });
    return open;
  }

  // debounce returns fn delayed until calls stop for ms; pending calls die with the view.
  function debounce(fn, ms) {
    let timer = 0;
    onLeave(() => clearTimeout(timer));
    return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
  }

  // throttle returns a trigger that runs the async fn at most once every ms, soon after a
  // trigger: the first at once, later ones gathered into one run at the end of the interval
  // (or right after a run under way). Unlike debounce, a steady stream of triggers (the events
  // of a 100,000-task rollout) still runs fn once a second. Pending runs die with the view.
  function throttle(fn, ms) {
    let last = 0;
    let timer = 0;
    let running = false;
    let again = false;
    let dead = false;
    onLeave(() => { dead = true; clearTimeout(timer); });
    const schedule = () => {
      if (timer || dead) return;
      timer = setTimeout(run, Math.max(0, last + ms - Date.now()));
    };
    async function run() {
      timer = 0;
      if (running) { again = true; return; }
      running = true;
      last = Date.now();
      try { await fn(); } catch { /* fn shows its own errors */ } finally {
        running = false;
        if (again) { again = false; schedule(); }
      }
    }
    return schedule;
  }

  // views maps a route's view name to its render function (main, id, alive, query); plan.js
  // adds the plan page.
  const views = {};

  let viewSeq = 0;
  function route() {
    for (const fn of cleanups) { try { fn(); } catch { /* closing */ } }
    cleanups = [];
    clearError();
    const seq = ++viewSeq;
    const alive = () => seq === viewSeq;
    // #/plans/<id>?status=WAITING: the part after '?' is the view's query (the plan page's
    // filter), kept in the address so that a filtered list can be shared.
    const [hash, search = ''] = (location.hash.replace(/^#/, '') || '/plans').split('?', 2);
    const query = new URLSearchParams(search);
    const parts = hash.split('/').filter(Boolean).map(decodeURIComponent);
    const main = $('#view');
    main.replaceChildren();
    let view = 'plans';
    if (parts[0] === 'plans' && parts[1]) view = 'plan';
    else if (parts[0] === 'tenants' && parts[1]) view = 'tenant';
    else if (parts[0] === 'submit') view = 'submit';
    else if (parts[0] === 'executors') view = 'executors';
    main.dataset.view = view;
    for (const a of document.querySelectorAll('header nav a')) {
      a.classList.toggle('active', a.getAttribute('href') === `#/${parts[0] || 'plans'}`);
    }
    views[view](main, parts[1], alive, query).catch((e) => { if (alive()) showError(e); });
  }

  // ---------------------------------------------------------------- progress bar

  const PROGRESS_PARTS = [
    ['COMPLETED', 'completed'], ['FAILED', 'failed'], ['INTERRUPTED', 'interrupted'],
    ['ROLLBACK_FAILED', 'rollback-failed'], ['CANCELLED', 'cancelled'], ['SKIPPED', 'skipped'], ['ROLLED_BACK', 'rolled-back'],
    ['RUNNING', 'running'], ['WAITING', 'waiting'], ['PAUSED', 'paused'], ['PENDING', 'pending'],
  ];

  function progressBar(progress) {
    const total = (progress && progress.total) || 0;
    const bar = h('div', { class: 'progress', 'data-testid': 'plan-progress' });
    const title = [];
    for (const [key, cls] of PROGRESS_PARTS) {
      const n = (progress && progress[key]) || 0;
      if (!n || !total) continue;
      const seg = h('span', { class: `seg seg-${cls}`, 'data-part': cls, 'data-count': n });
      seg.style.width = `${(100 * n) / total}%`; // CSSOM: allowed by the CSP
      bar.append(seg);
      title.push(`${fmtCount(n)} ${cls}`);
    }
    const done = (progress && progress.COMPLETED) || 0;
    const waiting = (progress && progress.WAITING) || 0;
    bar.title = title.length ? `${title.join(', ')} of ${fmtCount(total)}` : `${fmtCount(total)} tasks`;
    return h('div', { class: 'progress-wrap' }, bar,
      h('span', { class: 'progress-text', 'data-testid': 'plan-progress-text', text: `${fmtCount(done)}/${fmtCount(total)}` }),
      // Tasks waiting for an operator stand out: nothing moves until someone decides.
      waiting ? h('span', { class: 'progress-waiting', 'data-testid': 'plan-progress-waiting', 'data-count': waiting,
        title: `${fmtCount(waiting)} task(s) waiting for an operator`, text: `${fmtCount(waiting)} waiting` }) : null);
  }

  // STATUSES are the task statuses, in the API's display order.
  const STATUSES = ['PENDING', 'RUNNING', 'WAITING', 'PAUSED', 'COMPLETED', 'FAILED', 'CANCELLED', 'INTERRUPTED',
    'ROLLED_BACK', 'ROLLBACK_FAILED', 'SKIPPED'];

  // statusCounts lists the statuses that have tasks with their counts ("WAITING 100,000").
  // With onPick, each is a button that calls onPick(status) (the plan page filters on it).
  function statusCounts(counts, { testid = 'status-counts', onPick = null } = {}) {
    const box = h('div', { class: 'status-counts', 'data-testid': testid });
    const keys = [...STATUSES, ...Object.keys(counts || {}).filter((k) => k !== 'total' && !STATUSES.includes(k))];
    for (const st of keys) {
      const n = (counts && counts[st]) || 0;
      if (!n) continue;
      const attrs = {
        class: 'count-chip', 'data-testid': 'status-count', 'data-status': st, 'data-count': n,
        title: onPick ? `List the ${st} tasks` : `${n} ${st}`,
      };
      const body = [h('span', { class: 'badge', 'data-status': st, text: st }), ' ', h('b', { class: 'num', text: fmtCount(n) })];
      box.append(onPick ? h('button', { ...attrs, type: 'button', onclick: () => onPick(st) }, body) : h('span', attrs, body));
    }
    if (!box.children.length) box.append(h('span', { class: 'muted small', text: 'no tasks' }));
    return box;
  }

  // labelChips shows a plan's labels as key=value chips.
  function labelChips(labels) {
    return Object.entries(labels || {}).sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => h('span', { class: 'label', 'data-testid': 'plan-label', 'data-key': k, text: `${k}=${v}` }));
  }

  // ---------------------------------------------------------------- plan phase and schedule

  // GATED_PHASES are the canary phases an operator can approve or reject.
  const GATED_PHASES = new Set(['CANARY', 'AWAITING_APPROVAL']);

  function phaseBadge(phase, testid) {
    return h('span', { class: 'badge phase', 'data-phase': phase, 'data-testid': testid, title: 'canary phase', text: phase });
  }

  // planStatusExtra is what goes with a plan's status in the list: its canary phase, and
  // when a scheduled plan starts.
  function planStatusExtra(p) {
    const phase = p.canary && p.canary.phase;
    return [
      phase && phase !== 'PROMOTED' ? [' ', phaseBadge(phase, 'plan-row-phase')] : null,
      p.status === 'SCHEDULED' && p.startAt
        ? h('div', { class: 'small muted', 'data-testid': 'plan-row-start-at', title: p.startAt }, `starts ${fmtTime(p.startAt)}`)
        : null,
      p.outcome === 'done_with_exceptions' ? h('div', { class: 'small muted', 'data-testid': 'plan-row-outcome' }, exceptionsText(p.progress)) : null,
    ];
  }

  // exceptionsText says which tenants a plan that completed "with exceptions" left out.
  function exceptionsText(progress) {
    const parts = [];
    for (const [key, word] of [['CANCELLED', 'cancelled'], ['SKIPPED', 'skipped']]) {
      const n = (progress && progress[key]) || 0;
      if (n) parts.push(`${fmtCount(n)} ${word}`);
    }
    return `with exceptions: ${parts.join(', ')}`;
  }

  // ---------------------------------------------------------------- waiting tasks

  // waitingItem shows a task WAITING at a gate (reason, stage, message, how long) with its
  // Approve and Reject buttons. Reject asks for a comment inline first. onDecided gets the
  // task as the API returns it after the decision. tag is the element holding it (an li in
  // a list, a div in a table cell).
  function waitingItem(t, onDecided, { showTenant = true, tag = 'li' } = {}) {
    const w = t.wait || {};
    const tenant = t.tenantId;
    const decide = async (op, comment) => {
      const body = comment ? { body: JSON.stringify({ comment }) } : {};
      return (await api('POST', `/v1/tenants/${enc(tenant)}/${op}`, body)).data;
    };
    const buttons = [];
    const busy = (on) => buttons.forEach((b) => { b.disabled = on; });

    const approve = h('button', {
      type: 'button', class: 'primary', 'data-testid': 'approve-task', 'data-tenant': tenant, text: 'Approve',
      onclick: () => confirmed(`Approve stage ${w.stage || '?'} of tenant ${tenant}? Its task goes on.`, async () => {
        busy(true);
        try { onDecided(await decide('approve')); } finally { busy(false); }
      }),
    });
    const comment = h('input', {
      type: 'text', class: 'reject-comment', 'data-testid': 'reject-comment', 'data-tenant': tenant, maxlength: 1000,
      placeholder: 'why? (recorded as the task\'s error)', 'aria-label': `comment on rejecting tenant ${tenant}`,
    });
    const confirmReject = h('button', { type: 'submit', class: 'danger', 'data-testid': 'reject-confirm', 'data-tenant': tenant, text: 'Reject' });
    const cancelReject = h('button', { type: 'button', 'data-testid': 'reject-cancel', 'data-tenant': tenant, text: 'Keep waiting' });
    const form = h('form', { class: 'reject-form', 'data-testid': 'reject-form', 'data-tenant': tenant, hidden: true },
      comment, confirmReject, cancelReject);
    const reject = h('button', {
      type: 'button', class: 'danger', 'data-testid': 'reject-task', 'data-tenant': tenant, text: 'Reject…',
      onclick: () => { form.hidden = false; reject.hidden = true; comment.focus(); },
    });
    cancelReject.addEventListener('click', () => { form.hidden = true; reject.hidden = false; });
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clearError();
      busy(true);
      try {
        onDecided(await decide('reject', comment.value.trim()));
      } catch (e) { showError(e); } finally { busy(false); }
    });
    buttons.push(approve, reject, confirmReject, cancelReject);

    return h(tag, { class: 'waiting-item', 'data-testid': 'waiting-task', 'data-tenant': tenant, 'data-task-id': t.taskId },
      h('div', { class: 'waiting-line' },
        showTenant ? h('a', { href: `#/tenants/${enc(tenant)}`, class: 'mono', 'data-testid': 'waiting-tenant', text: tenant }) : null,
        statusBadge('WAITING'),
        h('span', {}, 'at stage ', h('b', { 'data-testid': 'wait-stage', text: `${w.stageIndex}: ${w.stage || '?'}` })),
        h('span', { class: 'muted' }, 'for ', h('span', { 'data-testid': 'wait-reason', text: w.reason || '?' })),
        h('span', { class: 'muted' }, 'waiting ', ageEl(w.since, { 'data-testid': 'wait-age' })),
        h('span', { class: 'actions' }, approve, reject, form)),
      w.message ? h('div', { class: 'wait-message', 'data-testid': 'wait-message', text: w.message }) : null);
  }

  // decisionText describes an operator's decision on a gate.
  function decisionText(d) {
    return `${d.approved ? 'approved' : 'rejected'} stage ${d.stageIndex}: ${d.stage} (run ${d.run}) at ${fmtTime(d.decidedAt)}` +
      (d.comment ? `: “${d.comment}”` : '');
  }

  // ---------------------------------------------------------------- plans list

  async function plansView(main, _, alive) {
    const tbody = h('tbody', { id: 'plans-body' });
    const more = h('button', { type: 'button', id: 'plans-more', 'data-testid': 'plans-more', hidden: true, text: 'Older plans' });
    main.append(
      h('div', { class: 'toolbar' },
        h('h1', { text: 'Plans' }),
        h('button', { type: 'button', id: 'plans-refresh', 'data-testid': 'plans-refresh', onclick: () => load(), text: 'Refresh' }),
        h('a', { class: 'button primary', href: '#/submit', id: 'plans-new', 'data-testid': 'plans-new', text: 'New plan' })),
      h('table', { id: 'plans-table', 'data-testid': 'plans-table', class: 'grid' },
        h('thead', {}, h('tr', {}, ['Name', 'Plan id', 'Labels', 'Status', 'Progress', 'Created'].map((t) => h('th', { text: t })))),
        tbody),
      more);

    let shown = 0; // how many plans the list holds: a refresh reloads that many
    let shownSig = ''; // the page last shown
    let cursor = '';

    function row(p) {
      const href = `#/plans/${enc(p.planId)}`;
      const tr = h('tr', { 'data-testid': 'plan-row', 'data-plan-id': p.planId, 'data-status': p.status, class: 'clickable' },
        h('td', {}, h('a', { href, 'data-testid': 'plan-link', text: p.name || '(unnamed)' })),
        h('td', { class: 'mono', text: p.planId }),
        h('td', { 'data-testid': 'plan-labels' }, labelChips(p.labels)),
        h('td', {}, statusBadge(p.status, 'plan-status'), planStatusExtra(p)),
        h('td', {}, progressBar(p.progress), statusCounts(p.progress, { testid: 'plan-counts' })),
        h('td', { title: p.createdAt, text: fmtTime(p.createdAt) }));
      tr.addEventListener('click', (ev) => { if (!ev.target.closest('a')) location.hash = href; });
      return tr;
    }

    async function fetchPage(limit, after) {
      const q = new URLSearchParams({ limit: String(limit) });
      if (after) q.set('cursor', after);
      return (await api('GET', `/v1/plans?${q}`)).data;
    }

    async function load() {
      try {
        const page = await fetchPage(Math.min(Math.max(shown, 50), 1000));
        if (!alive()) return;
        // Unchanged (the stream replays the events it keeps when it opens): the rows stay,
        // and no link is swapped under a click.
        const sig = JSON.stringify(page);
        if (sig === shownSig) return;
        shownSig = sig;
        tbody.replaceChildren(...page.plans.map(row));
        if (!page.plans.length) tbody.append(h('tr', {}, h('td', { colspan: 6, class: 'muted', 'data-testid': 'plans-empty', text: 'No plans yet.' })));
        shown = page.plans.length;
        cursor = page.nextCursor || '';
        more.hidden = !cursor;
      } catch (e) { if (alive()) showError(e); }
    }

    more.addEventListener('click', async () => {
      try {
        const page = await fetchPage(50, cursor);
        if (!alive()) return;
        shownSig = '';
        tbody.append(...page.plans.map(row));
        shown += page.plans.length;
        cursor = page.nextCursor || '';
        more.hidden = !cursor;
      } catch (e) { showError(e); }
    });

    const soon = debounce(load, 250);
    // Task progress: at most once a second, even while a big rollout's events never stop.
    const later = throttle(load, 1000);
    await watch('/v1/events', { plan: soon, gap: soon, task: later, stage: later, undo: later });
    if (alive()) await load();
  }

  // ---------------------------------------------------------------- stage cells

  // cellState is one stage's state for a task: its status, currentStage (the next stage to
  // run) and whether its current stage's last attempt of this run failed (retrying). A task
  // rolling back undoes its stages newest first: currentStage counts those still applied, the
  // newest of them is the one being undone (or whose undo failed), the others are undone.
  function cellState(t, i) {
    if (t.rollingBack) {
      if (i >= t.currentStage) return 'undone';
      if (i < t.currentStage - 1) return 'done';
      if (t.status === 'RUNNING') return t.retrying ? 'retrying' : 'undoing';
      return t.status === 'ROLLBACK_FAILED' ? 'failed' : 'done';
    }
    if (i < t.currentStage) return 'done';
    if (i > t.currentStage) return 'pending';
    switch (t.status) {
      case 'RUNNING': return t.retrying ? 'retrying' : 'running';
      case 'WAITING': return 'waiting'; // at a gate, for an operator
      case 'FAILED': case 'INTERRUPTED': return 'failed';
      case 'COMPLETED': return 'done';
      default: return 'pending'; // PENDING, PAUSED, CANCELLED: the stage has not run
    }
  }

  // rowFromTask is the part of a Task the matrix shows.
  function rowFromTask(t) {
    let retrying = false;
    if (t.status === 'RUNNING' && Array.isArray(t.attempts)) {
      // The stage running: the current one, or, rolling back, the newest still applied.
      const at = t.rollingBack ? t.currentStage - 1 : t.currentStage;
      const mine = t.attempts.filter((a) => a.stageIndex === at && a.run === t.attempt && !!a.undo === !!t.rollingBack);
      retrying = mine.length > 0 && mine[mine.length - 1].outcome === 'failed';
    }
    return {
      taskId: t.taskId, tenantId: t.tenantId, status: t.status, attempt: t.attempt,
      currentStage: t.currentStage, rollingBack: !!t.rollingBack, retrying, updatedAt: t.updatedAt,
      lastError: t.lastError ? `${t.lastError.stage || ''} #${t.lastError.attempt || ''} ${t.lastError.class}: ${t.lastError.message}` : '',
    };
  }

  function stageCells(row, stages) {
    return stages.map((s, i) => h('td', {
      class: 'cell', 'data-testid': 'cell', 'data-tenant': row.tenantId, 'data-stage': s.name,
      'data-stage-index': i, 'data-state': cellState(row, i), title: `${s.name} (${s.kind})`,
    }));
  }

  function paintCells(cells, row, stages) {
    cells.forEach((td, i) => {
      const state = cellState(row, i);
      td.dataset.state = state;
      td.title = `${stages[i].name} (${stages[i].kind}): ${state}` +
        ((state === 'failed' || state === 'retrying') && row.lastError ? `\n${row.lastError}` : '');
    });
  }

  function stageName(stages, i) {
    return i >= stages.length ? '(all stages done)' : `${i}: ${stages[i].name}`;
  }

  // rollbackText says how far a task rolling back (t.rollingBack) is; '' for one that is not.
  function rollbackText(t) {
    if (!t.rollingBack) return '';
    const applied = `${t.currentStage} of ${(t.stages || []).length} stage(s) still applied`;
    switch (t.status) {
      case 'ROLLED_BACK': return 'rolled back: every stage it completed is undone (Retry runs it forward again)';
      case 'ROLLBACK_FAILED': return `rolling back stopped at a failed undo, ${applied} (Roll back tries it again and goes on)`;
      case 'PENDING': case 'RUNNING': case 'WAITING': return `rolling back: ${applied}, undone newest first`;
      default: return `rolling back, ${t.status}: ${applied}`;
    }
  }

  // ---------------------------------------------------------------- tenant view

  async function tenantView(main, tenantId, alive) {
    $('#tenant-search').value = tenantId;
    const box = h('section', { id: 'tenant', 'data-testid': 'tenant', 'data-tenant': tenantId });
    main.append(box);
    let ttlTimer = 0;
    let lockTimer = 0;
    onLeave(() => { clearInterval(ttlTimer); clearInterval(lockTimer); });
    let shownSig = ''; // what the view last showed
    // What the last unlock did; kept across renders.
    const unlockNote = h('p', { id: 'tenant-unlock-result', 'data-testid': 'tenant-unlock-result', class: 'note', hidden: true });

    function button(id, label, msg, fn, cls = '') {
      return h('button', { type: 'button', id, 'data-testid': id, class: cls, text: label, onclick: () => confirmed(msg, async () => { await fn(); await load(); }) });
    }
    const post = (op, body) => api('POST', `/v1/tenants/${enc(tenantId)}/${op}`, body === undefined ? {} : { body: JSON.stringify(body) });

    async function load() {
      let task;
      let cp = null;
      let lock = null;
      let rules;
      try {
        const [t, c, l, r] = await Promise.all([
          api('GET', `/v1/tenants/${enc(tenantId)}/task`),
          api('GET', `/v1/tenants/${enc(tenantId)}/checkpoint`).catch((e) => { if (e.status === 404) return null; throw e; }),
          // The lock is shown with the task; failing to read it does not hide the task.
          api('GET', `/v1/tenants/${enc(tenantId)}/lock`).then((r) => r.data, (e) => ({ error: e })),
          taskRules(),
        ]);
        task = t.data;
        rules = r[task.status] || {};
        cp = c && c.data;
        lock = l;
      } catch (e) {
        if (!alive()) return;
        shownSig = '';
        box.replaceChildren(h('h1', {}, 'Tenant ', h('span', { class: 'mono', text: tenantId })),
          e.status === 404 ? h('p', { class: 'muted', 'data-testid': 'tenant-none', text: 'This tenant has no task.' }) : '');
        showError(e);
        return;
      }
      if (!alive()) return;
      // Unchanged (the stream replays the events it keeps when it opens): the view stays as
      // it is, and no button is swapped under a click.
      const sig = JSON.stringify([task, cp, lock && !lock.error ? lock : null]);
      if (sig === shownSig && !(lock && lock.error)) return;
      shownSig = sig;
      render(task, cp, lock, rules);
    }

    // waitSection shows the task's gate while it is WAITING; the same element is kept across
    // reloads, so that a comment being typed survives them.
    let waitKey = '';
    let waitEl = null;
    function waitSection(t) {
      if (t.status !== 'WAITING' || !t.wait) { waitKey = ''; waitEl = null; return ''; } // '': replaceChildren takes no null
      const key = `${t.taskId}/${t.wait.since}`;
      if (key !== waitKey) {
        waitKey = key;
        waitEl = h('section', { id: 'tenant-wait', 'data-testid': 'tenant-wait', class: 'waiting' },
          h('ul', { class: 'waiting-list' }, waitingItem(t, () => load(), { showTenant: false })));
      }
      return waitEl;
    }

    // render shows the task t, its checkpoint cp and its tenant's lock; rules are what t's
    // status allows (taskRules).
    function render(t, cp, lock, rules) {
      const stages = t.stages || [];
      const row = rowFromTask(t);
      const lease = t.lease || { held: false, ttlMs: 0 };
      const leaseText = h('dd', { id: 'tenant-lease', 'data-testid': 'tenant-lease', 'data-held': lease.held ? 'true' : 'false' });
      clearInterval(ttlTimer);
      if (lease.held) {
        const until = Date.now() + (lease.ttlMs || 0);
        const paint = () => {
          leaseText.textContent = `held by ${lease.owner || '?'}` +
            (lease.ttlMs ? `, ${fmtMs(Math.max(0, until - Date.now()))} left` : ' (no expiry)');
        };
        paint();
        if (lease.ttlMs) ttlTimer = setInterval(paint, 500);
      } else {
        leaseText.textContent = 'not held';
      }

      const canRetry = !!rules.retryable;
      const ended = !!rules.terminal;
      const actions = [
        button('tenant-pause', 'Pause', `Pause tenant ${tenantId}?`, () => post('pause')),
        button('tenant-resume', 'Resume', `Resume tenant ${tenantId}?`, () => post('resume')),
        button('tenant-cancel', 'Cancel', `Cancel tenant ${tenantId}'s task?`, () => post('cancel'), 'danger'),
        button('retry-checkpoint', 'Retry from checkpoint', `Retry tenant ${tenantId} from its checkpoint?`, () => post('retry', { fromCheckpoint: true }), 'primary'),
        button('retry-start', 'Retry from start', `Retry tenant ${tenantId} from stage 0 (the checkpoint is forgotten)?`, () => post('retry', { fromCheckpoint: false })),
        button('tenant-rollback', 'Roll back', `Roll back tenant ${tenantId}'s task? A new run undoes the stages it completed, newest first.`, () => post('rollback'), 'danger'),
        button('tenant-skip', 'Skip', `Skip tenant ${tenantId}? Its task ends SKIPPED, not deployed; its plan completes without it.`, () => post('skip')),
        h('button', { type: 'button', id: 'tenant-refresh', 'data-testid': 'tenant-refresh', text: 'Refresh', onclick: () => load() }),
      ];
      actions[0].disabled = ended || t.status === 'PAUSED' || t.status === 'WAITING';
      actions[1].disabled = t.status !== 'PAUSED' && !t.pauseRequested;
      actions[2].disabled = !rules.cancellable;
      actions[3].disabled = !canRetry;
      actions[4].disabled = !canRetry;
      actions[5].disabled = !rules.undoable;
      actions[5].title = 'Undo the stages the task completed, newest first, with each stage\'s undo';
      actions[6].disabled = !rules.skippable;
      actions[6].title = 'Leave this tenant out of the rollout: no failure, the plan completes with exceptions';

      const err = t.lastError;
      box.dataset.status = t.status;
      box.replaceChildren(
        h('div', { class: 'toolbar' },
          h('h1', {}, 'Tenant ', h('span', { class: 'mono', id: 'tenant-id', 'data-testid': 'tenant-id', text: t.tenantId }), ' ',
            statusBadge(t.status, 'tenant-status')),
          h('div', { class: 'actions' }, actions)),
        waitSection(t),
        h('table', { class: 'grid matrix strip' }, h('tbody', {}, h('tr', { 'data-testid': 'task-row', 'data-tenant': t.tenantId },
          stageCells(row, stages).map((td, i) => { td.textContent = stages[i].name; return td; })))),
        h('dl', { class: 'facts' },
          h('dt', { text: 'Plan' }), h('dd', {}, h('a', { href: `#/plans/${enc(t.planId)}`, id: 'tenant-plan-link', 'data-testid': 'tenant-plan-link', class: 'mono', text: t.planId })),
          h('dt', { text: 'Task id' }), h('dd', { class: 'mono', id: 'tenant-task-id', 'data-testid': 'tenant-task-id', text: t.taskId }),
          h('dt', { text: 'Run (attempt)' }), h('dd', { id: 'tenant-attempt', 'data-testid': 'tenant-attempt', text: String(t.attempt) }),
          h('dt', { text: 'Current stage' }), h('dd', {
            id: 'tenant-stage', 'data-testid': 'tenant-stage',
            text: !t.rollingBack ? stageName(stages, t.currentStage)
              : t.currentStage > 0 ? `undo ${stageName(stages, t.currentStage - 1)}` : '(all undone)',
          }),
          t.rollingBack ? [h('dt', { text: 'Rollback' }), h('dd', { id: 'tenant-rollback-state', 'data-testid': 'tenant-rollback-state', 'data-status': t.status, text: rollbackText(t) })] : null,
          t.pauseRequested ? [h('dt', { text: 'Pause' }), h('dd', { id: 'tenant-pause-requested', text: 'requested: pauses at the next stage boundary' })] : null,
          t.decision ? [h('dt', { text: 'Decision' }), h('dd', {
            id: 'tenant-decision', 'data-testid': 'tenant-decision', 'data-approved': t.decision.approved ? 'true' : 'false',
            text: decisionText(t.decision),
          })] : null,
          h('dt', { text: 'Lease' }), leaseText,
          h('dt', { text: 'Updated' }), h('dd', { title: t.updatedAt, text: fmtTime(t.updatedAt) }),
          h('dt', { text: 'Last error' }), h('dd', { id: 'tenant-last-error', 'data-testid': 'tenant-last-error', class: err ? 'error-text' : 'muted' },
            err ? `${err.stage || '?'} attempt ${err.attempt || '?'}: ${err.class}${err.code ? ` (${err.code})` : ''}: ${err.message}` : 'none')),
        h('h2', { text: 'Lock' }),
        lockBox(lock),
        h('h2', { text: 'Checkpoint' }),
        checkpointBox(cp),
        h('h2', { text: 'Attempt ledger' }),
        ledger(t.attempts || []));
    }

    // lockBox shows the tenant's lock (its lease, with the fence epoch of its latest task)
    // and the Unlock button: a forced release that fences the holder.
    function lockBox(l) {
      clearInterval(lockTimer);
      if (!l || l.error) {
        const e = l && l.error;
        return h('div', { id: 'tenant-lock', 'data-testid': 'tenant-lock', 'data-held': 'unknown' },
          h('p', { class: 'error-text', text: `Could not read the lock: ${e ? e.message : 'no answer'}` }), unlockNote);
      }
      const ttl = h('dd', { id: 'tenant-lock-ttl', 'data-testid': 'tenant-lock-ttl' });
      if (l.held && l.ttlMs) {
        const until = Date.now() + l.ttlMs;
        const paint = () => { ttl.textContent = `${fmtMs(Math.max(0, until - Date.now()))} left`; };
        paint();
        lockTimer = setInterval(paint, 500);
      } else {
        ttl.textContent = l.held ? 'no expiry' : '—';
      }
      const unlock = h('button', {
        type: 'button', id: 'tenant-unlock', 'data-testid': 'tenant-unlock', class: 'danger', text: 'Unlock',
        title: 'Release the lock whoever holds it; the holder is fenced and its running task becomes INTERRUPTED',
        onclick: () => confirmed(`Force-unlock tenant ${tenantId}? The holder (${l.owner || 'unknown'}) is fenced: ` +
          'its running task becomes INTERRUPTED and can be retried.', async () => {
          const u = (await api('POST', `/v1/tenants/${enc(tenantId)}/unlock`)).data;
          unlockNote.dataset.released = u.released ? 'true' : 'false';
          unlockNote.textContent = u.released
            ? `Released the lock held by ${u.previousOwner || 'unknown'} (epoch now ${u.epoch})` +
              (u.interrupted ? `; task ${u.taskId} was interrupted.` : '.')
            : `The lock was not held: nothing to release (epoch ${u.epoch}).`;
          unlockNote.hidden = false;
          await load();
        }),
      });
      unlock.disabled = !l.held;
      return h('div', { id: 'tenant-lock', 'data-testid': 'tenant-lock', 'data-held': l.held ? 'true' : 'false' },
        h('dl', { class: 'facts' },
          h('dt', { text: 'Held' }), h('dd', { id: 'tenant-lock-held', 'data-testid': 'tenant-lock-held', text: l.held ? 'yes' : 'no' }),
          h('dt', { text: 'Owner' }), h('dd', { class: 'mono', id: 'tenant-lock-owner', 'data-testid': 'tenant-lock-owner', text: l.owner || '—' }),
          h('dt', { text: 'TTL' }), ttl,
          h('dt', { text: 'Fence epoch' }), h('dd', { id: 'tenant-lock-epoch', 'data-testid': 'tenant-lock-epoch', text: String(l.epoch ?? '—') })),
        h('div', { class: 'actions' }, unlock),
        unlockNote);
    }

    function checkpointBox(cp) {
      if (!cp) return h('p', { id: 'tenant-checkpoint', 'data-testid': 'tenant-checkpoint', 'data-present': 'false', class: 'muted', text: 'No checkpoint: no stage completed yet.' });
      const data = cp.contextData || {};
      return h('div', { id: 'tenant-checkpoint', 'data-testid': 'tenant-checkpoint', 'data-present': 'true' },
        h('p', {}, `Completed ${cp.completedStages.length} stage(s) up to index ${cp.lastCompletedStageIndex}, saved ${fmtTime(cp.savedAt)}, fence ${cp.fence}.`),
        h('table', { class: 'grid' },
          h('thead', {}, h('tr', {}, h('th', { text: 'Stage' }), h('th', { text: 'Output' }))),
          h('tbody', {}, cp.completedStages.map((s) => h('tr', { 'data-testid': 'checkpoint-stage', 'data-stage': s },
            h('td', { text: s }), h('td', {}, h('pre', { class: 'json', text: JSON.stringify(data[s] === undefined ? null : data[s], null, 2) })))))));
    }

    // ledger is the attempt ledger: a row per attempt, followed, when the attempt printed
    // anything (an exec stage's stdout and stderr tails), by a row with one <pre> per stream.
    function ledger(attempts) {
      if (!attempts.length) return h('p', { id: 'attempts', 'data-testid': 'attempts', class: 'muted', text: 'No attempt yet.' });
      const columns = ['Run', 'Stage', 'Attempt', 'Outcome', 'Class', 'Error', 'Started', 'Took', 'Backoff'];
      return h('table', { id: 'attempts', 'data-testid': 'attempts', class: 'grid' },
        h('thead', {}, h('tr', {}, columns.map((x) => h('th', { text: x })))),
        h('tbody', {}, attempts.map((a) => [attemptRow(a), attemptOutput(a, columns.length)])));
    }

    // attemptOutput is the row under an attempt's with what it printed; null when nothing.
    function attemptOutput(a, span) {
      if (!a.stdout && !a.stderr) return null;
      const stream = (name, text) => text ? h('div', { class: 'attempt-stream' },
        h('span', { class: 'muted', text: name }),
        h('pre', { class: 'output', 'data-testid': `attempt-${name}`, text })) : null;
      return h('tr', { class: 'attempt-output', 'data-testid': 'attempt-output', 'data-stage': a.stage, 'data-run': a.run, 'data-attempt': a.attempt, 'data-undo': a.undo ? 'true' : 'false' },
        h('td', { colspan: span }, stream('stdout', a.stdout), stream('stderr', a.stderr)));
    }

    // attemptRow is an attempt's row of the ledger; an attempt of a stage's undo (a
    // rollback's) is marked undo:<stage>.
    function attemptRow(a) {
      const took = Date.parse(a.endedAt) - Date.parse(a.startedAt);
      return h('tr', { 'data-testid': 'attempt-row', 'data-outcome': a.outcome, 'data-stage': a.stage, 'data-undo': a.undo ? 'true' : 'false', class: a.undo ? 'undo' : null },
        h('td', { class: 'num', text: a.run }),
        h('td', {}, `${a.stageIndex}: `, a.undo ? h('span', { class: 'undo-mark', 'data-testid': 'attempt-undo', title: 'an attempt of the stage\'s undo (a rollback)', text: 'undo:' }) : null, a.stage),
        h('td', { class: 'num', text: a.attempt }),
        h('td', {}, h('span', { class: 'outcome', 'data-outcome': a.outcome, text: a.outcome })),
        h('td', { text: a.class || '' }),
        h('td', { class: 'error-text', text: (a.code ? `(${a.code}) ` : '') + (a.error || '') }),
        h('td', { title: a.startedAt, text: fmtTime(a.startedAt) }),
        h('td', { class: 'num', text: Number.isFinite(took) ? fmtMs(took) : '' }),
        h('td', { class: 'num', text: a.backoffMs ? fmtMs(a.backoffMs) : '' }));
    }

    const reload = debounce(load, 250);
    await watch(`/v1/events?tenant=${enc(tenantId)}`, { task: reload, stage: reload, undo: reload, gap: reload });
    if (alive()) await load();
  }

  // ---------------------------------------------------------------- submit

  const EXAMPLE = `name: hello
maxConcurrency: 2
stages:
  - name: validate
    kind: noop
  - name: bake
    kind: sleep
    params: {duration: 2s}
tenants:
  - id: tenant-a
    params: {version: "1.2.3"}
  - id: tenant-b
    params: {version: "1.2.3"}
`;

  function newKey() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return 'console-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  }

  async function submitView(main) {
    const text = h('textarea', {
      id: 'submit-yaml', 'data-testid': 'submit-yaml', rows: 22, spellcheck: 'false',
      placeholder: 'Plan in YAML or JSON (see docs/api.md)…',
    });
    const format = h('select', { id: 'submit-format', 'data-testid': 'submit-format' },
      h('option', { value: 'auto', text: 'auto-detect' }), h('option', { value: 'yaml', text: 'YAML' }), h('option', { value: 'json', text: 'JSON' }));
    const result = h('div', { id: 'submit-result', 'data-testid': 'submit-result' });
    // One Idempotency-Key per body: a double click or a resent request does not start the
    // rollout twice; editing the body makes a new key.
    let key = newKey();
    text.addEventListener('input', () => { key = newKey(); });

    function contentType() {
      let f = format.value;
      if (f === 'auto') f = /^\s*[{[]/.test(text.value) ? 'json' : 'yaml';
      return f === 'json' ? 'application/json' : 'application/yaml';
    }

    async function send(dryRun) {
      clearError();
      result.replaceChildren();
      if (!text.value.trim()) {
        result.append(problemBox({ title: 'Empty plan', detail: 'Write or paste a plan first.' }, 'submit-errors'));
        return;
      }
      const buttons = [dry, submit];
      buttons.forEach((b) => { b.disabled = true; });
      try {
        const res = await api('POST', `/v1/plans${dryRun ? '?dryRun=true' : ''}`, {
          body: text.value, contentType: contentType(), headers: dryRun ? {} : { 'Idempotency-Key': key },
        });
        if (dryRun) {
          result.append(dryRunBox(res.data));
        } else {
          location.hash = `#/plans/${enc(res.data.planId)}`;
        }
      } catch (e) {
        result.append(problemBox(e.problem || { title: 'Error', detail: String(e.message || e) }, 'submit-errors'));
        showError(e);
      } finally {
        buttons.forEach((b) => { b.disabled = false; });
      }
    }

    const dry = h('button', { type: 'button', id: 'dry-run', 'data-testid': 'dry-run', text: 'Dry run', onclick: () => send(true) });
    const submit = h('button', { type: 'button', id: 'submit', 'data-testid': 'submit', class: 'primary', text: 'Submit', onclick: () => send(false) });
    main.append(
      h('div', { class: 'toolbar' }, h('h1', { text: 'Submit a plan' })),
      h('label', { for: 'submit-yaml', class: 'sr-only', text: 'Plan' }),
      text,
      h('div', { class: 'actions' },
        h('label', { for: 'submit-format', text: 'Format ' }), format,
        h('button', { type: 'button', id: 'submit-example', 'data-testid': 'submit-example', text: 'Insert example', onclick: () => { text.value = EXAMPLE; key = newKey(); } }),
        dry, submit),
      result);
  }

  function dryRunBox(d) {
    const conflicts = d.conflicts || [];
    return h('div', { id: 'dry-run-result', 'data-testid': 'dry-run-result' },
      h('h2', { text: 'Dry run: nothing was created' }),
      h('p', { id: 'dry-run-summary', 'data-testid': 'dry-run-summary', 'data-tenants': d.summary ? d.summary.tenants : 0, class: 'small muted',
        text: `${d.summary ? d.summary.tenants : 0} tenants rendered and checked; showing ${(d.tenants || []).length ? `${d.page.offset + 1}–${d.page.offset + d.tenants.length}` : 'none'} (the API's ?previewOffset= and ?previewLimit= page through the rest).` }),
      h('p', { id: 'dry-run-conflicts', 'data-testid': 'dry-run-conflicts', 'data-count': conflicts.length, class: conflicts.length ? 'error-text' : '' },
        conflicts.length ? ['Would conflict (their latest task has not ended): ',
          conflicts.map((t, i) => [i ? ', ' : '', h('a', { href: `#/tenants/${enc(t)}`, text: t })])] : 'No conflicts.'),
      h('table', { class: 'grid' },
        h('thead', {}, h('tr', {}, h('th', { text: 'Tenant' }), h('th', { text: 'Rendered stages' }))),
        h('tbody', {}, (d.tenants || []).map((t) => h('tr', { 'data-testid': 'dry-run-tenant', 'data-tenant': t.tenantId },
          h('td', { class: 'mono', text: t.tenantId }),
          h('td', {}, h('ol', { start: 0 }, t.stages.map((s) => h('li', {},
            h('b', { text: s.name }), ` (${s.kind})`,
            s.params ? h('pre', { class: 'json', text: JSON.stringify(s.params, null, 2) }) : null)))))))));
  }

  // ---------------------------------------------------------------- executors

  // showExecutorName puts the serving executor's name (GET /healthz) in the header.
  async function showExecutorName() {
    try {
      const name = (await api('GET', '/healthz')).data.executor;
      if (!name) return;
      const el = $('#executor-name');
      el.textContent = `executor: ${name}`;
      el.dataset.name = name;
      el.hidden = false;
    } catch { /* the header goes without it */ }
  }

  // executorsView lists the executors sharing this one's store (GET /v1/executors), alive
  // or not, re-read every 5 s.
  async function executorsView(main, _, alive) {
    const tbody = h('tbody', { id: 'executors-body' });
    main.append(
      h('div', { class: 'toolbar' },
        h('h1', { text: 'Executors' }),
        h('button', { type: 'button', id: 'executors-refresh', 'data-testid': 'executors-refresh', onclick: () => load(), text: 'Refresh' })),
      h('p', { class: 'small muted', text: 'The executors sharing this one\'s Redis. An executor is alive while it refreshes its liveness key (every lease TTL/3); a clean stop removes it; one that died shows as not alive for an hour.' }),
      h('table', { id: 'executors-table', 'data-testid': 'executors-table', class: 'grid' },
        h('thead', {}, h('tr', {}, ['Name', 'Address', 'Alive', 'Runs', 'Started', 'Last heartbeat', 'Kinds'].map((t) => h('th', { text: t })))),
        tbody));

    function row(e) {
      return h('tr', { 'data-testid': 'executor-row', 'data-name': e.name, 'data-alive': String(e.alive), 'data-self': String(e.self) },
        h('td', { class: 'mono' }, e.name, e.self ? h('span', { class: 'small muted', text: ' (this one)' }) : null),
        h('td', { class: 'mono', text: e.address || '—' }),
        h('td', {}, statusBadge(e.alive ? 'ALIVE' : 'GONE', 'executor-alive')),
        h('td', { class: 'num', text: String(e.runs) }),
        h('td', { title: e.startedAt, text: fmtTime(e.startedAt) }),
        h('td', {}, e.lastHeartbeat ? [ageEl(e.lastHeartbeat), ' ago'] : '—'),
        h('td', { class: 'small mono', 'data-testid': 'executor-kinds', text: (e.kinds || []).join(', ') || '—' }));
    }

    async function load() {
      try {
        const list = (await api('GET', '/v1/executors')).data.executors || [];
        if (!alive()) return;
        tbody.replaceChildren(...list.map(row));
        if (!list.length) tbody.append(h('tr', {}, h('td', { colspan: 7, class: 'muted', text: 'No executors registered.' })));
      } catch (e) { if (alive()) showError(e); }
    }

    const timer = setInterval(load, 5000);
    onLeave(() => clearInterval(timer));
    await load();
  }

  // ---------------------------------------------------------------- start

  Object.assign(views, { plans: plansView, tenant: tenantView, submit: submitView, executors: executorsView });

  // What the other scripts of the console (plan.js: the plan page) use. They run after this
  // one (deferred scripts run in order) and before DOMContentLoaded, when the first view is
  // routed.
  window.executorConsole = Object.freeze({
    $, h, enc, api, showError, clearError, problemBox, confirmed, onLeave, watch, debounce, throttle,
    fmtTime, fmtMs, fmtSpan, fmtCount, timeKey, ageEl, statusBadge, statusCounts, labelChips, progressBar,
    phaseBadge, planStatusExtra, waitingItem, decisionText, rowFromTask, stageCells, paintCells, stageName,
    STATUSES, TERMINAL_PLAN, GATED_PHASES, taskRules,
    // registerView adds a view: render(main, id, alive, query) for the route #/<name>/<id>.
    registerView(name, render) { views[name] = render; },
  });

  document.addEventListener('DOMContentLoaded', () => {
    $('#banner-close').addEventListener('click', clearError);
    setInterval(tickAges, 1000);
    $('#logout').addEventListener('click', logout);
    $('#tenant-search-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const id = $('#tenant-search').value.trim();
      if (!id) return;
      const target = `#/tenants/${enc(id)}`;
      if (location.hash === target) route(); else location.hash = target;
    });
    window.addEventListener('hashchange', route);
    route();
    showExecutorName();
  });
})();
