// ethereumjs's KECCAK256, MLOAD and MSTORE opcode handlers (@ethereumjs/evm 10.1.3, opcodes/functions.js)
// with their conversions between a 256-bit stack value and its 32 bytes done directly.
//
// Why: ethereumjs turns a stack value into bytes through a hex string (`bigIntToBytes`: `toString(16)`,
// then `hexToBytes`, whose RegExp check runs on every call) and bytes into a value through another one
// (`bytesToHex`, then `BigInt`). In a block of keccak chains those conversions in MSTORE and KECCAK256
// were a quarter of the CPU time. Here `wordBytes` writes the same 32 bytes from the value's hex digits
// with a table, and `wordValue` reads the same value from four 64-bit words; each handler is ethereumjs's
// own steps in its own order (the same stack pops and pushes, the same memory reads and writes, the same
// hash function), with only the conversion in place of ethereumjs's. A value the direct conversions do not
// cover (never on the EVM's stack: negative, 2^256 or above, not 32 bytes) goes to ethereumjs's own
// functions, which answer or throw as before. So every opcode leaves the same stack and memory, and the
// verdicts are unchanged. `useWordHandlers` checks each handler against ethereumjs's on thousands of values
// before it replaces any, and that the EVM takes its handlers from the table replaced;
// BALGEN_ETHEREUMJS_OWN_HANDLERS=1 (verify.mjs) keeps ethereumjs's handlers.
import { getOpcodesForHF, paramsEVM } from '@ethereumjs/evm'
import { bigIntToBytes, bytesToBigInt, bytesToHex, setLengthLeft } from '@ethereumjs/util'
import { keccak_256 } from '@noble/hashes/sha3.js'

import { DIGIT_VALUES } from './hex_digits.mjs'

const KECCAK256 = 0x20
const MLOAD = 0x51
const MSTORE = 0x52
const TWO_POW_256 = 1n << 256n

/** The 32 big-endian bytes of `value`: `setLengthLeft(bigIntToBytes(value), 32)`. */
export function wordBytes(value) {
  if (typeof value !== 'bigint' || value < 0n || value >= TWO_POW_256) return setLengthLeft(bigIntToBytes(value), 32)
  const hex = value.toString(16)
  const bytes = new Uint8Array(32)
  let digit = hex.length
  let at = 31
  for (; digit >= 2; digit -= 2) {
    bytes[at--] = (DIGIT_VALUES[hex.charCodeAt(digit - 2)] << 4) | DIGIT_VALUES[hex.charCodeAt(digit - 1)]
  }
  if (digit === 1) bytes[at] = DIGIT_VALUES[hex.charCodeAt(0)]
  return bytes
}

/** The value of 32 big-endian bytes: `bytesToBigInt(bytes)`, which is `BigInt(bytesToHex(bytes))` for 32 bytes. */
export function wordValue(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length !== 32) return bytesToBigInt(bytes)
  const view = new DataView(bytes.buffer, bytes.byteOffset, 32)
  return (
    (view.getBigUint64(0) << 192n) | (view.getBigUint64(8) << 128n) | (view.getBigUint64(16) << 64n) | view.getBigUint64(24)
  )
}

/**
 * KECCAK256: the hash of `length` bytes of memory at `offset`, pushed as a value. The memory is hashed in
 * place rather than from a copy: the hash functions (noble's, hash-wasm's) only read their input.
 */
function keccak256Handler(runState, common) {
  const [offset, length] = runState.stack.popN(2)
  const data = length === 0n ? new Uint8Array(0) : runState.memory.read(Number(offset), Number(length), true)
  runState.stack.push(wordValue((common.customCrypto.keccak256 ?? keccak_256)(data)))
}

/** MLOAD: the 32 bytes of memory at `offset`, pushed as a value. */
function mloadHandler(runState) {
  const offset = runState.stack.pop()
  runState.stack.push(wordValue(runState.memory.read(Number(offset), 32, true)))
}

/** MSTORE: `word`'s 32 bytes written to memory at `offset`. */
function mstoreHandler(runState) {
  const [offset, word] = runState.stack.popN(2)
  runState.memory.write(Number(offset), 32, wordBytes(word))
}

const REPLACEMENTS = new Map([
  [KECCAK256, keccak256Handler],
  [MLOAD, mloadHandler],
  [MSTORE, mstoreHandler],
])

/** Values that exercise every length of hex digits and both ends of the range, then pseudo-random ones. */
function testValues() {
  const values = [0n, 1n, 15n, 16n, 255n, 256n, TWO_POW_256 - 1n, 1n << 255n]
  for (let bits = 1; bits <= 256; bits++) values.push((1n << BigInt(bits)) - 1n, 1n << BigInt(bits - 1))
  let seed = 0x9e3779b97f4a7c15n
  for (let count = 0; count < 2000; count++) {
    seed = (seed * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n)
    const bits = BigInt(count % 257)
    const wide = (seed << 192n) ^ (seed << 128n) ^ (seed * 31n << 64n) ^ (seed * 17n)
    values.push(BigInt.asUintN(256, wide) >> (256n - bits))
  }
  return values
}

/** A stand-in for the interpreter's run state: a stack and a memory that record what a handler does. */
function recordingRunState(stackValues, memoryBytes) {
  const log = []
  return {
    log,
    stack: {
      pop: () => stackValues.pop(),
      popN: (count) => stackValues.splice(-count).reverse(),
      push: (value) => log.push(['push', value]),
    },
    memory: {
      read: (offset, size) => memoryBytes.slice(offset, offset + size),
      write: (offset, size, value) => log.push(['write', offset, size, bytesToHex(value)]),
    },
  }
}

/** Whether `replacement` does what `original` does (the same pushes and writes) for each of `cases`. */
function agree(original, replacement, cases, common) {
  for (const { stack, memory } of cases) {
    const before = recordingRunState([...stack], memory)
    const after = recordingRunState([...stack], memory)
    original(before, common)
    replacement(after, common)
    if (before.log.length !== after.log.length) return false
    for (let index = 0; index < before.log.length; index++) {
      const [a, b] = [before.log[index], after.log[index]]
      if (a.length !== b.length || a.some((item, at) => item !== b[at])) return false
    }
  }
  return true
}

/** Whether each replacement does what ethereumjs's handler does, on memory holding each test value's bytes. */
function handlersAgree(originals, keccak256) {
  const values = testValues()
  const memory = new Uint8Array(32 * values.length + 64)
  values.forEach((value, index) => memory.set(setLengthLeft(bigIntToBytes(value), 32), 32 + 32 * index))
  const common = { customCrypto: keccak256 === undefined ? {} : { keccak256 } }
  const at = (index) => BigInt(32 + 32 * index)
  const hashes = values.map((_, index) => ({ stack: [BigInt((index * 7) % 64), at(index)], memory }))
  hashes.push({ stack: [0n, 0n], memory }, { stack: [1n, 3n], memory }, { stack: [200n, 5n], memory })
  return (
    agree(originals.get(KECCAK256), keccak256Handler, hashes, common) &&
    agree(originals.get(MLOAD), mloadHandler, values.map((_, index) => ({ stack: [at(index) - BigInt(index % 9)], memory })), common) &&
    agree(originals.get(MSTORE), mstoreHandler, values.map((value, index) => ({ stack: [value, BigInt(index)], memory })), common)
  )
}

/**
 * Replace KECCAK256, MLOAD and MSTORE in ethereumjs's table of opcode handlers, which every EVM copies
 * when it is created, if each replacement does what ethereumjs's does (with `common`'s hash function;
 * not checked again when `checkedBefore`, as in one_pass_rlp.mjs) and an EVM of `common` takes the
 * handlers replaced. Returns what ran, for the version record.
 */
export async function useWordHandlers(common, checkedBefore = false) {
  const tableUrl = new URL('./opcodes/functions.js', import.meta.resolve('@ethereumjs/evm'))
  const { handlers } = await import(tableUrl)
  if (!(handlers instanceof Map) || [...REPLACEMENTS.keys()].some((opcode) => typeof handlers.get(opcode) !== 'function')) {
    return "ethereumjs's: its table of opcode handlers is not where @ethereumjs/evm 10.1.3 has it"
  }
  if (!checkedBefore && !handlersAgree(handlers, common.customCrypto.keccak256)) return "ethereumjs's: the direct conversions disagreed with them"
  const originals = new Map([...REPLACEMENTS.keys()].map((opcode) => [opcode, handlers.get(opcode)]))
  for (const [opcode, handler] of REPLACEMENTS) handlers.set(opcode, handler)
  const evmCommon = common.copy()
  evmCommon.updateParams(paramsEVM) // as the EVM's constructor does before it takes its handlers
  const inUse = getOpcodesForHF(evmCommon).handlers
  if ([...REPLACEMENTS].some(([opcode, handler]) => inUse.get(opcode) !== handler)) {
    for (const [opcode, handler] of originals) handlers.set(opcode, handler)
    return "ethereumjs's: the EVM does not take its handlers from the table replaced"
  }
  return 'direct word conversions (KECCAK256, MLOAD, MSTORE)'
}
