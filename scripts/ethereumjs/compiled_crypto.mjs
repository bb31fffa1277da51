// keccak-256 in WebAssembly (the npm package `hash-wasm`) and secp256k1 public-key recovery in native code
// (the npm package `secp256k1`, whose prebuilt linux-x64 binary ships inside the package), handed to
// ethereumjs through its `common.customCrypto`, which every trie, state manager, block, transaction and the
// EVM's KECCAK256 and ECRECOVER take their hashing and recovery from. Why: a profile of verify.mjs on a 30M
// fixture spent a fifth of its CPU in @noble/hashes' keccak written in JavaScript and a tenth in
// @noble/curves' recovery of each transaction's sender. The native `keccak` binding used before cost four
// calls into native code and a Buffer per hash (about 2 µs for 64 bytes, still 28% of the CPU of a fixture
// of keccak chains); hash-wasm's one reused WebAssembly sponge takes about 1 µs.
// Both answer the same bytes (verify.mjs's version record says which ran, and a self-test below compares
// them with noble's on known inputs before any fixture is read); where one does not load or disagrees,
// ethereumjs keeps its own JavaScript function for that one.
import { createRequire } from 'node:module'
import path from 'node:path'

import { calculateSigRecovery, ecrecover as nobleEcrecover, setLengthLeft } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { createKeccak } from 'hash-wasm'

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

/**
 * keccak-256 over one reused hash-wasm sponge (its WebAssembly instance holds the state), or undefined
 * where WebAssembly does not load. The digest is copied out of the instance's memory, so each answer is
 * the caller's own.
 */
async function wasmKeccak256() {
  let hasher
  try {
    hasher = await createKeccak(256)
  } catch {
    return undefined
  }
  return function keccak256(data) {
    hasher.init()
    hasher.update(data)
    return hasher.digest('binary')
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

/** Whether `keccak256` gives noble's bytes on inputs around every block boundary of the sponge (136 bytes). */
function keccakAgreesWithNoble(keccak256) {
  for (const size of [0, 1, 31, 32, 64, 135, 136, 137, 271, 272, 273, 1000, 20_000]) {
    const data = Uint8Array.from({ length: size }, (_, index) => (index * 131 + size) & 0xff)
    // Twice, and once from a view into a larger buffer: the sponge is reused and must start afresh.
    const view = new Uint8Array(size + 7).subarray(3, 3 + size)
    view.set(data)
    const expected = keccak_256(data)
    for (const input of [data, data, view]) {
      if (Buffer.compare(keccak256(input), expected) !== 0) return false
    }
  }
  return true
}

/** Whether `ecrecover` gives noble's public key for a legacy EIP-155 signature (chain id 1, the EIP's example). */
function ecrecoverAgreesWithNoble(ecrecover) {
  const hash = Buffer.from('daf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53', 'hex')
  const r = Buffer.from('28ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276', 'hex')
  const s = Buffer.from('67cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83', 'hex')
  return Buffer.compare(ecrecover(hash, 37n, r, s, 1n), nobleEcrecover(hash, 37n, r, s, 1n)) === 0
}

/**
 * The `customCrypto` for ethereumjs's common (hash-wasm's keccak256 and native ecrecover, each where it
 * loads and agrees with noble's), and what it is, for the version record.
 */
export async function compiledCrypto() {
  const customCrypto = {}
  const keccak256 = await wasmKeccak256()
  const keccak = keccak256 === undefined ? 'JavaScript (@noble): WebAssembly did not load'
    : !keccakAgreesWithNoble(keccak256) ? "JavaScript (@noble): hash-wasm's disagreed with it"
    : 'hash-wasm (WebAssembly)'
  if (keccak === 'hash-wasm (WebAssembly)') customCrypto.keccak256 = keccak256
  const binding = nativeBinding('secp256k1')
  const ecrecover = binding === undefined ? undefined : nativeEcrecover(require('secp256k1/lib/index.js')(new binding.Secp256k1()))
  const recovery = ecrecover === undefined ? 'JavaScript (@noble): the native binary did not load'
    : !ecrecoverAgreesWithNoble(ecrecover) ? 'JavaScript (@noble): the native one disagreed with it'
    : 'secp256k1 (native)'
  if (recovery === 'secp256k1 (native)') customCrypto.ecrecover = ecrecover
  const compiled = customCrypto.keccak256 !== undefined && customCrypto.ecrecover !== undefined
  return { customCrypto, description: `${compiled ? 'compiled' : 'partly JavaScript'}: keccak-256 ${keccak}, sender recovery ${recovery}` }
}
