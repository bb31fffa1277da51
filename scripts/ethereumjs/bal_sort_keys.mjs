// `BlockLevelAccessList.raw()` (@ethereumjs/util 10.1.3, bal/index.js), the canonical sorted view that a
// BAL's RLP, hash, item count and structure check are built from, with each storage key's sort key computed
// once instead of at every comparison.
//
// Why: ethereumjs sorts an account's storage changes and reads with `compareStorageSlotKeys`, which parses
// both keys from hex (a RegExp check and a new array each) and pads each into a new 32-byte array at every
// comparison, and `runBlock` asks for `raw()` of a block's BAL three to four times (its hash, its item count
// against the gas limit, its structure). In a batch of the demo's largest 60M fixtures that comparator was
// 8.7% of the CPU time. Here each key becomes its value's 64 lower-case hex digits once (a string whose
// order is the order of the 32-byte big-endian values `compareStorageSlotKeys` compares), and the sort
// compares those strings. Both sorts are stable and agree on every pair (keys of equal value tie in both),
// so they give the same order; every other step is ethereumjs's own, in its order (the accounts by address,
// each slot's changes sorted in place by index, the same normalisations of slots, values, balances, nonces).
// A key `compareStorageSlotKeys` would not take as a plain hex string of at most 32 bytes sends the whole
// call to ethereumjs's own `raw()`, which answers or throws exactly as before. `useSortKeys` checks the
// replacement against ethereumjs's on generated lists before it replaces it;
// BALGEN_ETHEREUMJS_OWN_BAL_SORT=1 (verify.mjs) keeps ethereumjs's.
import { BlockLevelAccessList, bytesToHex, createBlockLevelAccessListFromJSON, padToEven } from '@ethereumjs/util'

const ZERO_KEY = '0'.repeat(64)

/** Whether `key` is `0x` and at most 64 hex digits: what `compareStorageSlotKeys` parses into at most 32 bytes. */
function isPlainKey(key) {
  if (typeof key !== 'string' || key.length > 66 || key.charCodeAt(0) !== 0x30 || key.charCodeAt(1) !== 0x78) return false
  for (let at = 2; at < key.length; at++) {
    const code = key.charCodeAt(at)
    const isDigit = code >= 0x30 && code <= 0x39
    const isLetter = (code >= 0x61 && code <= 0x66) || (code >= 0x41 && code <= 0x46)
    if (!isDigit && !isLetter) return false
  }
  return true
}

/** The 64 hex digits of a storage key's value (compared as `compareStorageSlotKeys` compares the key), or undefined. */
function sortKey(key) {
  if (key instanceof Uint8Array) return key.length <= 32 ? bytesToHex(key).slice(2).padStart(64, '0') : undefined
  if (!isPlainKey(key)) return undefined
  return key.length === 2 ? ZERO_KEY : key.slice(2).toLowerCase().padStart(64, '0')
}

/** `items` sorted by `keys` (one per item), stably: the order `compareStorageSlotKeys` gives. */
function sortedByKeys(items, keys) {
  const order = items.map((_, index) => index)
  order.sort((a, b) => (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : 0))
  return order.map((index) => items[index])
}

/** bal/index.js's `normalizeHexForRLP`: a slot without its leading zeros, zero as empty bytes. */
function normalizeHexForRLP(hex) {
  const stripped = hex.slice(2).replace(/^0+/, '')
  if (stripped === '') return Uint8Array.from([])
  return `0x${padToEven(stripped)}`
}

/** bal/index.js's `normalizeQuantityHexForRLP`: a quantity without its leading zeros, zero as `0x`. */
function normalizeQuantityHexForRLP(hex) {
  const stripped = hex.slice(2).replace(/^0+/, '')
  if (stripped === '') return '0x'
  return `0x${padToEven(stripped)}`
}

/** bal/index.js's `stripLeadingZeros` (the same object when there are none, else a copy without them). */
function stripLeadingZeros(bytes) {
  if (!(bytes instanceof Uint8Array)) {
    let first = bytes[0]
    while (bytes.length > 0 && first.toString() === '0') {
      bytes = bytes.slice(1)
      first = bytes[0]
    }
    return bytes
  }
  let start = 0
  while (start < bytes.length && bytes[start] === 0) start++
  return start === 0 ? bytes : bytes.slice(start)
}

/** Every account's storage keys as sort keys (changes, then reads normalised), or undefined if any is unusual. */
function accountSortKeys(data) {
  const changes = Object.entries(data.storageChanges)
  const changeKeys = changes.map(([slot]) => sortKey(slot))
  if (changeKeys.includes(undefined)) return undefined
  const reads = Array.from(data.storageReads)
  if (!reads.every(isPlainKey)) return undefined
  const normalizedReads = reads.map(normalizeHexForRLP)
  return { changes, changeKeys, normalizedReads, readKeys: normalizedReads.map(sortKey) }
}

/** `raw()` with sort keys computed once; ethereumjs's `raw()` for a list holding any key it alone should judge. */
function rawWithSortKeys(ownRaw) {
  return function raw() {
    const addresses = Object.keys(this.accesses).sort()
    const keyed = addresses.map((address) => accountSortKeys(this.accesses[address]))
    if (keyed.includes(undefined)) return ownRaw.call(this)
    return addresses.map((address, at) => {
      const data = this.accesses[address]
      const { changes, changeKeys, normalizedReads, readKeys } = keyed[at]
      const storageChanges = sortedByKeys(changes, changeKeys).map(([slot, slotChanges]) => [
        normalizeHexForRLP(slot),
        slotChanges.sort((a, b) => a[0] - b[0]).map(([index, value]) => [index, stripLeadingZeros(value)]),
      ])
      const storageReads = sortedByKeys(normalizedReads, readKeys)
      const balanceChanges = Array.from(data.balanceChanges.entries())
        .sort(([a], [b]) => a - b)
        .map(([index, balance]) => [index, normalizeQuantityHexForRLP(balance)])
      const nonceChanges = Array.from(data.nonceChanges.entries())
        .sort(([a], [b]) => a - b)
        .map(([index, nonce]) => [index, normalizeQuantityHexForRLP(nonce)])
      const codeChanges = [...data.codeChanges].sort(([a], [b]) => a - b)
      return [address, storageChanges, storageReads, balanceChanges, nonceChanges, codeChanges]
    })
  }
}

/** A deterministic stream of 32-bit numbers. */
function numbers(seed) {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    return state
  }
}

/** A hex spelling of a random value: odd and even lengths, upper and lower case, leading zeros, `0x`. */
function spelledHex(next, maxDigits) {
  const digits = next() % (maxDigits + 1)
  let hex = ''
  for (let at = 0; at < digits; at++) hex += '0123456789abcdefABCDEF'[next() % (next() % 3 === 0 ? 22 : 16)]
  if (next() % 4 === 0) hex = hex.replace(/^[0-9a-fA-F]/, '0')
  return `0x${hex}`
}

/** BAL JSON documents with many slots of few values (so equal values spelled apart tie), varied in every field. */
function generatedLists() {
  const next = numbers(0x7928)
  const lists = []
  for (let list = 0; list < 8; list++) {
    const accounts = []
    const count = 1 + (next() % 6)
    for (let account = 0; account < count; account++) {
      const small = next() % 2 === 0
      const slot = () => spelledHex(next, small ? 3 : 64)
      accounts.push({
        address: `0x${(next() % 0x10000).toString(16).padStart(40, '0')}`,
        storageChanges: Array.from({ length: next() % 40 }, () => ({
          slot: slot(),
          slotChanges: Array.from({ length: 1 + (next() % 3) }, () => ({
            blockAccessIndex: `0x${(next() % 8).toString(16)}`,
            postValue: `0x${'00'.repeat(next() % 3)}${(next() % 300).toString(16).padStart(2, '0')}`,
          })),
        })),
        storageReads: Array.from({ length: next() % 40 }, slot),
        balanceChanges: Array.from({ length: next() % 3 }, (_, index) => ({ blockAccessIndex: `0x${index}`, postBalance: spelledHex(next, 6) })),
        nonceChanges: Array.from({ length: next() % 3 }, (_, index) => ({ blockAccessIndex: `0x${index}`, postNonce: spelledHex(next, 4) })),
        codeChanges: next() % 4 === 0 ? [{ blockAccessIndex: '0x1', newCode: '0x6000' }] : [],
      })
    }
    lists.push(accounts)
  }
  return lists
}

/** An RLP-like item with its kinds kept (a string, bytes or a number), to compare two `raw()` results exactly. */
function shape(item) {
  if (Array.isArray(item)) return item.map(shape)
  if (item instanceof Uint8Array) return ['bytes', bytesToHex(item)]
  return [typeof item, String(item)]
}

/** Whether `replacement` gives what `ownRaw` gives, and leaves each list as it leaves it, on every generated list. */
function rawsAgree(ownRaw, replacement) {
  for (const json of generatedLists()) {
    const theirs = createBlockLevelAccessListFromJSON(json)
    const ours = createBlockLevelAccessListFromJSON(json)
    const expected = JSON.stringify(shape(ownRaw.call(theirs)))
    if (JSON.stringify(shape(replacement.call(ours))) !== expected) return false
    if (JSON.stringify(shape(ownRaw.call(ours))) !== expected) return false
  }
  return true
}

/**
 * Replace `BlockLevelAccessList.prototype.raw` with the sort-key version if it gives what ethereumjs's gives
 * on every generated list (not checked again when `checkedBefore`, as in one_pass_rlp.mjs). Returns what
 * runs, for verify.mjs's version record.
 */
export function useSortKeys(checkedBefore = false) {
  const ownRaw = BlockLevelAccessList.prototype.raw
  const replacement = rawWithSortKeys(ownRaw)
  if (!checkedBefore && !rawsAgree(ownRaw, replacement)) return "ethereumjs's: the sort keys disagreed with compareStorageSlotKeys"
  BlockLevelAccessList.prototype.raw = replacement
  return 'storage keys sorted by their 32-byte value, computed once'
}
