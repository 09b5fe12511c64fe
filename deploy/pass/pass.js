// SPDX-License-Identifier: Apache-2.0
// The holder's pass (KH1:, interface.md 0.5): a P-256 key this page makes once (WebCrypto,
// non-extractable, kept in IndexedDB) signs the time every 5 seconds; the QR code (byte mode)
// carries the 4 ASCII bytes "KH1:" and one CBOR array:
//   form 1: [1, credential, slot, proof]  (an issuer's COSE_Sign1 whose cnf is this page's key)
//   form 2: [2, key_id, slot, proof]      (key_id: the first 8 bytes of the key's RFC 9679 thumbprint)
// proof = ES256 (r||s) over "KH1 proof" 0x00 form slot(4 bytes, big-endian) SHA-256(credential
// or key_id); slot = floor(Unix time / 5).
//
// Storage (a test may read it): IndexedDB database "kh1-pass", object store "state":
//   "holder"     {privateKey, publicKey (CryptoKeys), x, y (Uint8Array 32 each), created (ms)}
//   "credential" {bytes (the untagged COSE_Sign1), sub, iss, exp (or null), kept (ms)}
//
// The clock: the page reads the time only through now(). For tests only, and only when the page is
// served from 127.0.0.1, localhost or [::1], window.KH1PassTest = {
//   setClockOffset(ms) -> Promise of the slot then shown: now() = Date.now() + ms, redrawn at once,
//   shown() -> {slot, form} of the QR on screen }
// so that a test takes pictures at chosen slots without sleeping through them.
import * as cbor from './cbor.js';

const DB_NAME = 'kh1-pass';
const STORE = 'state';
const SLOT_MS = 5000;
const MAX_PASS_BYTES = 1024;  // what the door reads at most
const QR_LEVEL = 'L';         // a screen is clean: L keeps form 2 at version 5, form 1 near 9-10
const QUIET = 4;              // the quiet zone, in modules

const $ = (id) => document.getElementById(id);
const ascii = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));

let clockOffsetMs = 0;
function now() { return Date.now() + clockOffsetMs; }

const state = { key: null, credential: null, shown: { slot: null, form: null }, lastDraw: null };

// ---- small helpers -------------------------------------------------------------------------

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let i = 0;
  for (const p of parts) { out.set(p, i); i += p.length; }
  return out;
}

function equal(a, b) {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function b64url(bytes) {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

class LinkError extends Error {}

function unb64url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new LinkError('characters that are not base64url');
  if (text.length % 4 === 1) throw new LinkError('a cut-off base64url text');
  let bin;
  try { bin = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - text.length % 4) % 4)); }
  catch (e) { throw new LinkError('not base64url'); }
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}

function setStatus(text, kind) {
  const el = $('status');
  el.textContent = text;
  el.className = kind || '';
}

function note(id, text) {
  let el = document.getElementById(id);
  if (!el) {
    el = document.createElement('p');
    el.id = id;
    el.className = 'warning';
    $('warnings').appendChild(el);
  }
  el.textContent = text;
}

function when(unixSeconds) {
  return new Date(unixSeconds * 1000).toLocaleString();
}

// ---- IndexedDB -----------------------------------------------------------------------------

let db = null;

function openDB() {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open(DB_NAME, 1);
    r.onupgradeneeded = () => r.result.createObjectStore(STORE);
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
    r.onblocked = () => reject(new Error('the storage is held by another tab'));
  });
}

function dbGet(name) {
  return new Promise((resolve, reject) => {
    const r = db.transaction(STORE, 'readonly').objectStore(STORE).get(name);
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

function dbPut(name, value) {
  return new Promise((resolve, reject) => {
    const t = db.transaction(STORE, 'readwrite');
    t.objectStore(STORE).put(value, name);
    t.oncomplete = () => resolve();
    t.onerror = () => reject(t.error);
    t.onabort = () => reject(t.error || new Error('the write was aborted'));
  });
}

// Adds only when absent (two tabs opened at once keep one key): resolves to what is stored.
function dbAddOnce(name, value) {
  return new Promise((resolve, reject) => {
    const t = db.transaction(STORE, 'readwrite');
    const store = t.objectStore(STORE);
    let result = value;
    const g = store.get(name);
    g.onsuccess = () => {
      if (g.result !== undefined) result = g.result;
      else store.add(value, name);
    };
    t.oncomplete = () => resolve(result);
    t.onerror = () => reject(t.error);
    t.onabort = () => reject(t.error || new Error('the write was aborted'));
  });
}

// ---- the key -------------------------------------------------------------------------------

function coseKey(x, y) {
  // RFC 9679's order (deterministic CBOR): kty 1, crv -1, x -2, y -3.
  return cbor.encode(new Map([[1, 2], [-1, 1], [-2, x], [-3, y]]));
}

async function loadKey() {
  let record = await dbGet('holder');
  if (!record) {
    const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
    const raw = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));  // 04 || x || y
    if (raw.length !== 65 || raw[0] !== 4) throw new Error('the browser gave an unexpected public key');
    record = await dbAddOnce('holder', {
      privateKey: pair.privateKey, publicKey: pair.publicKey,
      x: raw.slice(1, 33), y: raw.slice(33, 65), created: Date.now(),
    });
  }
  const cose = coseKey(record.x, record.y);
  const keyId = (await sha256(cose)).slice(0, 8);
  return { ...record, cose, keyId, keyIdHash: await sha256(keyId) };
}

function pageAddress() {
  return location.href.split('#')[0];
}

function showKeyLink() {
  const a = $('key-link');
  a.href = pageAddress() + '#k=' + b64url(state.key.cose);
  a.textContent = a.href;
}

// ---- the credential ------------------------------------------------------------------------

const MAX_CREDENTIAL = MAX_PASS_BYTES - 4 - 1 - 1 - 3 - 5 - 66;  // KH1: [1, bstr, slot, proof]

// Reads a credential (COSE_Sign1 bytes) and says whether it is this page's: returns
// {bytes, sub, iss, exp} or throws LinkError with the reason, in words for the holder.
function readCredential(bytes) {
  if (bytes.length > 0 && bytes[0] === 0xd2) bytes = bytes.slice(1);  // COSE_Sign1's tag 18
  if (bytes.length > MAX_CREDENTIAL) throw new LinkError(`too long for a pass (${bytes.length} bytes, at most ${MAX_CREDENTIAL})`);
  let sign1, claims;
  try {
    sign1 = cbor.decode(bytes, { maxBytes: MAX_CREDENTIAL });
    if (!Array.isArray(sign1) || sign1.length !== 4 || !(sign1[0] instanceof Uint8Array) ||
        !(sign1[1] instanceof Map) || !(sign1[2] instanceof Uint8Array) || !(sign1[3] instanceof Uint8Array)) {
      throw new LinkError('not a signed credential (COSE_Sign1)');
    }
    if (sign1[0].length) {
      const protectedHeader = cbor.decode(sign1[0], { maxBytes: MAX_CREDENTIAL });
      if (!(protectedHeader instanceof Map)) throw new LinkError('a damaged credential header');
    }
    claims = cbor.decode(sign1[2], { maxBytes: MAX_CREDENTIAL });
    if (!(claims instanceof Map)) throw new LinkError('no claims in the credential');
  } catch (e) {
    if (e instanceof cbor.CborError) throw new LinkError('not readable CBOR: ' + e.message);
    throw e;
  }
  const cnf = claims.get(8);
  const key = cnf instanceof Map ? cnf.get(1) : undefined;
  if (!(key instanceof Map)) return { unbound: true };
  const x = key.get(-2), y = key.get(-3);
  const mine = key.get(1) === 2 && key.get(-1) === 1 && equal(x, state.key.x) &&
    (equal(y, state.key.y) || (typeof y === 'boolean' && y === ((state.key.y[31] & 1) === 1)));
  const exp = claims.get(4);
  if (exp !== undefined && typeof exp !== 'number') throw new LinkError('an expiry (exp) that is not a time');
  const sub = claims.get(2), iss = claims.get(1);
  return {
    mine, bytes, exp: exp === undefined ? null : exp,
    sub: typeof sub === 'string' ? sub : '(no subject)', iss: typeof iss === 'string' ? iss : '',
  };
}

function credentialActive() {
  const c = state.credential;
  return c && (c.exp === null || c.exp > now() / 1000);
}

async function takeCredentialLink(text) {
  const keeping = state.credential ? 'Kept your current pass (credential ' + state.credential.sub + ').' : 'Kept your key pass.';
  let c;
  try {
    c = readCredential(unb64url(text));
  } catch (e) {
    if (!(e instanceof LinkError)) throw e;
    setStatus('This credential link is damaged (' + e.message + '): ask for it again. ' + keeping, 'refused');
    return;
  }
  if (c.unbound) {
    setStatus('This credential is not bound to a phone (it has no cnf key): it is not for this page. ' + keeping, 'refused');
    return;
  }
  if (!c.mine) {
    setStatus('This credential is for another key, not this page\'s: ask the admin to mint it for your key link. ' + keeping, 'refused');
    return;
  }
  if (c.exp !== null && c.exp <= now() / 1000) {
    setStatus('This credential expired on ' + when(c.exp) + ': ask for a new one. ' + keeping, 'refused');
    return;
  }
  const record = { bytes: c.bytes, sub: c.sub, iss: c.iss, exp: c.exp, kept: Date.now() };
  await dbPut('credential', record);
  state.credential = { ...record, hash: await sha256(record.bytes) };
  setStatus('Credential ' + c.sub + ' kept' + (c.exp !== null ? ', valid until ' + when(c.exp) : '') + ': it is your pass now.', 'ok');
}

async function takeFragment() {
  const hash = location.hash;
  if (!hash || hash === '#') return;
  const clear = () => history.replaceState(null, '', pageAddress());
  if (hash.startsWith('#c=')) {
    await takeCredentialLink(hash.slice(3));
  } else if (hash.startsWith('#k=')) {
    let mine = false;
    try { mine = equal(unb64url(hash.slice(3)), state.key.cose); } catch (e) { /* not ours */ }
    setStatus(mine ? 'This is your key link: send it to your site\'s admin (it holds no secret).'
                   : 'This is another phone\'s key link: it is for the site\'s admin, not for this page.', mine ? '' : 'refused');
  } else {
    setStatus('This link is not one this page knows (it takes #c=...): kept your pass.', 'refused');
  }
  clear();
}

// ---- the pass ------------------------------------------------------------------------------

function drawQR(payload) {
  // qrcode-generator takes byte mode data as a string of char codes; its default stringToBytes
  // keeps each code's low 8 bits, so a char per byte (0x00-0xff) goes out as exactly that byte.
  let s = '';
  for (const b of payload) s += String.fromCharCode(b);
  const qr = qrcode(0, QR_LEVEL);
  qr.addData(s, 'Byte');
  qr.make();
  const n = qr.getModuleCount(), size = n + 2 * QUIET;
  let d = '';
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      if (!qr.isDark(r, c)) continue;
      let run = 1;
      while (c + run < n && qr.isDark(r, c + run)) run++;
      d += `M${c + QUIET} ${r + QUIET}h${run}v1h-${run}z`;
      c += run - 1;
    }
  }
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`);
  svg.setAttribute('shape-rendering', 'crispEdges');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'your door pass');
  const back = document.createElementNS(NS, 'rect');
  back.setAttribute('width', size);
  back.setAttribute('height', size);
  back.setAttribute('fill', '#fff');
  const path = document.createElementNS(NS, 'path');
  path.setAttribute('d', d);
  path.setAttribute('fill', '#000');
  svg.append(back, path);
  $('pass').replaceChildren(svg);
  state.lastDraw = { size };
  fitQR();
  return (n - 17) / 4;  // the QR version
}

// Whole pixels per module: every module the same size, as a camera likes it.
function fitQR() {
  const svg = $('pass').firstElementChild;
  if (!svg || !state.lastDraw) return;
  const room = Math.min($('pass').clientWidth || window.innerWidth, window.innerHeight * 0.75);
  const px = Math.max(1, Math.floor(room / state.lastDraw.size)) * state.lastDraw.size;
  svg.setAttribute('width', px);
  svg.setAttribute('height', px);
}

async function drawPass(slot) {
  const form = credentialActive() ? 1 : 2;
  const digest = form === 1 ? state.credential.hash : state.key.keyIdHash;
  const slotBytes = new Uint8Array(4);
  new DataView(slotBytes.buffer).setUint32(0, slot);
  const message = concat(ascii('KH1 proof'), Uint8Array.of(0, form), slotBytes, digest);
  const proof = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, state.key.privateKey, message));
  const body = form === 1 ? [1, state.credential.bytes, slot, proof] : [2, state.key.keyId, slot, proof];
  const payload = concat(ascii('KH1:'), cbor.encode(body));
  const version = drawQR(payload);
  const pass = $('pass');
  pass.dataset.slot = String(slot);
  pass.dataset.form = String(form);
  pass.dataset.bytes = String(payload.length);
  state.shown = { slot, form };
  $('form-line').textContent = form === 1
    ? 'Credential ' + state.credential.sub + (state.credential.exp !== null ? ', valid until ' + when(state.credential.exp) : '')
    : 'Key pass (the door must list your key)';
  pass.title = `${payload.length} bytes, QR version ${version}`;
  keepAwake();
}

let drawing = Promise.resolve();
let timer = null;

function tick() {
  clearTimeout(timer);
  drawing = drawing.then(async () => {
    const t = now(), slot = Math.floor(t / SLOT_MS);
    const form = credentialActive() ? 1 : 2;
    if (state.credential && form === 2 && !state.credential.expirySaid) {
      state.credential.expirySaid = true;
      setStatus('Your credential ' + state.credential.sub + ' expired on ' + when(state.credential.exp) + ': showing your key pass; ask for a new credential.', 'refused');
    }
    if (slot !== state.shown.slot || form !== state.shown.form) await drawPass(slot);
    const left = Math.max(1, Math.ceil(((slot + 1) * SLOT_MS - now()) / 1000));
    $('countdown').textContent = `Next code in ${left} s`;
    return state.shown.slot;
  }).catch((e) => {
    setStatus('The pass could not be drawn: ' + (e && e.message ? e.message : e), 'refused');
  });
  const t = now();
  const toNext = SLOT_MS - (t % SLOT_MS);
  timer = setTimeout(tick, Math.min(250, toNext + 5));
  return drawing;
}

// ---- the screen, the storage ---------------------------------------------------------------

let wakeLock = null;

async function keepAwake() {
  if (!('wakeLock' in navigator) || document.visibilityState !== 'visible') return;
  if (wakeLock && !wakeLock.released) return;
  try {
    wakeLock = await navigator.wakeLock.request('screen');
  } catch (e) {
    wakeLock = null;  // refused (battery saver, no user gesture yet): the screen may dim
  }
}

function isIOS() {
  return /iPhone|iPad|iPod/.test(navigator.userAgent) ||
    (navigator.platform === 'MacIntel' && navigator.maxTouchPoints > 1);
}

async function checkStorage() {
  if (isIOS() && navigator.standalone !== true) {
    note('ios-note', 'On an iPhone or iPad this key lasts only when the page is on the Home Screen: Share, Add to Home Screen, then open it from there (in Safari, the key is deleted after days unused).');
  }
  if (!navigator.storage || !navigator.storage.persist) {
    note('storage-note', 'This browser cannot promise to keep this page\'s key: if it is cleared, enrol again.');
    return;
  }
  let persisted = false;
  try {
    persisted = (await navigator.storage.persisted()) || (await navigator.storage.persist());
  } catch (e) { persisted = false; }
  let quota = null;
  try { quota = (await navigator.storage.estimate()).quota; } catch (e) { quota = null; }
  if (quota !== null && quota < 200 * 1024 * 1024) {
    note('storage-note', 'This looks like a private window: its key is deleted when the window closes. Open this page in a normal window (or install it) before you enrol.');
  } else if (!persisted) {
    note('storage-note', 'The browser did not promise to keep this key (its storage is not persistent): in a private window the key is deleted when the window closes, and clearing the browser\'s data deletes it. Use a normal window and install the page to the home screen; if the key is lost, enrol again.');
  }
}

// ---- start ---------------------------------------------------------------------------------

async function start() {
  if (!window.isSecureContext || !window.crypto || !crypto.subtle) {
    setStatus('This page needs WebCrypto, which works only over https: open it at its https:// address (plain http works only on 127.0.0.1 or localhost).', 'refused');
    return;
  }
  if (!window.indexedDB) {
    setStatus('This browser gives the page no storage for its key (a private window?): open it in a normal window.', 'refused');
    return;
  }
  if (typeof qrcode !== 'function' || qrcode.stringToBytes('\u0080\u00ff').join() !== '128,255') {
    setStatus('The QR code drawer (qrcode.js) is missing or changed: the page was not built with pass-page build.', 'refused');
    return;
  }
  try {
    db = await openDB();
    state.key = await loadKey();
  } catch (e) {
    setStatus('The key could not be made or kept (' + (e && e.message ? e.message : e) + '): a private window, or storage turned off?', 'refused');
    return;
  }
  showKeyLink();
  const stored = await dbGet('credential');
  if (stored) state.credential = { ...stored, hash: await sha256(stored.bytes) };
  setStatus('Show this code to the door\'s camera.', '');
  await takeFragment();
  window.addEventListener('hashchange', () => {
    takeFragment().catch((e) => setStatus('The link could not be kept (' + (e && e.message ? e.message : e) + '): kept your pass.', 'refused')).then(tick);
  });
  document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'visible') { keepAwake(); tick(); } });
  window.addEventListener('resize', fitQR);
  $('copy').addEventListener('click', async () => {
    try { await navigator.clipboard.writeText($('key-link').href); $('copy').textContent = 'Copied'; }
    catch (e) { $('copy').textContent = 'Copy failed: press on the link'; }
  });
  if (navigator.share) {
    $('share').hidden = false;
    $('share').addEventListener('click', () => navigator.share({ title: 'My door key link', url: $('key-link').href }).catch(() => {}));
  }
  if (['127.0.0.1', 'localhost', '[::1]'].includes(location.hostname)) {
    window.KH1PassTest = {
      setClockOffset(ms) { clockOffsetMs = Number(ms) || 0; return tick(); },
      shown() { return { ...state.shown }; },
    };
  }
  await tick();
  checkStorage();
  if ('serviceWorker' in navigator) {
    navigator.serviceWorker.register('sw.js', { scope: './' }).catch(() => {
      note('offline-note', 'This browser would not keep the page for offline use: it needs the network to open.');
    });
  }
}

start();
