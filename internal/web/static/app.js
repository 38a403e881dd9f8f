// guardrun web: the pending requests, live over server-sent events, and
// the history, grants, rules and checkpoints read on demand. Every card
// is HTML that the server rendered (and escaped) with html/template;
// nothing here builds markup from a request's text.
'use strict';

(function () {
  const SETTLE_MS = 400; // a card must have been first this long before a key answers it
  const QUIET_MS = 300;  // and the keyboard quiet this long before the key

  // The tab's key arrives once, in the fragment of the login redirect;
  // it lives in this tab's sessionStorage, which no other origin reads.
  const m = /^#key=([0-9a-f]{64})$/.exec(location.hash);
  if (m) {
    sessionStorage.setItem('guardrun-key', m[1]);
    history.replaceState(null, '', '/');
  }
  const key = sessionStorage.getItem('guardrun-key');
  const $ = (sel) => document.querySelector(sel);
  const pending = $('#pending');
  const status = $('#status');
  if (!key) {
    $('#nokey').hidden = false;
    status.textContent = 'no key';
    return;
  }

  let firstID = '';
  let firstSince = 0;
  let lastKey = 0;

  function cards() { return Array.from(pending.querySelectorAll('article.card')); }

  function refresh() {
    const cs = cards();
    $('#count').textContent = String(cs.length);
    $('#empty').hidden = cs.length > 0;
    document.title = cs.length ? '(' + cs.length + ') guardrun' : 'guardrun';
    const id = cs.length ? cs[0].dataset.id : '';
    if (id !== firstID) {
      firstID = id;
      firstSince = performance.now();
      cs.forEach((c, i) => c.classList.toggle('first', i === 0));
    }
  }

  function addCard(ev) {
    if (document.getElementById('req-' + ev.id)) return;
    const t = document.createElement('template');
    t.innerHTML = ev.html;
    const card = t.content.firstElementChild;
    if (card) pending.appendChild(card);
  }

  function post(url, fields) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'X-Guardrun-Key': key, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    }).then(async (r) => {
      if (!r.ok) throw new Error((await r.text()).trim() || r.statusText);
    });
  }

  function answer(card, choice) {
    if (!card || card.classList.contains('sent')) return;
    const fields = { id: card.dataset.id, choice: choice };
    if (choice === 'deny') fields.note = card.querySelector('input.note').value;
    card.classList.add('sent');
    post('/answer', fields).catch((e) => {
      card.classList.remove('sent');
      const p = card.querySelector('.error');
      p.textContent = e.message;
      p.hidden = false;
    });
  }

  pending.addEventListener('click', (e) => {
    const b = e.target.closest('button[data-choice]');
    if (b && !b.disabled) answer(b.closest('article.card'), b.dataset.choice);
  });
  pending.addEventListener('keydown', (e) => {
    if (e.target.matches('input.note')) {
      if (e.key === 'Enter') { e.preventDefault(); answer(e.target.closest('article.card'), 'deny'); }
      if (e.key === 'Escape') e.target.blur();
      e.stopPropagation();
    }
  });

  document.addEventListener('keydown', (e) => {
    const now = performance.now();
    const quiet = now - lastKey >= QUIET_MS;
    lastKey = now;
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
    if (e.target.matches('input, textarea, select')) return;
    const card = cards()[0];
    if (!card || !quiet || now - firstSince < SETTLE_MS) return;
    switch (e.key) {
      case 'y': answer(card, 'once'); break;
      case 's': if (card.dataset.session === 'true') answer(card, 'session'); break;
      case 'a': if (card.dataset.always === 'true') answer(card, 'always'); break;
      case 'n': e.preventDefault(); card.querySelector('input.note').focus(); break;
      default: return;
    }
  });

  // Desktop notifications, for a request that arrives while the tab is
  // in the background.
  const notifyBtn = $('#notify');
  if ('Notification' in window && Notification.permission === 'default') {
    notifyBtn.hidden = false;
    notifyBtn.addEventListener('click', () => {
      Notification.requestPermission().then(() => { notifyBtn.hidden = Notification.permission !== 'default'; });
    });
  }
  function notify(ev) {
    if (!document.hidden || !('Notification' in window) || Notification.permission !== 'granted') return;
    const n = new Notification('guardrun: approval needed', { body: ev.summary, tag: ev.id });
    n.onclick = () => { window.focus(); n.close(); };
  }

  // The panels: history (with its filters), grants, rules, checkpoints.
  const filters = $('#filters');
  let panelTimer = 0;
  function loadPanels() {
    const q = new URLSearchParams(new FormData(filters));
    q.set('key', key);
    fetch('/panels?' + q.toString(), { credentials: 'same-origin' })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(r.statusText))))
      .then((p) => {
        for (const name of ['history', 'grants', 'rules', 'checkpoints']) {
          const t = document.createElement('template');
          t.innerHTML = p[name];
          $('#' + name).replaceChildren(t.content);
        }
      })
      .catch(() => {});
  }
  function loadPanelsSoon(ms) {
    clearTimeout(panelTimer);
    panelTimer = setTimeout(loadPanels, ms);
  }
  filters.addEventListener('input', () => loadPanelsSoon(250));
  filters.addEventListener('submit', (e) => { e.preventDefault(); loadPanels(); });
  document.querySelector('main').addEventListener('click', (e) => {
    const b = e.target.closest('button.revoke');
    if (!b) return;
    const fields = Object.assign({}, b.dataset);
    const url = fields.action;
    delete fields.action;
    b.disabled = true;
    post(url, fields).then(loadPanels, (err) => { b.disabled = false; b.title = err.message; });
  });

  // The pending list, live.
  function connect() {
    const es = new EventSource('/events?key=' + encodeURIComponent(key));
    es.addEventListener('open', () => { status.textContent = 'live'; status.className = 'status live'; });
    es.addEventListener('error', () => { status.textContent = 'reconnecting…'; status.className = 'status'; });
    es.addEventListener('snapshot', (e) => {
      pending.replaceChildren();
      for (const c of JSON.parse(e.data)) addCard(c);
      refresh();
    });
    es.addEventListener('pending', (e) => {
      const c = JSON.parse(e.data);
      addCard(c);
      refresh();
      notify(c);
    });
    es.addEventListener('resolved', (e) => {
      const r = JSON.parse(e.data);
      const card = document.getElementById('req-' + r.id);
      if (card) card.remove();
      refresh();
      // The asker writes its record once it has the answer (and again
      // when the command ends).
      loadPanelsSoon(700);
    });
  }
  refresh();
  loadPanels();
  connect();
})();
