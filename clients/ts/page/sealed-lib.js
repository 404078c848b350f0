// The verify page's copy of @noble/curves and @noble/hashes (locked in package-lock.json with
// their integrity hashes), bundled by the locked esbuild into qahwa_page/static/sealed-lib.js
// (`make sealed-js`; committed, and tests/test_verify_page_sealed.py fails when it differs from
// a fresh build). The page's worker loads it only for qahwa-fair/3 transcripts and hands it to
// qahwa_page/static/sealed-verify.js's sealedVerifier(lib).
export { ristretto255, ristretto255_hasher } from "@noble/curves/ed25519.js";
export { pippenger } from "@noble/curves/abstract/curve.js";
export { sha512 } from "@noble/hashes/sha2.js";
