/** C2SP signed notes, checkpoints, cosignatures and tlog-proofs (c2sp.org/signed-note,
 * tlog-checkpoint, tlog-cosignature, tlog-proof), as far as a client checks them. */

import { ProtocolError, concat, fromBase64, utf8 } from "./bytes.js";
import { sha256, verifyEd25519 } from "./crypto.js";

export const ALG_ED25519 = 0x01;
export const ALG_COSIGNATURE_V1 = 0x04;
const SIG_PREFIX = "\u2014 ";

export interface Verifier {
  name: string;
  alg: number;
  publicKey: Uint8Array;
  keyId: number;
  vkey: string;
}

function checkName(name: string): void {
  if (!name || /[\s+]/u.test(name) || /[\x00-\x1f]/.test(name)) {
    throw new ProtocolError(`bad key name ${JSON.stringify(name)}: non-empty, with no spaces or '+'`);
  }
}

export async function keyId(name: string, alg: number, pub: Uint8Array): Promise<number> {
  checkName(name);
  const d = await sha256(concat(utf8(name + "\n"), new Uint8Array([alg]), pub));
  return ((d[0]! << 24) | (d[1]! << 16) | (d[2]! << 8) | d[3]!) >>> 0;
}

/** A verifier key from its text ``<name>+<hex key id>+<base64(type || key)>``. */
export async function parseVkey(vkey: string): Promise<Verifier> {
  const text = vkey.trim();
  const a = text.indexOf("+");
  const b = a < 0 ? -1 : text.indexOf("+", a + 1);
  if (a < 0 || b < 0) throw new ProtocolError(`a vkey is <name>+<key id>+<key>, not ${JSON.stringify(vkey)}`);
  const name = text.slice(0, a);
  const hexId = text.slice(a + 1, b);
  checkName(name);
  if (!/^[0-9a-fA-F]{8}$/.test(hexId)) throw new ProtocolError(`vkey ${name}: the key id is 8 hex digits`);
  const raw = fromBase64(text.slice(b + 1), `vkey ${name}'s key`);
  if (raw.length !== 33) throw new ProtocolError(`vkey ${name}: the key is a type byte and 32 bytes`);
  const alg = raw[0]!;
  if (alg !== ALG_ED25519 && alg !== ALG_COSIGNATURE_V1) {
    throw new ProtocolError(`vkey ${name}: unsupported signature type 0x${alg.toString(16).padStart(2, "0")}`);
  }
  const pub = raw.slice(1);
  const id = await keyId(name, alg, pub);
  if (id !== parseInt(hexId, 16)) throw new ProtocolError(`vkey ${name}: the key id ${hexId} does not match its key`);
  return { name, alg, publicKey: pub, keyId: id, vkey: text };
}

export interface NoteSignature {
  name: string;
  keyId: number;
  sig: Uint8Array;
}

/** The text and the signatures of a signed note (nothing verified). */
export function splitNote(msg: string): { text: string; sigs: NoteSignature[] } {
  if (/[\x00-\x09\x0b-\x1f]/.test(msg)) throw new ProtocolError("a note holds no control characters");
  const cut = msg.lastIndexOf("\n\n");
  if (cut < 0) throw new ProtocolError("a signed note has a text, a blank line and signature lines");
  const text = msg.slice(0, cut + 1);
  const block = msg.slice(cut + 2);
  if (!block.endsWith("\n")) throw new ProtocolError("a signed note ends with a newline");
  const sigs: NoteSignature[] = [];
  const lines = block.slice(0, -1).split("\n");
  if (lines.length > 100) throw new ProtocolError("a note with more than 100 signatures");
  for (const line of lines) {
    if (!line.startsWith(SIG_PREFIX)) throw new ProtocolError("a signature line starts with an em dash and a space");
    const rest = line.slice(SIG_PREFIX.length);
    const sp = rest.indexOf(" ");
    if (sp < 0 || rest.indexOf(" ", sp + 1) >= 0) throw new ProtocolError("a signature line is '— <name> <signature>'");
    const name = rest.slice(0, sp);
    checkName(name);
    const raw = fromBase64(rest.slice(sp + 1), `the signature by ${name}`);
    if (raw.length < 5) throw new ProtocolError(`the signature by ${name} is too short`);
    const id = ((raw[0]! << 24) | (raw[1]! << 16) | (raw[2]! << 8) | raw[3]!) >>> 0;
    sigs.push({ name, keyId: id, sig: raw.slice(4) });
  }
  return { text, sigs };
}

function cosignatureMessage(text: string, ts: bigint): Uint8Array {
  return utf8(`cosignature/v1\ntime ${ts}\n${text}`);
}

async function verifyNoteSig(v: Verifier, text: string, sig: Uint8Array): Promise<boolean> {
  if (v.alg === ALG_ED25519) return verifyEd25519(v.publicKey, sig, utf8(text));
  if (sig.length !== 72) return false;
  let ts = 0n;
  for (let i = 0; i < 8; i++) ts = (ts << 8n) | BigInt(sig[i]!);
  if (ts >= 1n << 63n) return false;
  return verifyEd25519(v.publicKey, sig.slice(8), cosignatureMessage(text, ts));
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  /** The checkpoint note, verbatim (evidence). */
  note: string;
  /** The names of the trusted witnesses whose cosignatures verified. */
  cosignedBy: string[];
}

/** A checkpoint note signed by ``log`` (whose name is its origin), with the cosignatures of
 * ``witnesses`` that it carries verified: every signature by a known key must verify, and at
 * least ``quorum`` witnesses must have cosigned. */
export async function openCheckpoint(
  msg: string,
  log: Verifier,
  witnesses: readonly Verifier[] = [],
  quorum = witnesses.length > 0 ? 1 : 0,
): Promise<Checkpoint> {
  const { text, sigs } = splitNote(msg);
  let logSigned = false;
  const cosigned = new Set<string>();
  for (const s of sigs) {
    const v = [log, ...witnesses].find((k) => k.name === s.name && k.keyId === s.keyId);
    if (v === undefined) continue;
    if (!(await verifyNoteSig(v, text, s.sig))) {
      throw new ProtocolError(
        v === log
          ? `the checkpoint's signature by the log key does not check out (${s.name}, ${s.keyId.toString(16).padStart(8, "0")})`
          : `the checkpoint's cosignature by ${s.name} (${s.keyId.toString(16).padStart(8, "0")}) does not check out`,
      );
    }
    if (v === log) logSigned = true;
    else cosigned.add(v.name);
  }
  if (!logSigned) throw new ProtocolError(`the checkpoint is not signed by the log key ${log.name}`);
  if (cosigned.size < quorum) {
    throw new ProtocolError(
      `the checkpoint is cosigned by ${cosigned.size} of the witnesses this client trusts, not the ${quorum} it needs`,
    );
  }
  const lines = text.slice(0, -1).split("\n");
  if (lines.length < 3) throw new ProtocolError("a checkpoint has an origin, a size and a root hash line");
  const [origin, size, root] = lines;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(size!)) throw new ProtocolError("a checkpoint's size is a decimal");
  if (origin !== log.name) {
    throw new ProtocolError(`the checkpoint's origin ${JSON.stringify(origin)} is not the log key's name ${log.name}`);
  }
  const rootBytes = fromBase64(root!, "the checkpoint's root hash");
  if (rootBytes.length !== 32) throw new ProtocolError("a checkpoint's root has 32 bytes");
  return { origin: origin!, size: Number(size), root: rootBytes, note: msg, cosignedBy: [...cosigned].sort() };
}

export interface TlogProof {
  index: number;
  hashes: Uint8Array[];
  checkpoint: string;
  extra: Uint8Array | null;
}

/** A c2sp.org/tlog-proof@v1 from its text (nothing verified yet). */
export function parseTlogProof(text: string): TlogProof {
  const cut = text.indexOf("\n\n");
  if (cut < 0) throw new ProtocolError("a tlog proof has its proof lines, a blank line and a checkpoint");
  const lines = text.slice(0, cut).split("\n");
  const checkpoint = text.slice(cut + 2);
  if (lines[0] !== "c2sp.org/tlog-proof@v1") throw new ProtocolError("a tlog proof starts with c2sp.org/tlog-proof@v1");
  let pos = 1;
  let extra: Uint8Array | null = null;
  if (lines[pos]?.startsWith("extra ")) {
    extra = fromBase64(lines[pos]!.slice(6), "the extra data");
    pos++;
  }
  const m = /^index (0|[1-9][0-9]{0,15})$/.exec(lines[pos] ?? "");
  if (m === null) throw new ProtocolError("a tlog proof has an 'index N' line");
  const hashes = lines.slice(pos + 1).map((l, i) => fromBase64(l, `proof hash ${i + 1}`));
  if (hashes.some((h) => h.length !== 32) || hashes.length > 63) {
    throw new ProtocolError("a proof line is a 32-byte hash, and there are at most 63");
  }
  return { index: Number(m[1]), hashes, checkpoint, extra };
}
