/*
 * Serval status dashboard (read-only).
 *
 * Polling / merge model:
 *  - poll() calls GET api/dashboard, one call at a time; the next call is scheduled
 *    POLL_MS after the previous one finished, whatever its outcome.
 *  - While nothing is kept the call has no parameter and the server answers with the
 *    whole history; afterwards it passes ?after=<largest t kept> and gets newer points only.
 *  - For each deployment name we keep {id, t[], values{seriesKey: []}}. When history.id
 *    differs from the kept id the deployment was recreated and its points are replaced;
 *    otherwise points newer than the last kept t are appended (a history that started afresh
 *    during an incremental call makes the next call a full one). Points at or before
 *    now - historyMs are dropped, and names missing from the latest list are forgotten.
 *  - Cards follow the latest list (same order); their charts are redrawn from the kept
 *    points after every successful call. Server text only ever goes through textContent
 *    or attribute values, never through HTML parsing.
 *  - A 401 shows a token form; the token is kept in sessionStorage "serval-token" and sent
 *    as "Authorization: Bearer <token>". Other failures show the #connection banner.
 */
'use strict';

(() => {
  const POLL_MS = 2000;
  const TOKEN_KEY = 'serval-token';
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const NO_VALUE = '–';

  const REQUEST_SERIES = [
    {key: 'ok', label: 'ok', color: '#2e7d32'},
    {key: 'error', label: 'error', color: '#c62828'},
    {key: 'rejected', label: 'rejected', color: '#ef6c00'},
    {key: 'not_ready', label: 'not ready', color: '#ffb74d'},
    {key: 'bad_request', label: 'bad request', color: '#616161'},
    {key: 'cancelled', label: 'cancelled', color: '#9e9e9e'},
    {key: 'expired', label: 'expired', color: '#c7c7c7'},
  ].map(s => ({...s, path: ['requestsPerSecond', s.key]}));

  const STAGE_COLORS = {total: '#1a237e', queue: '#8e24aa', batch: '#00897b', inference: '#d84315'};
  const LATENCY_SERIES = Object.entries(STAGE_COLORS).flatMap(([stage, color]) =>
    ['p50', 'p99'].map(q => ({
      key: `${stage}-${q}`, label: `${stage} ${q}`, color, dash: q === 'p50',
      path: ['latencyMs', stage, q],
    })));

  const BATCH_SERIES = [
    {key: 'batch-size-mean', label: 'batch size mean', color: '#1565c0', path: ['batchSize', 'mean']},
    {key: 'batch-size-p99', label: 'batch size p99', color: '#1565c0', dash: true, path: ['batchSize', 'p99']},
    {key: 'inputs-mean', label: 'inputs / request', color: '#6a1b9a', path: ['inputsPerRequest', 'mean']},
  ];

  const CACHE_SERIES = [{key: 'cache-hit-rate', label: 'cache hit rate', color: '#2e7d32', path: ['cache', 'hitRate']}];

  const ALL_SERIES = [...REQUEST_SERIES, ...LATENCY_SERIES, ...BATCH_SERIES, ...CACHE_SERIES];

  const CHARTS = [
    {id: 'requests', title: 'Requests / s by outcome', unit: 'req/s', stacked: true, series: REQUEST_SERIES},
    {id: 'latency', title: 'Latency (p50 dashed, p99 solid)', unit: 'ms', series: LATENCY_SERIES},
    {id: 'batch', title: 'Batch size and inputs per request', unit: 'items', series: BATCH_SERIES},
  ];

  const REPLICA_STATES = ['desired', 'running', 'starting', 'updating', 'stopping', 'recovering'];

  // viewBox geometry of a chart; the SVG scales to the card width.
  const GEOM = {w: 360, h: 130, left: 40, right: 8, top: 8, bottom: 16};

  const kept = new Map(); // deployment name -> {id, t: [], values: {seriesKey: []}}
  let latestT = null;
  let busy = false;
  let timer = null;

  // ---------------------------------------------------------------- polling

  async function poll() {
    if (busy) return;
    busy = true;
    clearTimeout(timer);
    try {
      const answer = await fetchDashboard();
      showAuthForm(answer.unauthorized === true);
      showConnectionProblem(answer.problem);
      if (answer.data) render(answer.data);
    } finally {
      busy = false;
      timer = setTimeout(poll, POLL_MS);
    }
  }

  /** Resolves to {data}, {unauthorized: true} or {problem: text}; never rejects. */
  async function fetchDashboard() {
    const url = latestT == null ? 'api/dashboard' : `api/dashboard?after=${latestT}`;
    const headers = {Accept: 'application/json'};
    const token = readToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    try {
      const res = await fetch(url, {headers, cache: 'no-store', credentials: 'same-origin'});
      if (res.status === 401) return {unauthorized: true};
      if (res.status !== 200) return {problem: `HTTP ${res.status} ${res.statusText}`.trim()};
      return {data: await res.json()};
    } catch (e) {
      return {problem: e && e.message ? e.message : String(e)};
    }
  }

  function readToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch (e) {
      return null;
    }
  }

  function showConnectionProblem(problem) {
    const banner = byId('connection');
    banner.hidden = !problem;
    banner.textContent = problem ? `Serval did not answer: ${problem}` : '';
  }

  function showAuthForm(show) {
    const form = byId('auth');
    if (show && form.hidden) {
      byId('auth-message').textContent = readToken() ? 'The token was refused.' : 'Serval needs a token.';
      form.hidden = false;
      byId('token').focus();
    } else if (!show) {
      form.hidden = true;
    }
  }

  function onTokenSubmit(event) {
    event.preventDefault();
    try {
      sessionStorage.setItem(TOKEN_KEY, byId('token').value);
    } catch (e) {
      byId('auth-message').textContent = 'This browser does not allow sessionStorage.';
      return;
    }
    byId('token').value = '';
    byId('auth').hidden = true;
    poll();
  }

  // ---------------------------------------------------------------- history merge

  /** Appends history's new points; returns whether this name's history started afresh (new or recreated). */
  function mergeHistory(name, history) {
    if (!history || !Array.isArray(history.t)) return false;
    let k = kept.get(name);
    const fresh = !k || k.id !== history.id;
    if (fresh) {
      k = {id: history.id, t: [], values: {}};
      ALL_SERIES.forEach(s => { k.values[s.key] = []; });
      kept.set(name, k);
    }
    const last = k.t.length ? k.t[k.t.length - 1] : -Infinity;
    history.t.forEach((t, i) => {
      if (!(t > last)) return;
      k.t.push(t);
      ALL_SERIES.forEach(s => k.values[s.key].push(pick(history, s.path, i)));
    });
    return fresh;
  }

  /** The i-th number at path in obj, or null (absent, null or not a number). */
  function pick(obj, path, i) {
    const column = path.reduce((o, p) => (o == null ? undefined : o[p]), obj);
    const v = Array.isArray(column) ? column[i] : null;
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  }

  function trim(k, cutoff) {
    const first = k.t.findIndex(t => t > cutoff);
    const drop = first < 0 ? k.t.length : first;
    if (drop === 0) return;
    k.t.splice(0, drop);
    Object.values(k.values).forEach(v => v.splice(0, drop));
  }

  /**
   * ?after= is one time for every deployment, so a history that started afresh during an incremental call got
   * only its newest points: the next call then asks for everything again (known points are not appended twice).
   */
  function updateKept(list, cutoff) {
    const incremental = latestT != null;
    let refetch = false;
    list.forEach(d => { if (mergeHistory(d.name, d.history) && incremental) refetch = true; });
    const names = new Set(list.map(d => d.name));
    for (const name of [...kept.keys()]) if (!names.has(name)) kept.delete(name);
    kept.forEach(k => trim(k, cutoff));
    const lasts = [...kept.values()].filter(k => k.t.length).map(k => k.t[k.t.length - 1]);
    latestT = lasts.length && !refetch ? Math.max(...lasts) : null;
  }

  // ---------------------------------------------------------------- rendering

  function render(data) {
    const list = Array.isArray(data.deployments) ? data.deployments : [];
    const range = {from: data.now - data.historyMs, to: data.now};
    updateKept(list, range.from);
    renderServer(data);
    renderCards(list, range, 2.5 * (data.sampleIntervalMs || 1000));
    document.body.dataset.updated = String(data.now);
  }

  function renderServer(data) {
    const s = data.server || {};
    setBadge(byId('server-live'), s.live ? 'live' : 'not live', s.live ? 'good' : 'bad');
    setBadge(byId('server-ready'), s.ready ? 'ready' : 'not ready', s.ready ? 'good' : 'bad');
    const reason = byId('server-reason');
    reason.hidden = s.live || !s.notLiveReason;
    reason.textContent = s.live ? '' : (s.notLiveReason || '');
    byId('buffered').textContent = fmtBytes(s.bufferedBytes);
    byId('max-buffered').textContent = fmtBytes(s.maxBufferedBytes);
    const meter = byId('buffer-meter');
    meter.max = s.maxBufferedBytes > 0 ? s.maxBufferedBytes : 1;
    meter.value = s.bufferedBytes > 0 ? s.bufferedBytes : 0;
    const updated = byId('updated');
    updated.textContent = fmtTime(data.now);
    updated.dateTime = new Date(data.now).toISOString();
  }

  /** Keeps one card per listed name, in list order, and updates each. */
  function renderCards(list, range, gapMs) {
    const main = byId('deployments');
    const names = new Set(list.map(d => d.name));
    [...main.children].forEach(card => { if (!names.has(card.dataset.deployment)) card.remove(); });
    let previous = null;
    list.forEach(d => {
      const card = cardFor(main, d);
      const expected = previous ? previous.nextSibling : main.firstChild;
      if (card !== expected) main.insertBefore(card, expected);
      if (isMultiplexed(d)) updateMultiplexCard(card, d);
      else updateDeploymentCard(card, d, range, gapMs);
      previous = card;
    });
    byId('empty').hidden = list.length > 0;
  }

  function isMultiplexed(d) {
    return d.kind === 'multiplexed' || d.multiplex != null;
  }

  /** The existing card for d (if it has the right type) or a new one. */
  function cardFor(main, d) {
    const type = isMultiplexed(d) ? 'multiplexed' : 'single';
    const existing = [...main.children].find(c => c.dataset.deployment === d.name);
    if (existing && existing.dataset.type === type) return existing;
    if (existing) existing.remove();
    return type === 'multiplexed' ? buildMultiplexCard(d.name) : buildDeploymentCard(d.name);
  }

  function updateDeploymentCard(card, d, range, gapMs) {
    updateCommon(card, d);
    setField(card, 'queued', fmtInt(d.queued_requests));
    setField(card, 'in-flight', fmtInt(d.in_flight_requests));
    setField(card, 'model', d.model);
    setField(card, 'version', d.version);
    renderBatching(field(card, 'batching'), d.batching);
    const replicas = d.replicas || {};
    REPLICA_STATES.forEach(s => setField(card, `replicas-${s}`, fmtInt(replicas[s])));
    renderAutoscaling(field(card, 'autoscaling'), d.autoscaling);
    setField(card, 'failure-ratio', fmtRatio(d.failure_ratio));
    const k = kept.get(d.name);
    renderLatest(card, k);
    CHARTS.forEach(c => drawChart(card.querySelector(`svg[data-chart="${c.id}"]`), k, c, range, gapMs));
  }

  function updateMultiplexCard(card, d) {
    updateCommon(card, d);
    const m = d.multiplex || {};
    setField(card, 'num-replicas', fmtInt(m.num_replicas));
    setField(card, 'models-loaded', fmtInt(m.models_loaded));
    setField(card, 'models-matching', fmtInt(m.models_matching));
    setField(card, 'ongoing', fmtInt(d.ongoing_requests));
    const rows = (Array.isArray(m.models) ? m.models : []).map(modelRow);
    if (!rows.length) rows.push(el('tr', {}, [el('td', {colspan: '5', class: 'muted', text: 'no models'})]));
    field(card, 'models').replaceChildren(...rows);
  }

  /** Fields both card types have. */
  function updateCommon(card, d) {
    setField(card, 'name', d.name);
    setField(card, 'kind', d.kind);
    const state = field(card, 'state');
    state.hidden = d.state == null;
    setBadge(state, d.state == null ? '' : String(d.state), stateClass(d.state));
    setBadge(field(card, 'ready'), d.ready ? 'ready' : 'not ready', d.ready ? 'good' : 'bad');
    renderErrors(field(card, 'errors'), d.recent_errors);
  }

  function modelRow(m) {
    return el('tr', {}, [
      el('td', {text: m.name}),
      el('td', {text: m.version}),
      el('td', {}, [el('span', {class: `badge ${stateClass(m.state)}`, text: m.state})]),
      el('td', {text: Array.isArray(m.replicas) ? m.replicas.join(', ') : ''}),
      el('td', {class: m.last_error ? 'last-error' : 'muted', text: m.last_error || 'none'}),
    ]);
  }

  function renderBatching(node, b) {
    node.hidden = !b;
    if (!b) return;
    node.title = b.reason || '';
    const invariant = b.batch_invariant ? ', batch-invariant' : '';
    node.replaceChildren(
      el('span', {text: `batching: ${b.mode}, preferred batch ${b.preferred_batch}${invariant}`}),
      el('small', {text: b.reason || ''}));
  }

  function renderAutoscaling(node, a) {
    if (!a) {
      node.replaceChildren(el('span', {class: 'muted', text: 'fixed replica count'}));
      return;
    }
    const parts = [
      el('span', {text: `autoscaler wants ${fmtInt(a.wanted_replicas)} replicas, ongoing requests ${fmtNumber(a.ongoing_requests, 2)}`}),
      el('small', {text: a.reason || ''}),
    ];
    const last = a.last_decision;
    if (last) {
      parts.push(el('small', {text: `last change ${last.from} → ${last.to} at ${fmtTime(last.at)}: ${last.reason || ''}`}));
    }
    node.replaceChildren(...parts);
  }

  function renderErrors(list, errors) {
    const items = (Array.isArray(errors) ? errors : []).map(e => el('li', {class: 'error'}, [
      el('time', {text: fmtTime(e.at), title: e.at, datetime: e.at}),
      el('span', {class: 'message', text: e.message}),
    ]));
    if (!items.length) items.push(el('li', {class: 'none', text: 'no recent errors'}));
    list.replaceChildren(...items);
  }

  /** The numbers taken from the newest kept point. */
  function renderLatest(card, k) {
    const n = k ? k.t.length : 0;
    const sum = n ? REQUEST_SERIES.reduce((acc, s) => acc + (k.values[s.key][n - 1] || 0), 0) : null;
    setField(card, 'rps', fmtNumber(sum, 1));
    setField(card, 'rps-ok', n ? fmtNumber(k.values.ok[n - 1] || 0, 1) : NO_VALUE);
    const p99 = k ? k.values['total-p99'].filter(v => v != null).pop() : undefined;
    setField(card, 'p99-total', fmtNumber(p99, 2));
    const hitRate = k ? k.values['cache-hit-rate'].filter(v => v != null).pop() : undefined;
    setField(card, 'cache-hit-rate', hitRate == null ? NO_VALUE : `${fmtNumber(100 * hitRate, 1)} %`);
  }

  // ---------------------------------------------------------------- card skeletons

  function cardHeader(name) {
    return el('header', {class: 'card-head'}, [
      el('h2', {'data-field': 'name', text: name}),
      el('span', {class: 'badge', 'data-field': 'state'}),
      el('span', {class: 'badge', 'data-field': 'ready'}),
    ]);
  }

  function stat(label, name) {
    return el('div', {class: 'stat'}, [
      el('span', {class: 'value', 'data-field': name, text: NO_VALUE}),
      el('span', {class: 'label', text: label}),
    ]);
  }

  function errorsBlock() {
    return el('div', {class: 'errors'}, [el('h3', {text: 'Recent errors'}), el('ul', {'data-field': 'errors'})]);
  }

  function buildDeploymentCard(name) {
    const replicaTable = el('table', {class: 'replicas'}, [
      el('caption', {text: 'Replicas'}),
      el('thead', {}, [el('tr', {}, REPLICA_STATES.map(s => el('th', {scope: 'col', text: s})))]),
      el('tbody', {}, [el('tr', {}, REPLICA_STATES.map(s => el('td', {'data-field': `replicas-${s}`})))]),
    ]);
    return el('section', {class: 'deployment', 'data-deployment': name, 'data-type': 'single'}, [
      cardHeader(name),
      el('p', {class: 'meta'}, [
        'model ', el('span', {'data-field': 'model'}), ', version ', el('span', {'data-field': 'version'}),
        ', kind ', el('span', {'data-field': 'kind'}),
      ]),
      el('p', {class: 'batching', 'data-field': 'batching'}),
      el('p', {class: 'autoscaling', 'data-field': 'autoscaling'}),
      replicaTable,
      el('div', {class: 'stats'}, [
        stat('req/s', 'rps'), stat('ok req/s', 'rps-ok'), stat('p99 ms', 'p99-total'),
        stat('queued', 'queued'), stat('in flight', 'in-flight'), stat('failure ratio', 'failure-ratio'),
        stat('cache hits', 'cache-hit-rate'),
      ]),
      el('div', {class: 'charts'}, CHARTS.map(chartFigure)),
      errorsBlock(),
    ]);
  }

  function buildMultiplexCard(name) {
    const head = ['model', 'version', 'state', 'replicas', 'last error'];
    return el('section', {class: 'deployment multiplexed', 'data-deployment': name, 'data-type': 'multiplexed'}, [
      cardHeader(name),
      el('p', {class: 'meta'}, ['kind ', el('span', {'data-field': 'kind'}),
        ', replicas ', el('span', {'data-field': 'num-replicas'})]),
      el('div', {class: 'stats'}, [
        stat('models loaded', 'models-loaded'), stat('models matching', 'models-matching'),
        stat('ongoing requests', 'ongoing'),
      ]),
      el('table', {class: 'models'}, [
        el('thead', {}, [el('tr', {}, head.map(h => el('th', {scope: 'col', text: h})))]),
        el('tbody', {'data-field': 'models'}),
      ]),
      errorsBlock(),
    ]);
  }

  function chartFigure(chart) {
    const svg = svgEl('svg', {
      class: 'chart', 'data-chart': chart.id, viewBox: `0 0 ${GEOM.w} ${GEOM.h}`,
      role: 'img', 'aria-label': chart.title,
    });
    return el('figure', {class: 'chart-box'}, [
      el('figcaption', {text: chart.title}), svg, legend(chart),
    ]);
  }

  function legend(chart) {
    return el('div', {class: 'legend'}, chart.series.map(s => {
      const swatch = svgEl('svg', {class: 'swatch', viewBox: '0 0 18 8', width: '18', height: '8'});
      swatch.appendChild(chart.stacked
        ? svgEl('rect', {x: 0, y: 0, width: 18, height: 8, fill: s.color})
        : svgEl('line', {x1: 0, y1: 4, x2: 18, y2: 4, stroke: s.color, 'stroke-width': 2,
          'stroke-dasharray': s.dash ? '4 2' : null}));
      return el('span', {class: 'legend-item'}, [swatch, s.label]);
    }));
  }

  // ---------------------------------------------------------------- charts

  /** Redraws chart c from kept points k over the time range; one <path> per series. */
  function drawChart(svg, k, c, range, gapMs) {
    const t = k ? k.t : [];
    const columns = c.series.map(s => (k ? k.values[s.key] : []));
    const tops = c.stacked ? stack(columns, t.length) : columns;
    const yMax = niceCeil(Math.max(0, ...tops.flat().filter(v => v != null)));
    const x = v => GEOM.left + (v - range.from) / (range.to - range.from) * (GEOM.w - GEOM.left - GEOM.right);
    const y = v => GEOM.h - GEOM.bottom - v / yMax * (GEOM.h - GEOM.top - GEOM.bottom);
    svg.replaceChildren(...axes(yMax, y, range, c.unit));
    c.series.forEach((s, i) => {
      const d = c.stacked
        ? areaPath(t, i ? tops[i - 1] : t.map(() => 0), tops[i], x, y)
        : linePath(t, columns[i], x, y, gapMs);
      svg.appendChild(svgEl('path', {
        d, 'data-series': s.key, class: 'series',
        fill: c.stacked ? s.color : 'none', 'fill-opacity': c.stacked ? 0.85 : null,
        stroke: s.color, 'stroke-width': c.stacked ? 0.5 : 1.5,
        'stroke-dasharray': s.dash ? '4 3' : null,
      }));
    });
    if (!t.length) {
      svg.appendChild(svgEl('text', {x: GEOM.w / 2, y: GEOM.h / 2, class: 'no-data', text: 'no data yet'}));
    }
  }

  /** Running sums of the columns (null counts as 0). */
  function stack(columns, n) {
    let below = new Array(n).fill(0);
    return columns.map(col => {
      below = below.map((b, i) => b + (col[i] || 0));
      return below;
    });
  }

  /** A closed area between lower and upper. */
  function areaPath(t, lower, upper, x, y) {
    if (!t.length) return '';
    const top = t.map((tv, i) => `${i ? 'L' : 'M'}${fx(x(tv))},${fx(y(upper[i]))}`);
    const bottom = t.map((tv, i) => `L${fx(x(tv))},${fx(y(lower[i]))}`).reverse();
    return `${top.join('')}${bottom.join('')}Z`;
  }

  /** A line broken at null values and at time gaps longer than gapMs; lone points become dots. */
  function linePath(t, values, x, y, gapMs) {
    let d = '';
    let run = 0;
    t.forEach((tv, i) => {
      const v = values[i];
      if (v == null || (i && tv - t[i - 1] > gapMs)) {
        if (run === 1) d += 'h0';
        run = 0;
      }
      if (v == null) return;
      d += `${run ? 'L' : 'M'}${fx(x(tv))},${fx(y(v))}`;
      run++;
    });
    return run === 1 ? `${d}h0` : d;
  }

  function axes(yMax, y, range, unit) {
    const nodes = [];
    [0, yMax / 2, yMax].forEach(v => {
      nodes.push(svgEl('line', {class: 'grid', x1: GEOM.left, x2: GEOM.w - GEOM.right, y1: fx(y(v)), y2: fx(y(v))}));
      nodes.push(svgEl('text', {class: 'tick y', x: GEOM.left - 3, y: fx(y(v)) + 3, text: fmtAxis(v)}));
    });
    const span = range.to - range.from;
    [[GEOM.left, 'start', `-${fmtDuration(span)}`], [GEOM.w - GEOM.right, 'end', 'now']].forEach(([xv, anchor, label]) =>
      nodes.push(svgEl('text', {class: 'tick x', x: xv, y: GEOM.h - 4, 'text-anchor': anchor, text: label})));
    nodes.push(svgEl('text', {
      class: 'unit', x: 0, y: 0, transform: `translate(9 ${(GEOM.top + GEOM.h - GEOM.bottom) / 2}) rotate(-90)`, text: unit,
    }));
    return nodes;
  }

  function niceCeil(v) {
    if (!(v > 0)) return 1;
    const p = 10 ** Math.floor(Math.log10(v));
    return [1, 2, 2.5, 5, 10].map(m => m * p).find(m => m >= v);
  }

  // ---------------------------------------------------------------- small helpers

  function byId(id) {
    return document.getElementById(id);
  }

  function field(root, name) {
    return root.querySelector(`[data-field="${name}"]`);
  }

  function setField(root, name, value) {
    field(root, name).textContent = value == null ? NO_VALUE : String(value);
  }

  function setBadge(node, text, kind) {
    node.textContent = text;
    node.className = `badge ${kind}`;
  }

  function stateClass(state) {
    const s = String(state || '').toUpperCase();
    if (/^(RUNNING|READY|LOADED|HEALTHY)$/.test(s)) return 'good';
    if (/FAIL|ERROR|UNHEALTHY|DEAD/.test(s)) return 'bad';
    return 'warn';
  }

  /** Sets attributes (null skipped); "text" sets textContent. */
  function setAttrs(node, attrs) {
    Object.entries(attrs).forEach(([name, value]) => {
      if (value == null) return;
      if (name === 'text') node.textContent = String(value);
      else node.setAttribute(name, String(value));
    });
    return node;
  }

  function el(tag, attrs = {}, children = []) {
    const node = setAttrs(document.createElement(tag), attrs);
    node.append(...children);
    return node;
  }

  function svgEl(tag, attrs = {}) {
    return setAttrs(document.createElementNS(SVG_NS, tag), attrs);
  }

  function fx(v) {
    return Math.round(v * 10) / 10;
  }

  function fmtNumber(v, decimals) {
    return typeof v === 'number' && Number.isFinite(v) ? v.toFixed(decimals) : NO_VALUE;
  }

  function fmtInt(v) {
    return typeof v === 'number' && Number.isFinite(v) ? String(Math.round(v)) : NO_VALUE;
  }

  function fmtRatio(v) {
    return typeof v === 'number' && Number.isFinite(v) ? `${(v * 100).toFixed(1)} %` : NO_VALUE;
  }

  function fmtAxis(v) {
    if (v >= 1000) return `${+(v / 1000).toFixed(1)}k`;
    return String(+v.toFixed(v >= 10 ? 0 : 2));
  }

  function fmtBytes(v) {
    if (typeof v !== 'number' || !Number.isFinite(v)) return NO_VALUE;
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return `${i ? v.toFixed(1) : v} ${units[i]}`;
  }

  function fmtDuration(ms) {
    return ms >= 60000 ? `${+(ms / 60000).toFixed(1)} min` : `${Math.round(ms / 1000)} s`;
  }

  /** Local time of day for epoch ms or an ISO string; the raw text if it does not parse. */
  function fmtTime(at) {
    const date = new Date(at);
    return Number.isNaN(date.getTime()) ? String(at) : date.toLocaleTimeString();
  }

  // ---------------------------------------------------------------- start

  byId('auth').addEventListener('submit', onTokenSubmit);
  poll();
})();
