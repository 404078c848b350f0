/** The primitives: WebCrypto where the platform has them (SHA-256, HMAC-SHA512, the CSPRNG,
 * Ed25519 verification where supported), the audited @noble libraries otherwise — Ed25519
 * signing (not in every browser's WebCrypto), and the 65,536 sequential SHA-256 of a roll
 * chain (one WebCrypto call each would take seconds). */

import * as ed from "@noble/ed25519";
import { sha256 as nobleSha256, sha512 } from "@noble/hashes/sha2.js";
import { ProtocolError, fromBase64, toBase64 } from "./bytes.js";

ed.hashes.sha512 = sha512;

function subtle(): SubtleCrypto {
  const c = globalThis.crypto;
  if (c === undefined || c.subtle === undefined) {
    throw new Error("this platform has no WebCrypto (crypto.subtle): a secure context is needed");
  }
  return c.subtle;
}

/** ``n`` bytes from the platform's CSPRNG (crypto.getRandomValues). */
export function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  globalThis.crypto.getRandomValues(out);
  return out;
}

function buf(data: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(data.length);
  copy.set(data);
  return copy.buffer;
}

export async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle().digest("SHA-256", buf(data)));
}

/** Synchronous SHA-256 (@noble/hashes), for long sequential chains only. */
export function sha256Sync(data: Uint8Array): Uint8Array {
  return nobleSha256(data);
}

export async function hmacSha512(key: Uint8Array, msg: Uint8Array): Promise<Uint8Array> {
  return hmac(await hmacKey(key, "SHA-512"), msg);
}

/** An HMAC key for ``raw`` (imported once, used for many blocks: a match key's stream). */
export function hmacKey(raw: Uint8Array, hash: "SHA-256" | "SHA-512"): Promise<CryptoKey> {
  return subtle().importKey("raw", buf(raw), { name: "HMAC", hash }, false, ["sign"]);
}

export async function hmac(key: CryptoKey, msg: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle().sign("HMAC", key, buf(msg)));
}

/** A seat's Ed25519 key: made from 32 CSPRNG bytes, used for one seat of one match. */
export class SeatKey {
  readonly seed: Uint8Array;
  readonly publicKey: Uint8Array;
  readonly publicB64: string;

  constructor(seed?: Uint8Array) {
    this.seed = seed ?? randomBytes(32);
    if (this.seed.length !== 32) throw new ProtocolError("an Ed25519 seed has 32 bytes");
    this.publicKey = ed.getPublicKey(this.seed);
    this.publicB64 = toBase64(this.publicKey);
  }

  sign(message: Uint8Array): string {
    return toBase64(ed.sign(message, this.seed));
  }
}

let webEd: boolean | undefined;
const imported = new Map<string, CryptoKey>();

async function webVerify(pub: Uint8Array, sig: Uint8Array, msg: Uint8Array): Promise<boolean | undefined> {
  if (webEd === false) return undefined;
  try {
    const id = toBase64(pub);
    let key = imported.get(id);
    if (key === undefined) {
      key = await subtle().importKey("raw", buf(pub), { name: "Ed25519" }, false, ["verify"]);
      if (imported.size > 256) imported.clear();
      imported.set(id, key);
    }
    const ok = await subtle().verify({ name: "Ed25519" }, key, buf(sig), buf(msg));
    webEd = true;
    return ok;
  } catch {
    if (webEd === undefined) webEd = false;
    return undefined;
  }
}

/** Whether ``signatureB64`` is a valid Ed25519 signature of ``message`` by ``publicB64``. */
export async function verifyEd25519(
  publicKey: string | Uint8Array,
  signature: string | Uint8Array,
  message: Uint8Array,
): Promise<boolean> {
  let pub: Uint8Array;
  let sig: Uint8Array;
  try {
    pub = typeof publicKey === "string" ? fromBase64(publicKey, "a public key") : publicKey;
    sig = typeof signature === "string" ? fromBase64(signature, "a signature") : signature;
  } catch {
    return false;
  }
  if (pub.length !== 32 || sig.length !== 64) return false;
  const web = await webVerify(pub, sig, message);
  if (web !== undefined) return web;
  try {
    return ed.verify(sig, message, pub);
  } catch {
    return false;
  }
}
