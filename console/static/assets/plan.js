// executor console: the plan page (#/plans/<planId>), built for plans of 100,000 tenants.
//
// It never downloads the plan's tasks. It opens on the plan's summary (GET
// /v1/plans/{id}/summary: the tasks counted by status, by current stage and status, by failure
// class, the gates with WAITING tasks, the slowest RUNNING tasks; a few kilobytes whatever the
// plan's size) and lists one page of tenants at a time (GET
// /v1/plans/{id}/tasks?limit=100&cursor=…, filtered by status, stage, failure class and tenant
// prefix). The plan's events (GET /v1/events?plan=<id>) re-read only those two, at most once a
// second. Bulk actions act on the list's filter (POST
// /v1/plans/{id}/tasks/approve|reject|retry|cancel), each confirmed with its count first.
'use strict';

(() => {
  const {
    $, h, enc, api, showError, clearError, confirmed, onLeave, watch, debounce, throttle,
    fmtTime, fmtSpan, fmtCount, ageEl, statusBadge, statusCounts, labelChips, progressBar,
    phaseBadge, waitingItem, decisionText, rowFromTask, stageCells, paintCells, stageName,
    STATUSES, TERMINAL_PLAN, GATED_PHASES, taskRules,
  } = window.executorConsole;

  const PAGE_SIZE = 100; // tenants per page: the list never holds more rows than that
  const REFRESH_MS = 1000; // events re-read the summary and the page at most this often
  const SKIPPED_SHOWN = 100; // skipped tasks listed under a bulk action's result
  // ALL_STAGES_DONE names the tasks past the last stage (the matrix's last row, the stage
  // filter's last option): no stage name can read so.
  const ALL_STAGES_DONE = '(all stages done)';

  // ACTIONS are the bulk actions: the statuses each can change (docs/api.md), those it takes
  // when the filter names none, and the words of its confirmation and result. The statuses a
  // retry or a cancel can change are the executor's rules (applyRules), read before the page
  // shows.
  const ACTIONS = {
    approve: { can: ['WAITING'], verb: 'Approve', done: 'Approved' },
    reject: { can: ['WAITING'], verb: 'Reject', done: 'Rejected' },
    retry: { can: [], defaults: ['FAILED', 'INTERRUPTED'], verb: 'Retry', done: 'Retried' },
    cancel: { can: [], verb: 'Cancel', done: 'Cancelled' },
  };

  // applyRules sets the statuses a retry and a cancel can change from GET /v1/task-statuses.
  async function applyRules() {
    const rules = await taskRules();
    ACTIONS.retry.can = STATUSES.filter((s) => rules[s] && rules[s].retryable);
    ACTIONS.cancel.can = STATUSES.filter((s) => rules[s] && rules[s].cancellable);
  }


  // RING_LOOK gives each ring state the colour of a status badge (the state itself is the
  // badge's data-state): moving, waiting for an operator, stopped, settled.
  const RING_LOOK = {
    pending: 'PENDING', running: 'RUNNING', baking: 'RUNNING', checking: 'RUNNING',
    awaiting_approval: 'WAITING', halted: 'FAILED', rejected: 'CANCELLED', passed: 'COMPLETED',
  };
  const RING_SETTLED = new Set(['passed', 'rejected']); // a ring that moves no more

  const SORTS = [['order', 'plan order'], ['-order', 'plan order, reversed'], ['tenant', 'tenant id A→Z'], ['-tenant', 'tenant id Z→A']];

  // markFirstPaint marks, once per page load, when a plan page first showed its summary and
  // its first page of tenants: performance.getEntriesByName('executor:first-useful-paint').
  let firstPaintMarked = false;
  function markFirstPaint() {
    if (firstPaintMarked) return;
    firstPaintMarked = true;
    // The next animation frame's callback runs before that frame is painted; a task it
    // queues runs after.
    requestAnimationFrame(() => setTimeout(() => performance.mark('executor:first-useful-paint'), 0));
  }

  // filterFrom reads the list's filter from the page's address (#/plans/<id>?status=WAITING).
  function filterFrom(q) {
    const sort = q.get('sort') || 'order';
    return {
      status: (q.get('status') || '').toUpperCase(), stage: q.get('stage') || '', class: q.get('class') || '',
      tenant: q.get('tenant') || '', sort: SORTS.some(([v]) => v === sort) ? sort : 'order',
    };
  }

  const statusesOf = (f) => f.status.split(',').map((s) => s.trim()).filter(Boolean);

  // option is a select's option, selected when it is the current value.
  const option = (value, text, current) => h('option', { value, text, selected: value === current });

  // ------------------------------------------------------------ the Audit tab

  const AUDIT_PAGE = 100; // records per read of GET /v1/audit: "Load more" reads the next ones
  const AUDIT_MAX = 1000; // records the tab holds at most; past them, the CLI lists the rest

  // auditPairs is an audit record's request or outcome as key=value pairs sorted by key, the
  // comment (and any value with a space, a quote or an =) quoted.
  function auditPairs(m) {
    return Object.keys(m || {}).sort().map((k) => {
      const v = String(m[k]);
      return `${k}=${k === 'comment' || v === '' || /[\s"=]/.test(v) ? JSON.stringify(v) : v}`;
    }).join(' ');
  }

  // auditRow is one operator action: when, who (and the token's role), what, on which tenant,
  // what came of it (a refusal with its code) and the details. Text only: records hold
  // operators' comments.
  function auditRow(r) {
    const details = [auditPairs(r.request), r.outcome ? `→ ${auditPairs(r.outcome)}` : ''].filter(Boolean).join(' ');
    return h('tr', {
      'data-testid': 'audit-row', 'data-id': r.id, 'data-action': r.action, 'data-actor': r.actor, 'data-result': r.result,
    },
    h('td', { class: 'small', 'data-testid': 'audit-time', title: r.at, text: fmtTime(r.at) }),
    h('td', { 'data-testid': 'audit-actor' }, h('b', { text: r.actor }), r.role ? h('span', { class: 'muted', text: ` (${r.role})` }) : ''),
    h('td', { class: 'mono', 'data-testid': 'audit-action', text: r.action }),
    h('td', { 'data-testid': 'audit-tenant' }, r.tenant ? h('a', { href: `#/tenants/${enc(r.tenant)}`, class: 'mono', text: r.tenant }) : '—'),
    h('td', { class: 'audit-result', 'data-testid': 'audit-result', 'data-result': r.result, text: r.code ? `${r.result}: ${r.code}` : r.result }),
    h('td', { class: 'small audit-details', 'data-testid': 'audit-details', title: r.requestId ? `request ${r.requestId} on ${r.executor || '?'}` : null, text: details }));
  }

  // auditPanel is the plan page's Audit tab: the plan's operator actions (GET
  // /v1/audit?plan=<id>), newest first, AUDIT_PAGE at a time, "Load more" following nextCursor
  // up to AUDIT_MAX rows. load() reads the first page again.
  function auditPanel(planId, alive) {
    const tbody = h('tbody', { id: 'audit-body' });
    const table = h('table', { id: 'audit-table', 'data-testid': 'audit-table', class: 'grid audit' },
      h('thead', {}, h('tr', {}, ['Time', 'Actor', 'Action', 'Tenant', 'Result', 'Details'].map((t) => h('th', { text: t })))), tbody);
    const count = h('span', { class: 'muted small', id: 'audit-count', 'data-testid': 'audit-count' });
    const more = h('button', { type: 'button', id: 'audit-more', 'data-testid': 'audit-more', text: 'Load more', hidden: true });
    const reload = h('button', { type: 'button', id: 'audit-refresh', 'data-testid': 'audit-refresh', text: 'Refresh' });
    const capped = h('p', {
      class: 'small muted', 'data-testid': 'audit-capped', hidden: true,
      text: `The newest ${fmtCount(AUDIT_MAX)} actions are shown; executor audit --plan ${planId} --all lists every one.`,
    });
    const el = h('section', { id: 'plan-audit', 'data-testid': 'plan-audit', class: 'panel', role: 'tabpanel', 'aria-labelledby': 'tab-audit', hidden: true },
      h('h2', {}, 'Audit ', count),
      h('p', { class: 'small muted', text: 'Every operator action on this plan, newest first: who asked for it, what was asked, and what came of it.' }),
      h('div', { class: 'matrix-wrap' }, table),
      h('div', { class: 'actions' }, more, reload), capped);
    let next = ''; // the cursor of the page after the rows shown
    let seq = 0; // a read answered after a later one started is dropped

    async function read(cursor) {
      const s = ++seq;
      const q = new URLSearchParams({ plan: planId, limit: String(AUDIT_PAGE) });
      if (cursor) q.set('cursor', cursor);
      table.dataset.loading = 'true';
      more.disabled = true;
      try {
        const page = (await api('GET', `/v1/audit?${q}`)).data;
        if (!alive() || s !== seq) return;
        const rows = (page.records || []).map(auditRow);
        if (cursor) tbody.append(...rows);
        else tbody.replaceChildren(...rows);
        if (!tbody.children.length) tbody.append(h('tr', { 'data-testid': 'audit-empty' }, h('td', { colspan: 6, class: 'muted', text: 'No action recorded.' })));
        const n = tbody.querySelectorAll('[data-testid=audit-row]').length;
        next = page.nextCursor || '';
        const full = n >= AUDIT_MAX;
        more.hidden = !next || full;
        capped.hidden = !next || !full;
        count.textContent = `${fmtCount(n)} action(s)${next ? ' shown, older ones follow' : ''}`;
        table.dataset.rows = n;
        table.dataset.more = next ? 'true' : 'false';
      } catch (e) {
        if (alive() && s === seq) showError(e);
      } finally {
        if (s === seq) {
          delete table.dataset.loading;
          more.disabled = false;
        }
      }
    }
    more.addEventListener('click', () => { if (next) read(next); });
    reload.addEventListener('click', () => read(''));
    return { el, load: () => read('') };
  }

  async function planView(main, planId, alive, query) {
    let plan = null; // GET /v1/plans/{id} (without taskIds): the head
    let summary = null; // GET /v1/plans/{id}/summary: the counts
    let stages = [];
    const filter = filterFrom(query);
    let cursor = ''; // the cursor of the page shown ('' = the first page)
    const back = []; // the cursors of the pages before it, for "Previous"
    let nextCursor = '';
    let total = 0; // the tasks matching the filter, as the last page said
    // Answers are applied only when no later request of the same kind was sent meanwhile.
    let pageSeq = 0;
    let summarySeq = 0;
    let planSeq = 0; // plan events seen: a plan read sent before the latest one may be older

    // ------------------------------------------------------------ elements

    const head = h('section', { class: 'plan-head', id: 'plan-head', 'data-testid': 'plan-head' });
    const retryNote = h('div', { id: 'plan-retry-result', 'data-testid': 'plan-retry-result', class: 'note', hidden: true });
    let retryButton = null;
    let headSig = '';

    // The rollout's rings (a plan with waves, or a canary): drawn by renderRings.
    const ringsBox = h('section', { id: 'rings', 'data-testid': 'rings', class: 'panel', hidden: true });

    const summaryCounts = h('div', { id: 'summary-counts-box' });
    const stageMatrix = h('table', { id: 'stage-matrix', 'data-testid': 'stage-matrix', class: 'grid counts-matrix' });
    const summaryBox = h('section', { id: 'summary', 'data-testid': 'summary', class: 'panel' },
      h('h2', {}, 'Summary ', h('span', { class: 'muted small', id: 'summary-total', 'data-testid': 'summary-total' })),
      summaryCounts,
      h('div', { class: 'matrix-wrap' }, stageMatrix),
      h('p', { class: 'small muted', text: 'Tasks by current stage and status. Click a count, a stage or a status to list those tenants.' }));

    const gateList = h('ul', { class: 'gate-list', 'data-testid': 'gate-list' });
    const waitingCount = h('span', { class: 'count', id: 'waiting-count', 'data-testid': 'waiting-count' });
    const waitingBox = h('section', { id: 'waiting', 'data-testid': 'waiting', class: 'waiting', hidden: true },
      h('h2', {}, 'Waiting for an operator ', waitingCount), gateList,
      h('p', { class: 'small muted', text: 'List a gate\'s tasks to approve or reject them one by one, or all at once with "Approve all matching".' }));

    const failuresBody = h('tbody', {});
    const failuresBox = h('section', { id: 'failures', 'data-testid': 'failures', class: 'panel', hidden: true },
      h('h2', { text: 'Failure classes' }),
      h('table', { class: 'grid', id: 'failures-table' },
        h('thead', {}, h('tr', {}, ['Class', 'Tasks', 'Sample tenant', 'Sample message'].map((t) => h('th', { text: t })))),
        failuresBody));

    const slowBody = h('tbody', {});
    const slowBox = h('section', { id: 'slowest', 'data-testid': 'slowest', class: 'panel', hidden: true },
      h('h2', { text: 'Slowest running' }),
      h('table', { class: 'grid', id: 'slowest-table' },
        h('thead', {}, h('tr', {}, ['Tenant', 'Stage', 'At that stage for', 'Since'].map((t) => h('th', { text: t })))),
        slowBody));

    // The filter's controls.
    const fStatus = h('select', { id: 'filter-status', 'data-testid': 'filter-status', 'aria-label': 'status' });
    const fStage = h('select', { id: 'filter-stage', 'data-testid': 'filter-stage', 'aria-label': 'current stage' });
    const fClass = h('select', { id: 'filter-class', 'data-testid': 'filter-class', 'aria-label': 'failure class' });
    const fTenant = h('input', {
      type: 'search', id: 'filter-tenant', 'data-testid': 'filter-tenant', placeholder: 'tenant id prefix',
      spellcheck: 'false', autocomplete: 'off', 'aria-label': 'tenant id prefix', value: filter.tenant,
    });
    const fSort = h('select', { id: 'filter-sort', 'data-testid': 'filter-sort', 'aria-label': 'sort' },
      SORTS.map(([v, t]) => option(v, t, filter.sort)));
    const fClear = h('button', { type: 'button', id: 'filter-clear', 'data-testid': 'filter-clear', text: 'Clear filters' });
    const filters = h('form', { class: 'filters', id: 'filters', 'data-testid': 'filters', autocomplete: 'off' },
      h('label', {}, 'Status ', fStatus), h('label', {}, 'Stage ', fStage), h('label', {}, 'Class ', fClass),
      h('label', {}, 'Tenant ', fTenant), h('label', {}, 'Sort ', fSort), fClear);

    // Bulk actions on the filter.
    const bulkApprove = h('button', { type: 'button', id: 'bulk-approve', 'data-testid': 'bulk-approve', class: 'primary', text: 'Approve all matching' });
    const bulkReject = h('button', { type: 'button', id: 'bulk-reject', 'data-testid': 'bulk-reject', class: 'danger', text: 'Reject all matching…' });
    const rejectComment = h('input', {
      type: 'text', id: 'bulk-reject-comment', 'data-testid': 'bulk-reject-comment', class: 'reject-comment', maxlength: 1000,
      placeholder: 'why? (recorded with each decision)', 'aria-label': 'comment on rejecting every matching task',
    });
    const rejectConfirm = h('button', { type: 'submit', id: 'bulk-reject-confirm', 'data-testid': 'bulk-reject-confirm', class: 'danger', text: 'Reject all matching' });
    const rejectCancel = h('button', { type: 'button', id: 'bulk-reject-cancel', 'data-testid': 'bulk-reject-cancel', text: 'Keep waiting' });
    const rejectForm = h('form', { class: 'reject-form', id: 'bulk-reject-form', 'data-testid': 'bulk-reject-form', hidden: true },
      rejectComment, rejectConfirm, rejectCancel);
    const bulkRetry = h('button', { type: 'button', id: 'bulk-retry', 'data-testid': 'bulk-retry', text: 'Retry matching' });
    const bulkCancel = h('button', { type: 'button', id: 'bulk-cancel', 'data-testid': 'bulk-cancel', class: 'danger', text: 'Cancel matching' });
    const bulkHint = h('span', { class: 'small muted', id: 'bulk-hint' });
    const bulkBar = h('div', { class: 'actions bulk', id: 'bulk-actions', 'data-testid': 'bulk-actions' },
      bulkApprove, bulkReject, rejectForm, bulkRetry, bulkCancel, bulkHint);
    const bulkNote = h('div', { id: 'bulk-result', 'data-testid': 'bulk-result', class: 'note', hidden: true });

    // The page of tenants.
    const tasksTotal = h('span', { class: 'muted small', id: 'tasks-total', 'data-testid': 'tasks-total' });
    const thead = h('thead', {});
    const tbody = h('tbody', { id: 'tasks-body' });
    const tasksTable = h('table', { id: 'tasks', 'data-testid': 'tasks', class: 'grid matrix tasks' }, thead, tbody);
    const prev = h('button', { type: 'button', id: 'page-prev', 'data-testid': 'page-prev', text: '← Previous', disabled: true });
    const next = h('button', { type: 'button', id: 'page-next', 'data-testid': 'page-next', text: 'Next →', disabled: true });
    const pageInfo = h('span', { class: 'muted small', id: 'page-info', 'data-testid': 'page-info' });
    const pager = h('div', { class: 'actions pager', id: 'pager', 'data-testid': 'pager' }, prev, pageInfo, next);

    // The tabs: Overview (the summary and the tenants) and Audit (the plan's operator actions).
    const overview = h('div', { id: 'plan-overview', 'data-testid': 'plan-overview', role: 'tabpanel', 'aria-labelledby': 'tab-overview' },
      summaryBox, waitingBox, failuresBox, slowBox,
      h('section', { id: 'tenants', 'data-testid': 'tenants', class: 'panel' },
        h('h2', {}, 'Tenants ', tasksTotal),
        filters, bulkBar, bulkNote,
        h('div', { class: 'matrix-wrap' }, tasksTable),
        pager,
        h('p', { class: 'legend' }, ['pending', 'running', 'retrying', 'waiting', 'done', 'failed', 'undoing', 'undone'].map((s) =>
          h('span', { class: 'legend-item' }, h('span', { class: 'cell swatch', 'data-state': s }), s)))));
    const audit = auditPanel(planId, alive);
    const tab = (name, text) => h('button', {
      type: 'button', role: 'tab', id: `tab-${name}`, 'data-testid': `tab-${name}`, 'data-tab': name,
      'aria-controls': name === 'audit' ? 'plan-audit' : 'plan-overview', text, onclick: () => showTab(name),
    });
    const tabs = [tab('overview', 'Overview'), tab('audit', 'Audit')];
    main.append(head, ringsBox, h('div', { class: 'tabs', role: 'tablist', 'data-testid': 'plan-tabs' }, tabs), overview, audit.el);

    // showTab shows one tab and, when remember, keeps it in the address with the filter
    // (#/plans/<id>?tab=audit); the Audit tab reads its first page again each time it is shown.
    function showTab(name, remember = true) {
      const onAudit = name === 'audit';
      overview.hidden = onAudit;
      audit.el.hidden = !onAudit;
      for (const b of tabs) b.setAttribute('aria-selected', String(b.dataset.tab === name));
      main.dataset.tab = name;
      if (remember) {
        const q = listQuery();
        if (onAudit) q.set('tab', 'audit');
        history.replaceState(null, '', `#/plans/${enc(planId)}${q.toString() ? `?${q}` : ''}`);
      }
      if (onAudit) audit.load();
    }

    // ------------------------------------------------------------ the head

    // planButton is a button that POSTs /v1/plans/{id}/<op> once the operator confirmed msg
    // (a function: asked at the click, with the counts of that moment).
    function planButton(op, label, { cls = op === 'cancel' ? 'danger' : '', msg = `${label} plan ${plan.name || planId}?`, id = `plan-${op}` } = {}) {
      return h('button', {
        type: 'button', id, 'data-testid': id, class: cls, text: label,
        onclick: () => confirmed(typeof msg === 'function' ? msg() : msg, async () => {
          const seq = planSeq;
          const p = (await api('POST', `/v1/plans/${enc(planId)}/${op}`)).data;
          // A plan event that came meanwhile may be newer than this answer: ask again then.
          if (seq === planSeq && alive()) {
            plan = p;
            renderHead();
          }
          refreshPlan(); // the plan's phase moves on without a plan event
          refresh();
        }),
      });
    }

    // retryFailed retries every FAILED or INTERRUPTED task of the plan from its checkpoint
    // (whatever the list's filter), and says how many were retried and skipped (and why).
    function retryFailed() {
      const n = retryable();
      return confirmed(`Retry the ${fmtCount(n)} FAILED and INTERRUPTED task(s) of plan ${plan.name || planId} from their checkpoints?`, async () => {
        const r = (await api('POST', `/v1/plans/${enc(planId)}/tasks/retry`, {
          body: JSON.stringify({ status: ['FAILED', 'INTERRUPTED'], fromCheckpoint: true }),
        })).data;
        if (!alive()) return;
        retryNote.dataset.retried = r.applied;
        retryNote.dataset.skipped = r.skippedCount;
        retryNote.replaceChildren(
          h('div', { class: 'note-line' },
            h('span', {
              id: 'plan-retry-summary', 'data-testid': 'plan-retry-summary',
              text: `Retried ${fmtCount(r.applied)} task(s) from their checkpoints; skipped ${fmtCount(r.skippedCount)}.`,
            }),
            h('button', { type: 'button', class: 'dismiss', 'aria-label': 'dismiss', text: '×', onclick: () => { retryNote.hidden = true; } })),
          skippedList(r, 'plan-retry-skipped'));
        retryNote.hidden = false;
        refresh();
      });
    }

    function retryable() {
      const st = (summary && summary.statuses) || (plan && plan.progress) || {};
      return (st.FAILED || 0) + (st.INTERRUPTED || 0);
    }

    // budgetText says the plan's failure budgets as `executor plan show` does: with rings, each
    // ring's (crossing it halts the plan; the current ring's spelled out), then the plan-wide
    // one; "none" when the plan has neither (every task runs, whatever fails).
    function budgetText(p) {
      const wide = p.failureBudget > 0 ? `${fmtCount(p.failureBudget)} failed task(s), then nothing new starts` : 'none';
      const r = p.rings;
      const cur = r && r.waves && r.waves[r.current];
      if (!cur) return p.failureBudget > 0 ? `plan-wide ${wide}` : 'none';
      return `per ring, crossing it halts the plan (ring ${r.current} now: ${fmtCount(cur.tolerates || 0)} of ${fmtCount(cur.tenants)} tenant(s) may fail, budget ${cur.failureBudget}); plan-wide: ${wide}`;
    }

    // progress is the plan's progress as the summary counts it (the plan's own until then).
    function progress() {
      if (!summary) return plan.progress;
      return { total: summary.total, ...summary.statuses };
    }

    // planSig is what the head shows of a plan but its progress (which follows the summary)
    // and its rings (which renderRings draws, with its own signature).
    function planSig(p) {
      const { progress: _, taskIds, rings, ...rest } = p;
      return JSON.stringify(rest);
    }

    function renderHead() {
      const p = plan;
      const pause = planButton('pause', 'Pause');
      const resume = planButton('resume', 'Resume');
      const cancel = planButton('cancel', 'Cancel');
      pause.disabled = TERMINAL_PLAN.has(p.status) || p.status === 'PAUSED';
      resume.disabled = p.status !== 'PAUSED';
      cancel.disabled = TERMINAL_PLAN.has(p.status);
      retryButton = h('button', {
        type: 'button', id: 'plan-retry-failed', 'data-testid': 'plan-retry-failed', text: 'Retry failed and interrupted',
        title: 'Retry every FAILED or INTERRUPTED task from its checkpoint, as `executor plan retry` does', onclick: retryFailed,
      });
      retryButton.disabled = retryable() === 0;

      // The canary wave: its phase, and the operator's gate while it is open.
      const c = p.canary && p.canary.tenants ? p.canary : null;
      const phase = c ? c.phase || '' : '';
      const gated = c && GATED_PHASES.has(phase) && !TERMINAL_PLAN.has(p.status);
      const rest = ((summary && summary.total) || (p.progress && p.progress.total) || 0) - (c ? c.tenants : 0);
      const rollout = gated ? [
        planButton('approve', 'Approve rollout', {
          cls: 'primary', msg: `Approve plan ${p.name || planId}: start the ${fmtCount(rest)} tenant(s) after its canary wave?`,
        }),
        planButton('reject', 'Reject rollout', {
          cls: 'danger', msg: `Reject plan ${p.name || planId}: the ${fmtCount(rest)} tenant(s) after its canary wave never start?`,
        }),
      ] : [];
      let canaryText = '';
      if (c) {
        canaryText = `first ${c.tenants} tenant(s), then ` +
          (c.then === 'approve' ? 'the rest start once an operator approves' : 'the rest start on their own');
        if (phase === 'AWAITING_APPROVAL') canaryText += `: the canary wave completed; ${fmtCount(rest)} tenant(s) wait for approval`;
        else if (phase === 'HALTED') canaryText += ': halted, the rest never start';
      }
      const labels = labelChips(p.labels);
      headSig = planSig(p);
      head.replaceChildren(
        h('div', { class: 'toolbar' },
          h('h1', {}, h('span', { id: 'plan-name', 'data-testid': 'plan-name', text: p.name || '(unnamed)' }), ' ',
            statusBadge(p.status, 'plan-status'), phase ? phaseBadge(phase, 'plan-phase') : null),
          h('div', { class: 'actions' }, rollout, pause, resume, cancel, retryButton,
            h('button', { type: 'button', id: 'plan-refresh', 'data-testid': 'plan-refresh', text: 'Refresh', onclick: () => loadAll() }))),
        h('dl', { class: 'facts' },
          h('dt', { text: 'Plan id' }), h('dd', { class: 'mono', id: 'plan-id', 'data-testid': 'plan-id', text: p.planId }),
          p.reason ? [h('dt', { text: 'Paused because' }),
            h('dd', { id: 'plan-reason', 'data-testid': 'plan-reason', text: `${p.reason} — resume continues the never-started tenants, retry from checkpoint the interrupted ones` })] : null,
          h('dt', { text: 'Progress' }), h('dd', { id: 'plan-progress-box' }, progressBar(progress())),
          h('dt', { text: 'Max concurrency' }), h('dd', { 'data-testid': 'plan-concurrency', text: String(p.maxConcurrency) }),
          h('dt', { text: 'Failure budget' }), h('dd', { id: 'plan-budget', 'data-testid': 'plan-budget', text: budgetText(p) }),
          c ? [h('dt', { text: 'Canary' }), h('dd', { id: 'plan-canary', 'data-testid': 'plan-canary', 'data-phase': phase, text: canaryText })] : null,
          p.status === 'SCHEDULED' && p.startAt ? [h('dt', { text: 'Scheduled start' }),
            h('dd', { id: 'plan-start-at', 'data-testid': 'plan-start-at', title: p.startAt }, fmtTime(p.startAt), ' (', ageEl(p.startAt), ')')] : null,
          p.startRate ? [h('dt', { text: 'Start rate' }),
            h('dd', { id: 'plan-start-rate', 'data-testid': 'plan-start-rate', 'data-rate': p.startRate, text: `at most ${p.startRate} task start(s) per minute` })] : null,
          h('dt', { text: 'Created' }), h('dd', { title: p.createdAt, text: fmtTime(p.createdAt) }),
          h('dt', { text: 'Started' }), h('dd', { title: p.startedAt || '', text: fmtTime(p.startedAt || p.startAt) }),
          h('dt', { text: 'Finished' }), h('dd', { title: p.finishedAt || '', text: fmtTime(p.finishedAt) }),
          labels.length ? [h('dt', { text: 'Labels' }), h('dd', { 'data-testid': 'plan-labels' }, labels)] : null),
        retryNote);
      head.dataset.status = p.status;
      head.dataset.phase = phase;
      renderRings();
    }

    // ------------------------------------------------------------ the rings

    // renderRings shows a rolling plan's rings: one row per ring (at most 20, whatever the
    // plan's size), the current one marked; when it halted, why, prominently; when it halted
    // or awaits approval, Approve and Reject. A canary plan keeps its head's "Approve
    // rollout" / "Reject rollout": no second pair here while those show. Drawn again only
    // when what it shows changed (not for bakeLeftMs: the countdown ticks on its own), so
    // that no button is swapped under a click.
    let ringsSig = '';
    let bakeLeft = null; // the baking ring's countdown, ticked by the timer below

    function renderRings() {
      const r = plan && plan.rings;
      const waves = (r && r.waves) || [];
      if (!waves.length) {
        ringsBox.hidden = true;
        ringsBox.replaceChildren();
        ringsSig = '';
        bakeLeft = null;
        return;
      }
      const k = Math.min(Math.max(r.current || 0, 0), waves.length - 1);
      const cw = waves[k];
      const ended = TERMINAL_PLAN.has(plan.status);
      const canary = !!(plan.canary && plan.canary.tenants);
      const canaryGated = canary && GATED_PHASES.has(plan.canary.phase || '');
      const sig = JSON.stringify([{ ...r, waves: waves.map(({ bakeLeftMs, ...w }) => w) }, plan.status, plan.name, canary, canaryGated]);
      if (sig === ringsSig) return;
      ringsSig = sig;

      const name = plan.name || planId;
      const ringName = (i) => `ring ${i} (${waves[i].name})`;
      const gated = !ended && !canaryGated && (cw.state === 'halted' || cw.state === 'awaiting_approval');
      const next = waves[k + 1];
      // The tenants not started: every PENDING task (a halted ring's queued ones went back to
      // PENDING), as the summary counts them at the click.
      const notStarted = () => {
        const st = (summary && summary.statuses) || plan.progress || {};
        return st.PENDING || 0;
      };
      const reject = () => planButton('reject', 'Reject: cancel the tenants not started', {
        id: 'rings-reject', cls: 'danger',
        msg: () => `Reject plan ${name}: cancel the ${fmtCount(notStarted())} tenant(s) not started ` +
          `(${cw.state === 'halted' ? `${ringName(k)}'s and every later ring's` : 'every later ring\'s'})? ` +
          'Running tasks finish; the plan then ends.',
      });

      let gate = null;
      if (r.halted) {
        const rejected = cw.state === 'rejected';
        gate = h('div', {
          class: rejected ? 'note' : 'problem', role: rejected ? null : 'alert', id: 'rings-halted', 'data-testid': 'rings-halted',
          'data-ring': r.halted.ring, 'data-wave': r.halted.wave, 'data-state': cw.state,
        },
        h('div', { class: rejected ? null : 'problem-title', 'data-testid': 'rings-halted-title',
          text: `${rejected ? 'Rejected' : 'Halted'} at ring ${r.halted.ring} (${r.halted.wave})` }),
        h('div', { class: 'problem-detail', id: 'rings-halted-reason', 'data-testid': 'rings-halted-reason', text: r.halted.reason || '' }),
        !rejected && !ended ? h('p', { class: 'small muted', text: 'Running tasks finish; nothing new starts. ' +
          'Approve goes on (a ring halted by its failure budget runs on with its budget waived; one halted by its health check makes way for the next ring); ' +
          'Reject cancels every tenant not started.' }) : null,
        gated ? h('div', { class: 'actions' },
          planButton('approve', 'Approve: go on', {
            id: 'rings-approve', cls: 'primary',
            msg: `Approve plan ${name}: go on past the halt of ${ringName(k)}?\n\n${r.halted.reason || ''}`,
          }),
          reject()) : null);
      } else if (cw.state === 'awaiting_approval' && !ended) {
        gate = h('div', { class: 'note', id: 'rings-awaiting', 'data-testid': 'rings-awaiting', 'data-ring': k },
          h('div', {
            'data-testid': 'rings-awaiting-text',
            text: `${ringName(k)} passed; ` + (next ? `${ringName(k + 1)}, ${fmtCount(next.tenants)} tenant(s), waits for an operator's approval.` : 'it waits for an operator\'s approval.') +
              (canaryGated ? ' Use "Approve rollout" or "Reject rollout" above.' : ''),
          }),
          gated ? h('div', { class: 'actions' },
            planButton('approve', next ? `Approve: start ${ringName(k + 1)}` : 'Approve', {
              id: 'rings-approve', cls: 'primary',
              msg: `Approve plan ${name}: ` + (next ? `start ${ringName(k + 1)}, ${fmtCount(next.tenants)} tenant(s)?` : `go on past ${ringName(k)}?`),
            }),
            reject()) : null);
      }

      bakeLeft = null;
      const rows = waves.map((w, i) => {
        const current = i === k;
        let bake = w.bake || '—';
        if (current && w.state === 'baking' && w.bakeEndsAt) {
          bakeLeft = h('span', {
            class: 'small', 'data-testid': 'ring-bake-left', 'data-ends-at': w.bakeEndsAt,
            title: `the bake ends at ${fmtTime(w.bakeEndsAt)}`, text: bakeText(w.bakeEndsAt),
          });
          bake = [bake, ' · ', bakeLeft];
        }
        const tr = h('tr', {
          'data-testid': 'ring-row', 'data-index': i, 'data-name': w.name, 'data-state': w.state,
          'data-current': current ? 'true' : null, 'aria-current': current ? 'step' : null,
        },
        h('td', { class: 'num', 'data-testid': 'ring-index', title: current ? 'the current ring' : null, text: current ? `▶ ${i}` : String(i) }),
        h('td', { class: 'mono', 'data-testid': 'ring-name', text: w.name }),
        h('td', { 'data-testid': 'ring-size', text: w.size }),
        h('td', {
          class: 'num', 'data-testid': 'ring-tenants', text: fmtCount(w.tenants),
          title: w.maxConcurrency ? `at most ${w.maxConcurrency} at once` : null,
        }),
        h('td', {},
          h('span', { class: 'badge', 'data-testid': 'ring-state', 'data-status': RING_LOOK[w.state] || 'PENDING', 'data-state': w.state, text: w.state.replace(/_/g, ' ') }),
          current && w.since && !RING_SETTLED.has(w.state) ? h('span', { class: 'small muted' }, ' for ', ageEl(w.since, { 'data-testid': 'ring-since' })) : null),
        h('td', { 'data-testid': 'ring-then', text: w.then || 'auto' }),
        h('td', {
          'data-testid': 'ring-budget', 'data-tolerates': w.tolerates || 0, title: 'the FAILED tasks this ring tolerates: one more halts the plan',
          text: (w.failureBudget || '0').endsWith('%') ? `${w.failureBudget} (${fmtCount(w.tolerates || 0)} of ${fmtCount(w.tenants)})` : (w.failureBudget || '0'),
        }),
        h('td', { 'data-testid': 'ring-bake' }, bake),
        h('td', { 'data-testid': 'ring-health', title: w.health ? `${w.health.kind} check after the bake` : null, text: w.health ? w.health.name : '—' }),
        h('td', { 'data-testid': 'ring-analysis' }, ...analysisCells(w.analysis)));
        if (current) tr.style.fontWeight = '600'; // CSSOM: allowed by the CSP
        return tr;
      });

      const order = r.order === 'shuffle' ? `shuffled (seed ${r.seed || 0})` : 'submission order';
      Object.assign(ringsBox.dataset, { current: k, state: cw.state, halted: r.halted ? 'true' : 'false' });
      ringsBox.replaceChildren(
        h('h2', {}, 'Rings ', h('span', {
          class: 'muted small', id: 'rings-where', 'data-testid': 'rings-where',
          text: `${ringName(k)} of ${waves.length}: ${cw.state.replace(/_/g, ' ')} · ${order}` +
            (r.failureBudget ? ` · default failure budget ${r.failureBudget}` : ''),
        })),
        gate || '',
        h('div', { class: 'matrix-wrap' }, h('table', { class: 'grid', id: 'rings-table', 'data-testid': 'rings-table' },
          h('thead', {}, h('tr', {}, ['#', 'Ring', 'Size', 'Tenants', 'State', 'Then', 'Failure budget', 'Bake', 'Health check', 'Analysis'].map((t) => h('th', { text: t })))),
          h('tbody', {}, rows))));
      ringsBox.hidden = false;
    }

    // analysisCells shows a ring's analyses: each one's counts and its latest measurement, the
    // query and the limits in its title.
    function analysisCells(as) {
      if (!as || as.length === 0) return ['—'];
      return as.map((a) => {
        const m = a.measurements && a.measurements.length ? a.measurements[a.measurements.length - 1] : null;
        return h('div', {
          class: 'small', 'data-testid': 'ring-analysis-item', 'data-name': a.name, 'data-verdict': m ? m.verdict : '',
          title: `${a.query}\nevery ${a.interval}; failure limit ${a.failureLimit}, inconclusive limit ${a.inconclusiveLimit}` +
            (m && m.message ? `\nlatest: ${m.message}` : ''),
          text: `${a.name}: ${a.successful} ok · ${a.failed} failed · ${a.inconclusive} inconclusive` +
            (m ? ` · latest ${m.value} (${m.verdict}, ${fmtTime(m.at)})` : ''),
        });
      });
    }

    // bakeText is the time left of a bake ending at endsAt, by this browser's clock.
    function bakeText(endsAt) {
      const ms = Date.parse(endsAt) - Date.now();
      if (!Number.isFinite(ms)) return '';
      return ms > 0 ? `${fmtSpan(Math.ceil(ms / 1000) * 1000)} left` : 'ending…';
    }

    const bakeTimer = setInterval(() => { if (bakeLeft) bakeLeft.textContent = bakeText(bakeLeft.dataset.endsAt); }, 500);
    onLeave(() => clearInterval(bakeTimer));

    // renderProgress follows the summary without re-rendering the head (no button is swapped
    // under a click).
    function renderProgress() {
      const box = $('#plan-progress-box', head);
      if (box) box.replaceChildren(progressBar(progress()));
      if (retryButton) retryButton.disabled = retryable() === 0;
    }

    // ------------------------------------------------------------ the summary

    // renderSummary shows the summary; one unchanged since it was shown (and under the same
    // filter) stays as it is: no button is swapped under a click.
    let summarySig = '';
    function renderSummary() {
      const s = summary;
      // (How long the slowest have run ticks on its own: it is not part of the signature.)
      const sig = JSON.stringify([{ ...s, slowest: s.slowest.map((r) => [r.taskId, r.stageIndex, r.since]) }, stages.length, filter]);
      if (sig === summarySig) return;
      summarySig = sig;
      summaryBox.dataset.total = s.total;
      $('#summary-total', summaryBox).textContent = `${fmtCount(s.total)} task(s)` + (s.missing ? `, ${fmtCount(s.missing)} missing` : '');
      summaryCounts.replaceChildren(statusCounts(s.statuses, {
        testid: 'summary-counts', onPick: (st) => setFilter({ status: st, stage: '', class: '' }),
      }));

      // The stage × status matrix of counts: one row per stage, then "(all stages done)" (no
      // stage name has parentheses or spaces: a stage named "done" is never taken for it).
      const active = (i, st) => filter.stage === String(i) && (st ? filter.status === st : !filter.status);
      stageMatrix.replaceChildren(
        h('thead', {}, h('tr', {}, h('th', { text: 'Current stage' }),
          STATUSES.map((st) => h('th', { class: 'num' }, h('button', {
            type: 'button', class: 'link', title: `List the ${st} tasks`, onclick: () => setFilter({ status: st, stage: '', class: '' }),
          }, statusBadge(st)))),
          h('th', { class: 'num', text: 'All' }))),
        h('tbody', {}, s.stages.map((sc) => {
          const label = sc.index < stages.length ? `${sc.index}: ${sc.name || stages[sc.index].name}` : ALL_STAGES_DONE;
          const counts = sc.counts || {};
          const all = Object.values(counts).reduce((a, b) => a + b, 0);
          return h('tr', { 'data-testid': 'matrix-row', 'data-stage-index': sc.index, 'data-stage': sc.name || '' },
            h('th', { class: active(sc.index, '') ? 'active' : null }, h('button', {
              type: 'button', class: 'link', title: `List the tasks at ${label}`,
              onclick: () => setFilter({ stage: String(sc.index), status: '', class: '' }), text: label,
            })),
            STATUSES.map((st) => {
              const n = counts[st] || 0;
              return h('td', {
                class: `num count${active(sc.index, st) ? ' active' : ''}`, 'data-testid': 'matrix-cell',
                'data-stage-index': sc.index, 'data-status': st, 'data-count': n,
              }, n ? h('button', {
                type: 'button', class: 'link', title: `List the ${st} tasks at ${label}`,
                onclick: () => setFilter({ stage: String(sc.index), status: st, class: '' }), text: fmtCount(n),
              }) : '');
            }),
            h('td', { class: 'num muted', text: all ? fmtCount(all) : '' }));
        })));

      // The gates with WAITING tasks.
      const waiting = s.statuses.WAITING || 0;
      gateList.replaceChildren(...s.gates.map((g) => h('li', {
        class: 'gate', 'data-testid': 'gate', 'data-stage': g.stage, 'data-stage-index': g.stageIndex, 'data-count': g.waiting,
      },
      statusBadge('WAITING'), ' ', h('b', { class: 'num', 'data-testid': 'gate-count', text: fmtCount(g.waiting) }),
      ` task(s) at stage ${g.stageIndex}: `, h('b', { text: g.stage }), ' ',
      h('button', {
        type: 'button', 'data-testid': 'gate-show', 'data-stage': g.stage,
        onclick: () => setFilter({ status: 'WAITING', stage: String(g.stageIndex), class: '' }), text: 'List them',
      }))));
      waitingCount.textContent = fmtCount(waiting);
      waitingBox.dataset.count = waiting;
      waitingBox.hidden = s.gates.length === 0;

      // Failure classes, most first, each with a sample.
      failuresBody.replaceChildren(...s.failureClasses.map((c) => h('tr', { 'data-testid': 'failure-class', 'data-class': c.class, 'data-count': c.count },
        h('td', { class: filter.class === c.class ? 'active' : null }, h('button', {
          type: 'button', class: 'link mono', title: `List the tasks whose last error is ${c.class}`,
          onclick: () => setFilter({ class: c.class, status: '', stage: '' }), text: c.class,
        })),
        h('td', { class: 'num', text: fmtCount(c.count) }),
        h('td', {}, c.sampleTenantId ? h('a', { href: `#/tenants/${enc(c.sampleTenantId)}`, class: 'mono', text: c.sampleTenantId }) : '—'),
        h('td', { class: 'error-text', text: c.sampleMessage || '' }))));
      failuresBox.hidden = s.failureClasses.length === 0;

      // The RUNNING tasks longest at their stage.
      slowBody.replaceChildren(...s.slowest.map((r) => h('tr', { 'data-testid': 'slow-task', 'data-tenant': r.tenantId },
        h('td', {}, h('a', { href: `#/tenants/${enc(r.tenantId)}`, class: 'mono', text: r.tenantId })),
        h('td', { text: `${r.stageIndex}: ${r.stage}` }),
        h('td', { class: 'num' }, ageEl(r.since, { 'data-testid': 'slow-age' })),
        h('td', { title: r.since, text: fmtTime(r.since) }))));
      slowBox.hidden = s.slowest.length === 0;

      renderClassOptions();
    }

    // ------------------------------------------------------------ the filter

    function renderStatusOptions() {
      const opts = [['', 'any status'], ...STATUSES.map((s) => [s, s]), ['FAILED,INTERRUPTED', 'FAILED or INTERRUPTED']];
      if (filter.status && !opts.some(([v]) => v === filter.status)) opts.push([filter.status, filter.status]);
      fStatus.replaceChildren(...opts.map(([v, t]) => option(v, t, filter.status)));
    }

    function renderStageOptions() {
      const opts = [['', 'any stage'], ...stages.map((s, i) => [String(i), `${i}: ${s.name}`]), [String(stages.length), ALL_STAGES_DONE]];
      // A stage named in the address: its index when it is a name.
      const i = stages.findIndex((s) => s.name === filter.stage);
      if (i >= 0) filter.stage = String(i);
      if (filter.stage && !opts.some(([v]) => v === filter.stage)) opts.push([filter.stage, filter.stage]);
      fStage.replaceChildren(...opts.map(([v, t]) => option(v, t, filter.stage)));
    }

    let classSig = null;
    function renderClassOptions() {
      const classes = (summary && summary.failureClasses) || [];
      const opts = [['', 'any class'], ...classes.map((c) => [c.class, `${c.class} (${fmtCount(c.count)})`])];
      if (filter.class && !classes.some((c) => c.class === filter.class)) opts.push([filter.class, filter.class]);
      const sig = JSON.stringify([opts, filter.class]);
      if (sig === classSig) return; // unchanged: an open select stays open
      classSig = sig;
      fClass.replaceChildren(...opts.map(([v, t]) => option(v, t, filter.class)));
    }

    function syncControls() {
      renderStatusOptions();
      renderStageOptions();
      renderClassOptions();
      if (fTenant.value.trim() !== filter.tenant) fTenant.value = filter.tenant;
      fSort.value = filter.sort;
    }

    // listQuery is the listing's query for the filter, with extra parameters.
    function listQuery(extra = {}) {
      const q = new URLSearchParams();
      if (filter.status) q.set('status', filter.status);
      if (filter.stage !== '') q.set('stage', filter.stage);
      if (filter.class) q.set('class', filter.class);
      if (filter.tenant) q.set('tenant', filter.tenant);
      if (filter.sort !== 'order') q.set('sort', filter.sort);
      for (const [k, v] of Object.entries(extra)) if (v) q.set(k, v);
      return q;
    }

    // setFilter changes the filter, lists its first page and keeps it in the address (without
    // a navigation: history.replaceState fires no hashchange).
    function setFilter(patch) {
      Object.assign(filter, patch);
      cursor = '';
      back.length = 0;
      syncControls();
      const q = listQuery().toString();
      history.replaceState(null, '', `#/plans/${enc(planId)}${q ? `?${q}` : ''}`);
      if (summary) renderSummary(); // the active cell
      updateBulk();
      tasksTable.dataset.loading = 'true';
      loadPage();
    }

    fStatus.addEventListener('change', () => setFilter({ status: fStatus.value }));
    fStage.addEventListener('change', () => setFilter({ stage: fStage.value }));
    fClass.addEventListener('change', () => setFilter({ class: fClass.value }));
    fSort.addEventListener('change', () => setFilter({ sort: fSort.value }));
    const typed = debounce(() => { if (fTenant.value.trim() !== filter.tenant) setFilter({ tenant: fTenant.value.trim() }); }, 300);
    fTenant.addEventListener('input', typed);
    filters.addEventListener('submit', (ev) => {
      ev.preventDefault();
      if (fTenant.value.trim() !== filter.tenant) setFilter({ tenant: fTenant.value.trim() });
    });
    fClear.addEventListener('click', () => setFilter({ status: '', stage: '', class: '', tenant: '', sort: 'order' }));

    // describeFilter says which tasks the filter keeps, after their count and status.
    function describeFilter() {
      const parts = [];
      if (filter.stage !== '') {
        const i = Number(filter.stage);
        parts.push(i >= stages.length ? 'past every stage' : `at stage ${stageName(stages, i)}`);
      }
      if (filter.class) parts.push(`whose last error is ${filter.class}`);
      if (filter.tenant) parts.push(`whose tenant id starts with “${filter.tenant}”`);
      return parts.length ? ` ${parts.join(', ')}` : '';
    }

    // ------------------------------------------------------------ bulk actions

    // effective is the statuses action takes under the filter: the filter's, when the action
    // can change each of them (else null: the action does not apply), or the action's default.
    function effective(action) {
      const a = ACTIONS[action];
      const st = statusesOf(filter);
      if (st.length) return st.every((s) => a.can.includes(s)) ? st : null;
      return a.defaults || a.can;
    }

    function updateBulk() {
      const st = statusesOf(filter);
      const waitingOnly = st.length === 1 && st[0] === 'WAITING';
      bulkApprove.hidden = !waitingOnly;
      if (!waitingOnly) closeReject();
      bulkReject.hidden = !waitingOnly || !rejectForm.hidden;
      for (const [button, action] of [[bulkRetry, 'retry'], [bulkCancel, 'cancel']]) {
        const eff = effective(action);
        button.disabled = !eff;
        button.title = eff ? `${ACTIONS[action].verb} the ${eff.join(', ')} tasks matching the filter`
          : `Only ${ACTIONS[action].can.join(', ')} tasks can be ${ACTIONS[action].done.toLowerCase()}`;
      }
      bulkHint.textContent = 'Filter on WAITING tasks (click a gate) to approve or reject them all at once.';
      bulkHint.hidden = waitingOnly;
    }

    function closeReject() {
      rejectForm.hidden = true;
      bulkReject.hidden = false;
    }
    bulkReject.addEventListener('click', () => { rejectForm.hidden = false; bulkReject.hidden = true; rejectComment.focus(); });
    rejectCancel.addEventListener('click', () => { closeReject(); updateBulk(); });
    rejectForm.addEventListener('submit', (ev) => { ev.preventDefault(); bulk('reject', rejectComment.value.trim()); });
    bulkApprove.addEventListener('click', () => bulk('approve'));
    bulkRetry.addEventListener('click', () => bulk('retry'));
    bulkCancel.addEventListener('click', () => bulk('cancel'));

    const bulkButtons = [bulkApprove, bulkReject, rejectConfirm, bulkRetry, bulkCancel];

    // bulk counts the tasks the action would change now, asks the operator to confirm that
    // count, then acts on the filter and shows what was done and skipped.
    async function bulk(action, comment = '') {
      const a = ACTIONS[action];
      const statuses = effective(action);
      if (!statuses) return;
      clearError();
      const body = { status: statuses };
      if (filter.stage !== '') body.stage = filter.stage;
      if (filter.class) body.class = filter.class;
      if (filter.tenant) body.tenant = filter.tenant;
      if (comment) body.comment = comment;
      if (action === 'retry') body.fromCheckpoint = true;
      let n;
      try {
        const q = listQuery({ limit: '1' });
        q.set('status', statuses.join(','));
        n = (await api('GET', `/v1/plans/${enc(planId)}/tasks?${q}`)).data.total;
      } catch (e) { if (alive()) showError(e); return; }
      if (!alive()) return;
      const what = `${fmtCount(n)} ${statuses.join('/')} task${n === 1 ? '' : 's'}${describeFilter()}`;
      if (!n) {
        showBulkNote({ action, text: `Nothing to ${a.verb.toLowerCase()}: no ${statuses.join('/')} task${describeFilter()}.`, matched: 0, applied: 0, skipped: 0 });
        return;
      }
      const why = {
        reject: ' They fail at their gate' + (comment ? ', with your comment on each decision.' : '.'),
        retry: ' Each runs again from its checkpoint.',
        cancel: ' Running ones are cancelled through their context.',
      }[action] || '';
      await confirmed(`${a.verb} ${what}?${why}`, async () => {
        bulkButtons.forEach((b) => { b.disabled = true; });
        try {
          const r = (await api('POST', `/v1/plans/${enc(planId)}/tasks/${action}`, { body: JSON.stringify(body) })).data;
          if (!alive()) return;
          showBulkNote({
            action, matched: r.matched, applied: r.applied, skipped: r.skippedCount,
            text: `${a.done} ${fmtCount(r.applied)} of ${fmtCount(r.matched)} matching task(s); skipped ${fmtCount(r.skippedCount)}.`,
            list: skippedList(r, 'bulk-skipped'),
          });
          if (action === 'reject') { rejectComment.value = ''; closeReject(); }
        } finally {
          bulkButtons.forEach((b) => { b.disabled = false; });
          updateBulk();
          refresh();
        }
      });
    }

    function showBulkNote({ action, text, matched, applied, skipped, list = '' }) {
      Object.assign(bulkNote.dataset, { action, matched, applied, skipped });
      bulkNote.replaceChildren(
        h('div', { class: 'note-line' },
          h('span', { id: 'bulk-summary', 'data-testid': 'bulk-summary', text }),
          h('button', { type: 'button', class: 'dismiss', 'aria-label': 'dismiss', text: '×', onclick: () => { bulkNote.hidden = true; } })),
        list);
      bulkNote.hidden = false;
    }

    // skippedList lists the first skipped tasks of a bulk answer with the reasons.
    function skippedList(r, testid) {
      const skipped = r.skipped || [];
      if (!skipped.length) return '';
      const more = r.skippedCount - Math.min(skipped.length, SKIPPED_SHOWN);
      return h('ul', { class: 'skipped' },
        skipped.slice(0, SKIPPED_SHOWN).map((x) => h('li', { 'data-testid': testid, 'data-tenant': x.tenantId },
          x.tenantId ? h('a', { href: `#/tenants/${enc(x.tenantId)}`, class: 'mono', text: x.tenantId }) : h('span', { class: 'mono', text: x.taskId }),
          `: ${x.reason || 'skipped'}`)),
        more > 0 ? h('li', { class: 'muted', text: `… and ${fmtCount(more)} more` }) : null);
    }

    // ------------------------------------------------------------ the page of tenants

    function renderThead() {
      thead.replaceChildren(h('tr', {},
        ['Tenant', 'Status', 'Attempt', 'Current stage'].map((t) => h('th', { text: t })),
        stages.map((s, i) => h('th', { class: 'stage-head', 'data-stage': s.name, title: `${i}: ${s.name} (${s.kind})`, text: s.name })),
        h('th', { text: 'Waiting, last error or decision' }),
        h('th', { text: 'Updated' })));
    }

    // The rows shown, by task: a row whose task did not change is kept as it is (and a
    // comment being typed in its reject box with it).
    let rows = new Map(); // taskId -> {sig, tr}
    const taskSig = (t) => JSON.stringify([t.status, t.attempt, t.currentStage, t.updatedAt, t.wait, t.lastError, t.decision]);

    function taskRow(t) {
      const row = rowFromTask(t);
      const cells = stageCells(row, stages);
      paintCells(cells, row, stages);
      let detail = '';
      if (t.status === 'WAITING' && t.wait) {
        detail = waitingItem(t, decided, { showTenant: false, tag: 'div' });
      } else if (t.lastError) {
        const e = t.lastError;
        detail = h('span', { class: 'error-text small', 'data-testid': 'task-error', 'data-class': e.class },
          `${e.stage || '?'} attempt ${e.attempt || '?'}: ${e.class}${e.code ? ` (${e.code})` : ''}: ${e.message}`);
      } else if (t.decision) {
        detail = h('span', { class: 'small muted', 'data-testid': 'task-decision', text: decisionText(t.decision) });
      }
      return h('tr', { 'data-testid': 'task-row', 'data-tenant': t.tenantId, 'data-task-id': t.taskId, 'data-status': t.status },
        h('td', {}, h('a', { href: `#/tenants/${enc(t.tenantId)}`, class: 'mono', 'data-testid': 'tenant-link', 'data-tenant': t.tenantId, text: t.tenantId })),
        h('td', {}, statusBadge(t.status, 'task-status')),
        h('td', { class: 'num', 'data-testid': 'task-attempt', text: String(t.attempt) }),
        h('td', { 'data-testid': 'task-stage', text: stageName(stages, t.currentStage) }),
        cells,
        h('td', { class: 'detail' }, detail),
        h('td', { class: 'small muted' }, ageEl(t.updatedAt), ' ago'));
    }

    function renderPage(page) {
      const tasks = page.tasks || [];
      total = page.total || 0;
      nextCursor = page.nextCursor || '';
      const keep = new Map();
      const trs = tasks.map((t) => {
        const sig = taskSig(t);
        let entry = rows.get(t.taskId);
        if (!entry || entry.sig !== sig) entry = { sig, tr: taskRow(t) };
        keep.set(t.taskId, entry);
        return entry.tr;
      });
      rows = keep;
      if (!trs.length) {
        trs.push(h('tr', { 'data-testid': 'tasks-empty' }, h('td', {
          colspan: stages.length + 6, class: 'muted',
          text: back.length ? 'No tenant on this page any more: go back.' : 'No tenant matches the filter.',
        })));
      }
      // Only what moved is moved: a row that stays keeps its place (and its focus).
      trs.forEach((tr, i) => { if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null); });
      while (tbody.children.length > trs.length) tbody.lastElementChild.remove();

      const first = back.length * PAGE_SIZE;
      tasksTotal.textContent = `${fmtCount(total)} matching`;
      tasksTotal.dataset.total = total;
      tasksTable.dataset.query = listQuery().toString();
      tasksTable.dataset.page = back.length + 1;
      delete tasksTable.dataset.loading;
      pageInfo.textContent = tasks.length ? `${fmtCount(first + 1)}–${fmtCount(first + tasks.length)} of ${fmtCount(total)}` : `of ${fmtCount(total)}`;
      prev.disabled = back.length === 0;
      next.disabled = !nextCursor;
      const missing = page.missingTasks || [];
      pageInfo.title = missing.length ? `${missing.length} task(s) the store no longer holds are not listed` : '';
    }

    prev.addEventListener('click', () => {
      if (!back.length) return;
      cursor = back.pop();
      loadPage();
    });
    next.addEventListener('click', () => {
      if (!nextCursor) return;
      back.push(cursor);
      cursor = nextCursor;
      loadPage();
    });

    // decided takes a task as an approve or reject of its row returned it: the row shows it
    // at once; the next refresh moves it out of a filter it left.
    function decided(t) {
      const entry = rows.get(t.taskId);
      if (entry) {
        const tr = taskRow(t);
        entry.tr.replaceWith(tr);
        rows.set(t.taskId, { sig: taskSig(t), tr });
      }
      refresh();
    }

    // ------------------------------------------------------------ loading

    const pageURL = () => `/v1/plans/${enc(planId)}/tasks?${listQuery({ limit: String(PAGE_SIZE), cursor })}`;
    const summaryURL = `/v1/plans/${enc(planId)}/summary`;

    function applySummary(s, pseq) {
      summary = s;
      // The summary reads the plan's status too; it is newer than the plan's unless a plan
      // event came since it was asked for.
      if (pseq === planSeq && (s.status !== plan.status || (s.reason || '') !== (plan.reason || ''))) {
        plan.status = s.status;
        if (s.reason) plan.reason = s.reason; else delete plan.reason;
        renderHead();
        refreshPlan(); // its other fields (finishedAt, phase) moved with it
      }
      renderSummary();
      renderProgress();
    }

    // planLoaded resolves once the plan is shown: the summary and a page need its stages.
    let planShown;
    const planLoaded = new Promise((resolve) => { planShown = resolve; });

    async function loadSummary() {
      const seq = ++summarySeq;
      const pseq = planSeq;
      try {
        const s = (await api('GET', summaryURL)).data;
        await planLoaded;
        if (alive() && seq === summarySeq) applySummary(s, pseq);
      } catch (e) { if (alive()) showError(e); }
    }

    async function loadPage() {
      const seq = ++pageSeq;
      try {
        const page = (await api('GET', pageURL())).data;
        await planLoaded;
        if (alive() && seq === pageSeq) renderPage(page);
      } catch (e) {
        if (!alive() || seq !== pageSeq) return;
        if (e.status === 400 && cursor) { // a cursor the listing no longer takes: the first page
          cursor = '';
          back.length = 0;
          loadPage();
          return;
        }
        delete tasksTable.dataset.loading;
        showError(e);
      }
    }

    // loadAll reads the plan, its summary and the page at once, and shows them.
    async function loadAll() {
      const pseq = planSeq;
      const sseq = ++summarySeq;
      const seq = ++pageSeq;
      let p;
      let s;
      let page;
      loadingAll = true;
      try {
        [p, s, page] = await Promise.all([
          api('GET', `/v1/plans/${enc(planId)}`).then((r) => r.data),
          api('GET', summaryURL).then((r) => r.data),
          api('GET', pageURL()).then((r) => r.data, (e) => ({ error: e })),
          applyRules(),
        ]);
      } catch (e) {
        if (alive()) showError(e);
        return;
      } finally {
        loadingAll = false;
      }
      if (!alive()) return;
      const first = !plan;
      plan = p;
      stages = p.stages || [];
      if (first) {
        syncControls();
        updateBulk(); // with the executor's rules, now read
      }
      renderThead();
      renderHead();
      planShown();
      if (sseq === summarySeq) applySummary(s, pseq);
      if (seq === pageSeq) {
        if (page.error) showError(page.error);
        else renderPage(page);
      }
      if (pseq !== planSeq) refreshPlan(); // a plan event came while reading
      if (refreshAfterLoad) { // events came while reading: the answers may be older
        refreshAfterLoad = false;
        refresh();
      }
      markFirstPaint();
    }

    // refresh re-reads the summary and the page, at most once a second however many events
    // come (and the plan, while its canary phase is open).
    let loadingAll = false; // a refresh asked for meanwhile runs after it
    let refreshAfterLoad = false;
    const refresh = throttle(async () => {
      if (!plan || loadingAll) { refreshAfterLoad = true; return; }
      if (phaseOpen()) refreshPlan();
      await Promise.all([loadSummary(), loadPage()]);
    }, REFRESH_MS);

    const refreshPlan = debounce(async () => {
      try {
        const seq = planSeq;
        const p = (await api('GET', `/v1/plans/${enc(planId)}`)).data;
        if (!alive() || !plan) return;
        // A plan event came while asking: this answer may be older than it. Ask again.
        if (seq !== planSeq) { refreshPlan(); return; }
        const changed = planSig(p) !== headSig;
        plan = p;
        if (changed) renderHead(); // else the head stays as it is: no button is swapped under a click
        else {
          renderProgress();
          renderRings(); // the rings follow their own signature
        }
      } catch (e) { if (alive()) showError(e); }
    }, 200);

    // A canary wave's phase moves on without a plan event: while it is open, look again.
    const phaseOpen = () => plan && plan.canary && GATED_PHASES.has(plan.canary.phase) && !TERMINAL_PLAN.has(plan.status);
    // A rolling plan's ring changes come as plan events; the poll makes sure of them (a bake
    // ends, a check answers) while the plan has not ended and its current ring is not settled.
    // (Only the poll: task events do not re-read the plan for it, so a plan of 100,000 tenants
    // is read at most every 2 s, not at every refresh.)
    const ringOpen = () => {
      const r = plan && plan.rings;
      const w = r && r.waves && r.waves[r.current];
      return !!w && !RING_SETTLED.has(w.state) && !TERMINAL_PLAN.has(plan.status);
    };
    const poll = setInterval(() => { if (phaseOpen() || ringOpen()) refreshPlan(); }, 2000);
    onLeave(() => clearInterval(poll));

    function onPlanEvent(ev) {
      planSeq++;
      if (!plan) return; // the load under way reads it again
      plan.status = ev.status;
      renderHead();
      refreshPlan();
      refresh();
    }

    updateBulk();
    showTab(query.get('tab') === 'audit' ? 'audit' : 'overview', false);
    const opened = watch(`/v1/events?plan=${enc(planId)}`, { task: refresh, stage: refresh, undo: refresh, plan: onPlanEvent, gap: () => loadAll() });
    await opened;
    if (alive()) await loadAll();
  }

  window.executorConsole.registerView('plan', planView);
})();
