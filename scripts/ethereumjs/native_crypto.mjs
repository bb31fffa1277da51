// keccak-256 and secp256k1 public-key recovery in native code (the npm packages `keccak` and `secp256k1`,
// whose prebuilt linux-x64 binaries ship inside the packages), handed to ethereumjs through its
// `common.customCrypto`, which every trie, state manager, block, transaction and the EVM's KECCAK256
// and ECRECOVER take their hashing and recovery from. Why: a profile of verify.mjs on a 30M fixture
// spent a fifth of its CPU in @noble/hashes' keccak written in JavaScript and a tenth in @noble/curves'
// recovery of each transaction's sender; the native ones compute the same functions several times faster.
// Both answer the same bytes (verify.mjs's version record says which ran, and a self-test below compares
// them with noble's on known inputs before any fixture is read); where a binary does not load (another
// platform without a prebuilt one), ethereumjs keeps its own JavaScript functions.
import { createRequire } from 'node:module'
import path from 'node:path'

import { calculateSigRecovery, ecrecover as nobleEcrecover, setLengthLeft } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'

const require = createRequire(import.meta.url)

/** A package's native binding (node-gyp-build finds the prebuilt binary), or undefined where none loads. */
function nativeBinding(name) {
  try {
    const folder = path.dirname(require.resolve(`${name}/package.json`))
    return require('node-gyp-build')(folder)
  } catch {
    return undefined
  }
}

/** keccak-256 over one reused sponge of the native `keccak` binding (rate 1088, capacity 512, pad 0x01). */
function nativeKeccak256(KeccakState) {
  const state = new KeccakState()
  return function keccak256(data) {
    state.initialize(1088, 512)
    state.absorb(Buffer.from(data.buffer, data.byteOffset, data.byteLength))
    state.absorbLastFewBits(0x01)
    const digest = state.squeeze(32)
    return new Uint8Array(digest.buffer, digest.byteOffset, 32)
  }
}

/**
 * ethereumjs's `ecrecover(msgHash, v, r, s, chainId)` (the 64-byte public key, without its 0x04 prefix)
 * through libsecp256k1: the same recovery id rule and the same refusals (a recovery id other than 0
 * or 1, r or s out of range, no point) as util's, each an Error.
 */
function nativeEcrecover(secp256k1) {
  return function ecrecover(msgHash, v, r, s, chainId) {
    const recovery = calculateSigRecovery(v, chainId)
    if (recovery !== 0n && recovery !== 1n) throw new Error('Invalid signature v value')
    const signature = new Uint8Array(64)
    signature.set(setLengthLeft(r, 32), 0)
    signature.set(setLengthLeft(s, 32), 32)
    return secp256k1.ecdsaRecover(signature, Number(recovery), msgHash, false).slice(1)
  }
}

/** Known inputs on which the native functions must give noble's bytes before they are trusted. */
function agreesWithNoble(keccak256, ecrecover) {
  for (const size of [0, 1, 31, 32, 135, 136, 137, 1000]) {
    const data = Uint8Array.from({ length: size }, (_, index) => (index * 131 + size) & 0xff)
    if (Buffer.compare(keccak256(data), keccak_256(data)) !== 0) return false
  }
  // A legacy EIP-155 signature (chain id 1) from the EIP's own example.
  const hash = Buffer.from('daf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53', 'hex')
  const r = Buffer.from('28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276', 'hex')
  const s = Buffer.from('67cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83', 'hex')
  return Buffer.compare(ecrecover(hash, 37n, r, s, 1n), nobleEcrecover(hash, 37n, r, s, 1n)) === 0
}

/**
 * The `customCrypto` for ethereumjs's common (native keccak256 and ecrecover where they load and agree
 * with noble's), and what it is, for the version record.
 */
export function nativeCrypto() {
  const KeccakState = nativeBinding('keccak')
  const secp256k1Binding = nativeBinding('secp256k1')
  if (KeccakState === undefined || secp256k1Binding === undefined) {
    return { customCrypto: {}, description: 'JavaScript (@noble): a native binary did not load' }
  }
  const secp256k1 = require('secp256k1/lib/index.js')(new secp256k1Binding.Secp256k1())
  const keccak256 = nativeKeccak256(KeccakState)
  const ecrecover = nativeEcrecover(secp256k1)
  if (!agreesWithNoble(keccak256, ecrecover)) {
    return { customCrypto: {}, description: 'JavaScript (@noble): the native functions disagreed with it' }
  }
  return { customCrypto: { keccak256, ecrecover }, description: 'native (keccak, secp256k1)' }
}
