// SPDX-License-Identifier: Apache-2.0
// The pass page's CBOR (RFC 8949): definite lengths only, enough for the pass and a credential.
// encode(): integers (safe range), byte strings (Uint8Array), text, booleans, null, arrays, and
// maps as Map (written in the Map's order: give it the order you need, e.g. RFC 9679's).
// decode(): strict and bounded, for reading a credential's COSE_Sign1 and its claims: at most
// `maxBytes` of input, `maxDepth` levels and `maxItems` items; no indefinite lengths, no tags
// (the caller strips an outer COSE_Sign1 tag 18), integers and lengths in their shortest form,
// text valid UTF-8, map keys integers or text and never repeated, no trailing bytes. Anything
// else throws a CborError saying what.

export class CborError extends Error {}

function head(out, major, n) {
  if (!Number.isSafeInteger(n) || n < 0) throw new CborError('cannot encode ' + n);
  const m = major << 5;
  if (n < 24) out.push(m | n);
  else if (n < 0x100) out.push(m | 24, n);
  else if (n < 0x10000) out.push(m | 25, n >> 8, n & 0xff);
  else if (n < 0x100000000) out.push(m | 26, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
  else {
    const hi = Math.floor(n / 0x100000000), lo = n >>> 0;
    out.push(m | 27, (hi >>> 24) & 0xff, (hi >> 16) & 0xff, (hi >> 8) & 0xff, hi & 0xff,
             (lo >>> 24) & 0xff, (lo >> 16) & 0xff, (lo >> 8) & 0xff, lo & 0xff);
  }
}

function put(out, v) {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new CborError('only integers are encoded: ' + v);
    if (v >= 0) head(out, 0, v); else head(out, 1, -1 - v);
  } else if (v instanceof Uint8Array) {
    head(out, 2, v.length);
    for (const b of v) out.push(b);
  } else if (typeof v === 'string') {
    const b = new TextEncoder().encode(v);
    head(out, 3, b.length);
    for (const x of b) out.push(x);
  } else if (Array.isArray(v)) {
    head(out, 4, v.length);
    for (const x of v) put(out, x);
  } else if (v instanceof Map) {
    head(out, 5, v.size);
    for (const [k, x] of v) { put(out, k); put(out, x); }
  } else if (v === false) out.push(0xf4);
  else if (v === true) out.push(0xf5);
  else if (v === null) out.push(0xf6);
  else throw new CborError('cannot encode a ' + typeof v);
}

export function encode(value) {
  const out = [];
  put(out, value);
  return Uint8Array.from(out);
}

function half(bits) {
  const e = (bits >> 10) & 0x1f, f = bits & 0x3ff, s = bits & 0x8000 ? -1 : 1;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

export function decode(bytes, { maxBytes = 1024, maxDepth = 8, maxItems = 512 } = {}) {
  if (!(bytes instanceof Uint8Array)) throw new CborError('not bytes');
  if (bytes.length === 0) throw new CborError('empty');
  if (bytes.length > maxBytes) throw new CborError(`too long (${bytes.length} bytes, at most ${maxBytes})`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = new TextDecoder('utf-8', { fatal: true });
  let pos = 0, items = 0;

  function need(n) {
    if (pos + n > bytes.length) throw new CborError('truncated');
  }
  function arg(ai) {
    if (ai < 24) return ai;
    let n;
    if (ai === 24) { need(1); n = bytes[pos]; pos += 1; if (n < 24) throw new CborError('not shortest form'); }
    else if (ai === 25) { need(2); n = view.getUint16(pos); pos += 2; if (n < 0x100) throw new CborError('not shortest form'); }
    else if (ai === 26) { need(4); n = view.getUint32(pos); pos += 4; if (n < 0x10000) throw new CborError('not shortest form'); }
    else if (ai === 27) {
      need(8);
      const hi = view.getUint32(pos), lo = view.getUint32(pos + 4);
      pos += 8;
      if (hi === 0) throw new CborError('not shortest form');
      if (hi > 0x1fffff) throw new CborError('integer too large');
      n = hi * 0x100000000 + lo;
    } else if (ai === 31) throw new CborError('indefinite length');
    else throw new CborError('reserved additional information');
    return n;
  }
  function item(depth) {
    if (depth > maxDepth) throw new CborError('nested too deep');
    if (++items > maxItems) throw new CborError('too many items');
    need(1);
    const ib = bytes[pos++], major = ib >> 5, ai = ib & 0x1f;
    if (major === 7) {
      if (ai === 20) return false;
      if (ai === 21) return true;
      if (ai === 22) return null;
      if (ai === 25) { need(2); const v = half(view.getUint16(pos)); pos += 2; return v; }
      if (ai === 26) { need(4); const v = view.getFloat32(pos); pos += 4; return v; }
      if (ai === 27) { need(8); const v = view.getFloat64(pos); pos += 8; return v; }
      throw new CborError('unsupported simple value');
    }
    const n = arg(ai);
    switch (major) {
      case 0: return n;
      case 1: return -1 - n;
      case 2: { need(n); const b = bytes.slice(pos, pos + n); pos += n; return b; }
      case 3: {
        need(n);
        let s;
        try { s = text.decode(bytes.subarray(pos, pos + n)); } catch (e) { throw new CborError('text not UTF-8'); }
        pos += n;
        return s;
      }
      case 4: {
        if (n > bytes.length - pos) throw new CborError('truncated');
        const a = [];
        for (let i = 0; i < n; i++) a.push(item(depth + 1));
        return a;
      }
      case 5: {
        if (2 * n > bytes.length - pos) throw new CborError('truncated');
        const m = new Map();
        for (let i = 0; i < n; i++) {
          const k = item(depth + 1);
          if (typeof k !== 'string' && !Number.isSafeInteger(k)) throw new CborError('a map key that is not an integer or text');
          if (m.has(k)) throw new CborError('a repeated map key');
          m.set(k, item(depth + 1));
        }
        return m;
      }
      default: throw new CborError('a tag');
    }
  }
  const value = item(0);
  if (pos !== bytes.length) throw new CborError('trailing bytes');
  return value;
}
