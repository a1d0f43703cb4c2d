// The console page's own stylesheet and script, served from /console (CSP: 'self' only, nothing inline).

export const CONSOLE_STYLE = `
:root {
  --bg: #f4f6f9; --surface: #ffffff; --text: #1b2330; --muted: #5b6677; --line: #d9dfe7;
  --accent: #1f5fbf; --accent-strong: #174a96; --accent-soft: #e8f0fc;
  --ok: #1d6b3c; --ok-soft: #e6f4ea; --warn: #8a5300; --warn-soft: #fff4de; --err: #a32222; --err-soft: #fdecec;
  --radius: 10px; --shadow: 0 1px 2px rgba(16, 24, 40, .06), 0 1px 3px rgba(16, 24, 40, .1);
  color-scheme: light;
}
* { box-sizing: border-box; }
html { font-size: 16px; }
body { margin: 0; background: var(--bg); color: var(--text); line-height: 1.5;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif; }
code, pre, .code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: .9rem; }
code { background: #eef1f5; border-radius: 4px; padding: .05rem .3rem; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0 0 .5rem; }
h2 { font-size: 1rem; margin: 0 0 .5rem; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
[hidden] { display: none !important; }

.bar { background: #14233a; color: #fff; }
.bar-inner { max-width: 1120px; margin: 0 auto; padding: .85rem 1.5rem; display: flex; justify-content: space-between; align-items: center; gap: 1rem; }
.brand { font-weight: 650; font-size: 1.1rem; letter-spacing: .01em; }
.logo { display: inline-block; margin-right: .35rem; }
.provider { font-size: .95rem; color: #cdd7e6; }
.provider strong { color: #fff; background: rgba(255,255,255,.12); padding: .15rem .55rem; border-radius: 999px; margin-left: .25rem; }

.page { max-width: 1120px; margin: 0 auto; padding: 2rem 1.5rem 3rem; }
.intro p { margin: 0 0 1.5rem; color: var(--muted); max-width: 60rem; }

.search { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); padding: 1.25rem 1.5rem; margin-bottom: 1.25rem; }
.search label { display: block; font-weight: 600; margin-bottom: .4rem; }
.row { display: flex; gap: .75rem; }
input[type=tel] { flex: 1; min-width: 0; font: inherit; font-size: 1.15rem; padding: .65rem .85rem; border: 1px solid #b8c2d0; border-radius: 8px; background: #fff; color: var(--text); }
input[type=tel]:focus { outline: 3px solid #9cc0f5; outline-offset: 1px; border-color: var(--accent); }
button { font: inherit; font-weight: 600; font-size: 1.05rem; padding: .65rem 1.6rem; border: 0; border-radius: 8px; background: var(--accent); color: #fff; cursor: pointer; }
button:hover { background: var(--accent-strong); }
button:focus-visible { outline: 3px solid #9cc0f5; outline-offset: 2px; }
button:disabled { background: #8a9ab3; cursor: not-allowed; }
.hint { color: var(--muted); font-size: .9rem; margin: .5rem 0 0; }

.request { margin-bottom: 1.25rem; }
.code { background: #0f1b2d; color: #e3ebf7; border-radius: 8px; padding: .75rem 1rem; margin: 0; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }

.message { border-radius: var(--radius); padding: .9rem 1.1rem; margin-bottom: 1.25rem; border: 1px solid var(--line); background: var(--surface); font-size: 1.02rem; }
.message strong { display: block; margin-bottom: .15rem; }
.message-info { background: var(--accent-soft); border-color: #bcd2f3; }
.message-ok { background: var(--ok-soft); border-color: #b7dfc4; color: var(--ok); }
.message-warn { background: var(--warn-soft); border-color: #f1d39b; color: var(--warn); }
.message-error { background: var(--err-soft); border-color: #f2b8b8; color: var(--err); }

.cards:empty { display: none; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 1rem; margin-bottom: 1.5rem; }
.card { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); padding: 1.1rem 1.25rem; display: flex; flex-direction: column; gap: .6rem; }
.card-head { display: flex; justify-content: space-between; align-items: flex-start; gap: .75rem; }
.card h3 { margin: 0; font-size: 1.2rem; line-height: 1.3; }
.badge { flex: none; font-size: .78rem; font-weight: 600; text-transform: uppercase; letter-spacing: .05em; padding: .2rem .55rem; border-radius: 999px; background: var(--accent-soft); color: var(--accent-strong); }
.badge-organization { background: #f1e9fb; color: #5b2d91; }
.card dl { margin: 0; display: grid; grid-template-columns: 6.5rem 1fr; gap: .3rem .75rem; }
.card dt { color: var(--muted); font-size: .9rem; }
.card dd { margin: 0; }
.phones { list-style: none; margin: 0; padding: 0; }
.phones li + li { margin-top: .35rem; }
.number { display: block; font-weight: 600; white-space: nowrap; }
.kind { display: block; font-size: .85rem; color: var(--muted); }
.source { font-size: .85rem; color: var(--muted); border-top: 1px solid var(--line); padding-top: .5rem; margin-top: auto; }

.raw { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); padding: .75rem 1rem; }
.raw summary { cursor: pointer; font-weight: 600; }
.raw summary:focus-visible { outline: 3px solid #9cc0f5; outline-offset: 2px; border-radius: 4px; }
.raw pre { margin-top: .75rem; max-height: 28rem; overflow: auto; }

.narrow { display: none; }
.refusal { display: flex; justify-content: center; }
.refusal-card { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow); padding: 2rem 1.5rem; max-width: 32rem; text-align: center; margin-top: 1rem; }
.refusal-card h1 { font-size: 1.45rem; }
.refusal-card p { color: var(--muted); font-size: 1.05rem; margin-bottom: 0; }
.device-icon { width: 56px; height: 76px; margin: 0 auto 1.25rem; border: 4px solid var(--accent); border-radius: 10px; position: relative; }
.device-icon::after { content: ""; position: absolute; left: 50%; bottom: 5px; width: 8px; height: 8px; margin-left: -4px; border-radius: 50%; background: var(--accent); }

/* The tool needs at least 768 CSS px; narrower windows get a message instead. */
@media (max-width: 767.98px) {
  .tool { display: none; }
  .narrow { display: block; background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); padding: 1.5rem; }
  .page { padding: 1.25rem 1rem; }
  .bar-inner { padding: .75rem 1rem; flex-wrap: wrap; }
}
`;

export const CONSOLE_SCRIPT = `'use strict';
(() => {
  const form = document.getElementById('search-form');
  const input = document.getElementById('what');
  const button = document.getElementById('search-button');
  const requestLine = document.getElementById('request-line');
  const status = document.getElementById('status');
  const results = document.getElementById('results');
  const raw = document.getElementById('raw');
  const rawJson = document.getElementById('raw-json');
  const quota = document.getElementById('quota');
  const main = document.querySelector('main');
  const resultsPath = (main.dataset.resultsPath || 'results').split('.');
  const examples = [main.dataset.exampleInternational, main.dataset.exampleNational].filter(Boolean);
  // One clock for every countdown on the page: the quota line and the rate-limit message always agree.
  let quotaState = null;

  // Where the search stands: RateLimit names the policy nearest to refusal ("console-address";r=7;t=42) and
  // RateLimit-Policy gives its quota (q=10); a gateway set to the older fields sends RateLimit-Limit and the rest.
  function rateLimitOf(headers) {
    const current = /^"([^"]*)";r=([0-9]+);t=([0-9]+)/.exec(headers.get('ratelimit') || '');
    if (current) {
      const policy = (headers.get('ratelimit-policy') || '').split(',').map((p) => p.trim())
        .find((p) => p.startsWith('"' + current[1] + '";'));
      const quota = policy && /;q=([0-9]+)/.exec(policy);
      if (quota) return { limit: quota[1], remaining: current[2], reset: Number(current[3]) };
    }
    const limit = headers.get('ratelimit-limit');
    const remaining = headers.get('ratelimit-remaining');
    const reset = parseInt(headers.get('ratelimit-reset') || '', 10);
    return limit && remaining ? { limit, remaining, reset: Number.isFinite(reset) ? reset : 0 } : null;
  }
  let blockedUntil = 0;
  let ticker = null;

  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };
  const read = (value, path) => path.reduce((node, key) => (node && typeof node === 'object' ? node[key] : undefined), value);

  function show(kind, title, detail) {
    status.hidden = false;
    status.className = 'message message-' + kind;
    status.replaceChildren(el('strong', '', title));
    if (detail) status.append(document.createTextNode(detail));
  }

  function card(entry) {
    const article = el('article', 'card');
    const head = el('div', 'card-head');
    const person = entry.person || {};
    const name = entry.displayName || (entry.organization && entry.organization.name) || [person.givenName, person.familyName].filter(Boolean).join(' ') || 'Unnamed entry';
    head.append(el('h3', '', name));
    const type = entry.type === 'organization' ? 'Organisation' : entry.type === 'person' ? 'Person' : entry.type || 'Entry';
    head.append(el('span', 'badge badge-' + (entry.type || 'entry'), type));
    article.append(head);

    const dl = el('dl');
    const address = entry.address;
    if (address && typeof address === 'object') {
      const lines = [address.street, [address.postalCode, address.locality].filter(Boolean).join(' '), address.country].filter(Boolean);
      const dd = el('dd');
      lines.forEach((line, i) => { if (i) dd.append(el('br')); dd.append(document.createTextNode(line)); });
      dl.append(el('dt', '', 'Address'), dd);
    }
    const phones = Array.isArray(entry.phones) ? entry.phones : [];
    if (phones.length) {
      const list = el('ul', 'phones');
      for (const phone of phones) {
        const li = el('li');
        li.append(el('span', 'number', phone.display || phone.e164 || ''));
        const extra = [phone.display && phone.e164, phone.kind].filter(Boolean).join(' · ');
        if (extra) li.append(el('span', 'kind', extra));
        list.append(li);
      }
      const dd = el('dd');
      dd.append(list);
      dl.append(el('dt', '', phones.length > 1 ? 'Numbers' : 'Number'), dd);
    }
    article.append(dl);
    if (entry.provider && (entry.provider.name || entry.provider.id)) {
      article.append(el('p', 'source', 'Source: ' + (entry.provider.name || entry.provider.id)));
    }
    return article;
  }

  const secondsUntil = (at) => Math.max(0, Math.ceil((at - Date.now()) / 1000));

  function render() {
    if (blockedUntil) {
      const left = secondsUntil(blockedUntil);
      if (left > 0) {
        show('warn', 'Too many requests.', ' Try again in ' + left + ' s.');
      } else {
        blockedUntil = 0;
        button.disabled = false;
        show('info', 'You can search again.', '');
      }
    }
    if (blockedUntil) {
      quota.textContent = 'No searches left (try again in ' + secondsUntil(blockedUntil) + ' s).';
    } else if (quotaState) {
      const left = secondsUntil(quotaState.resetAt);
      quota.textContent = left > 0
        ? 'Searches left: ' + quotaState.remaining + ' of ' + quotaState.limit + ' (window resets in ' + left + ' s).'
        : 'Searches left: ' + quotaState.limit + ' of ' + quotaState.limit + '.';
    } else {
      quota.textContent = '';
    }
    if (!blockedUntil && !(quotaState && secondsUntil(quotaState.resetAt) > 0)) {
      clearInterval(ticker);
      ticker = null;
    }
  }

  function tick() {
    render();
    if (ticker === null) ticker = setInterval(render, 1000);
  }

  async function search(what) {
    const query = 'what=' + encodeURIComponent(what);
    requestLine.textContent = 'GET /v2/contacts/search?' + query;
    results.replaceChildren();
    raw.hidden = true;
    button.disabled = true;
    show('info', 'Searching…', '');
    let response;
    let text = '';
    try {
      response = await fetch('/console/v2/contacts/search?' + query, { headers: { accept: 'application/json' } });
      text = await response.text();
    } catch (err) {
      button.disabled = false;
      show('error', 'The gateway could not be reached.', ' Check your connection and try again.');
      return;
    }
    button.disabled = false;
    const rate = rateLimitOf(response.headers);
    quotaState = rate ? { limit: rate.limit, remaining: rate.remaining, resetAt: Date.now() + rate.reset * 1000 } : null;
    tick();
    let body = null;
    try { body = JSON.parse(text); } catch (err) { body = null; }
    rawJson.textContent = body === null ? text : JSON.stringify(body, null, 2);
    raw.hidden = text.length === 0;
    const detail = body && typeof body.detail === 'string' ? ' ' + body.detail : '';
    const id = body && body.requestId ? ' (request id ' + body.requestId + ')' : '';

    if (response.ok) {
      const list = read(body, resultsPath);
      const entries = Array.isArray(list) ? list : [];
      if (entries.length === 0) {
        show('info', 'No listing.', ' No entry of this directory was found for ' + what + '.');
        return;
      }
      show('ok', entries.length === 1 ? '1 entry found.' : entries.length + ' entries found.', '');
      results.replaceChildren(...entries.map(card));
      return;
    }
    if (response.status === 429) {
      const seconds = parseInt(response.headers.get('retry-after') || '', 10);
      blockedUntil = Date.now() + (Number.isFinite(seconds) && seconds > 0 ? seconds : 60) * 1000;
      button.disabled = true;
      tick();
      return;
    }
    if (response.status === 400) {
      show('error', 'That is not a possible telephone number.', ' Try a spelling like ' + examples.join(' or ') + '.');
      return;
    }
    if (response.status === 403) {
      show('error', 'Available on tablets and larger devices.', detail);
      return;
    }
    if (response.status === 502 || response.status === 503 || response.status === 504) {
      show('error', 'The directory service is not answering right now.', ' Please try again in a moment.' + id);
      return;
    }
    show('error', 'Something went wrong (' + response.status + ').', detail + id);
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (button.disabled) return;
    const what = input.value.trim();
    if (!what) {
      show('error', 'Type a telephone number first.', '');
      input.focus();
      return;
    }
    search(what);
  });
})();
`;
