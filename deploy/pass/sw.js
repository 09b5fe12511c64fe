// SPDX-License-Identifier: Apache-2.0
// The pass page's service worker: keeps the page's own files so that it opens and works offline
// once loaded. Same origin only; it fetches nothing else. `pass-page build` writes the build's
// hash into VERSION, so a new build replaces the old files (the browser sees a changed sw.js).
const VERSION = '@BUILD@';
const CACHE = 'kh1-pass-' + VERSION;
const FILES = ['./', 'index.html', 'pass.css', 'pass.js', 'cbor.js', 'qrcode.js',
  'manifest.webmanifest', 'icon.svg', 'icon-192.png', 'icon-512.png'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys()
    .then((names) => Promise.all(names.filter((n) => n.startsWith('kh1-pass-') && n !== CACHE).map((n) => caches.delete(n))))
    .then(() => self.clients.claim()));
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    const hit = await cache.match(request, { ignoreSearch: true }) ||
      (request.mode === 'navigate' ? await cache.match('index.html') : undefined);
    return hit || fetch(request);
  })());
});
