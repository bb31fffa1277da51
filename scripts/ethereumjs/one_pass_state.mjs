// The state after a setup block applied from its BAL (verify.mjs --setup-from-bal), built in one pass in
// place of @ethereumjs/statemanager 10.1.3's `consumeBAL` followed by `getStateRoot`.
//
// Why: ethereumjs's trie encodes and hashes every node on a key's path at every write, so a setup block
// that deploys 19,000 contracts hashes each upper node of the account trie thousands of times; consumeBAL
// and the state root were a quarter of ethereumjs's CPU time over the demo's fixtures. Here balgen keeps
// the fixture's state beside ethereumjs's (`pre`, then each setup BAL's final values applied as consumeBAL
// applies them), and after each setup block builds every changed storage trie and the account trie bottom
// up from their keys sorted by keccak-256, each node RLP-encoded and hashed once (a node under 32 bytes
// inlined in its parent, the root always hashed, as the trie spec says). The nodes go into the state
// trie's own database as ethereumjs's trie writes them (under their hash, through the same CheckpointDB,
// the code under "c" + its hash as `putCode` writes it), and `setStateRoot` points the state manager at
// the root, so the block that follows is executed by ethereumjs reading its own database as usual; its
// caches are given the values just written, as consumeBAL's flush leaves them (`warmCaches` says why).
//
// Why the verdicts are unchanged: each account is computed as consumeBAL computes it (an account without
// changes skipped; the last balance, nonce and code change; balance and nonce kept from the state where
// the BAL has none; an account the BAL leaves empty without storage changes deleted, and otherwise written,
// even empty; each slot's last value written, a zero value deleting it, the other slots kept), and the root
// is compared with the header's as before. The root commits to every key and value, so a build whose root
// is the header's holds exactly the state the header commits to. The cases this module does not take on
// are handed whole to consumeBAL, on ethereumjs's state untouched by this module: an account the BAL
// leaves empty (consumeBAL deletes it: a contract created and destroyed in the setup), an address listed
// twice, a value ethereumjs's conversions or `Account` would refuse, a slot without changes, a `pre` with
// an address spelled twice, any block of the fixture executed before (an invalid setup block). `useOnePassState`
// checks the build against consumeBAL on a small state (accounts with and without code and storage, an
// emptied slot, a created account) and the trie builder against ethereumjs's trie on short keys (inlined
// nodes) before verify.mjs uses it; BALGEN_ETHEREUMJS_OWN_SETUP_STATE=1 (verify.mjs) keeps consumeBAL.
import { RLP } from '@ethereumjs/rlp'
import { MerklePatriciaTrie } from '@ethereumjs/mpt'
import { CODEHASH_PREFIX } from '@ethereumjs/statemanager'
import {
  Account,
  Address,
  KECCAK256_NULL,
  KECCAK256_RLP,
  bigIntToUnpaddedBytes,
  bytesToHex,
  concatBytes,
  createAddressFromString,
  equalsBytes,
  hexToBigInt,
  hexToBytes,
  setLengthLeft,
  unpadBytes,
} from '@ethereumjs/util'

import { genesisState } from './genesis_state.mjs'

const EMPTY_BYTES = new Uint8Array(0)

/** Thrown inside a computation this module leaves to consumeBAL; caught before it leaves the module. */
const LEFT_TO_CONSUME_BAL = Symbol('left to consumeBAL')

/** The hex-prefix encoding (yellow paper appendix C) of a path of nibbles given as hex digits. */
function hexPrefix(nibbles, leaf) {
  const flag = leaf ? 2 : 0
  return hexToBytes(nibbles.length % 2 === 0 ? `0x${flag}0${nibbles}` : `0x${flag + 1}${nibbles}`)
}

/**
 * The trie of `entries` ([key as lower-case hex digits, all of one length, distinct; value bytes], sorted by
 * key) built bottom up: each node's raw form and RLP encoding made once; a node of 32 bytes or more, and
 * the root, hashed once and handed to `put(hash, encoding)`; a smaller one inlined in its parent. The root.
 */
export function buildTrie(entries, keccak256, put) {
  if (entries.length === 0) return KECCAK256_RLP
  const reference = (raw) => {
    const encoded = RLP.encode(raw)
    if (encoded.length < 32) return raw
    const hash = keccak256(encoded)
    put(hash, encoded)
    return hash
  }
  const branch = (low, high, depth) => {
    const children = new Array(17).fill(EMPTY_BYTES)
    for (let start = low; start < high;) {
      const digit = entries[start][0][depth]
      let end = start + 1
      while (end < high && entries[end][0][depth] === digit) end++
      children[Number.parseInt(digit, 16)] = reference(subtrie(start, end, depth + 1))
      start = end
    }
    return children
  }
  const subtrie = (low, high, depth) => {
    const first = entries[low][0]
    if (high - low === 1) return [hexPrefix(first.slice(depth), true), entries[low][1]]
    const last = entries[high - 1][0]
    let shared = depth
    while (first[shared] === last[shared]) shared++
    if (shared === depth) return branch(low, high, depth)
    return [hexPrefix(first.slice(depth, shared), false), reference(branch(low, high, shared))]
  }
  const encoded = RLP.encode(subtrie(0, entries.length, 0))
  const root = keccak256(encoded)
  put(root, encoded)
  return root
}

/** `bytes` as lower-case hex digits without 0x. */
function digits(bytes) {
  return bytesToHex(bytes).slice(2)
}

/**
 * A fixture's state as the setup blocks leave it, beside ethereumjs's: per address (0x and 40 lower-case
 * digits) its nonce, balance, code hash, storage (the slot's 64 digits -> its value without leading zeros,
 * never zero) and storage root where known.
 */
export class SetupState {
  constructor(keccak256) {
    this.keccak256 = keccak256
    this.accounts = new Map()
  }

  /** The state of a fixture's `pre` as verify.mjs's genesis writes it, or undefined for an address spelled twice. */
  static fromPre(pre, keccak256) {
    const state = new SetupState(keccak256)
    for (const [address, account] of Object.entries(pre)) {
      const key = bytesToHex(createAddressFromString(address).bytes)
      if (state.accounts.has(key)) return undefined
      const code = account.code
      const storage = new Map()
      for (const [slot, value] of Object.entries(account.storage ?? {})) {
        const bytes = bigIntToUnpaddedBytes(BigInt(value))
        if (bytes.length > 0) storage.set(digits(setLengthLeft(bigIntToUnpaddedBytes(BigInt(slot)), 32)), bytes)
      }
      state.accounts.set(key, {
        nonce: BigInt(account.nonce),
        balance: BigInt(account.balance),
        ...(code !== undefined && code !== '0x' && code !== ''
          ? { code: hexToBytes(code), codeHash: keccak256(hexToBytes(code)) }
          : { code: undefined, codeHash: KECCAK256_NULL }),
        storage,
        storageRoot: undefined,
      })
    }
    return state
  }

  /**
   * The BAL's final values (`changes`, its JSON form) applied as consumeBAL applies them; the codes it sets
   * ([hash, code]) and the slots it empties ([address, slot]). Undefined, with this state unchanged, where
   * the block is left to consumeBAL.
   */
  apply(changes) {
    let updates
    try {
      updates = this.updatesOf(changes)
    } catch (error) {
      if (error === LEFT_TO_CONSUME_BAL || error instanceof Error) return undefined
      throw error
    }
    const codes = []
    const emptied = []
    for (const { key, nonce, balance, code, codeHash, slots } of updates) {
      let account = this.accounts.get(key)
      if (account === undefined) {
        account = { nonce: 0n, balance: 0n, code: undefined, codeHash: KECCAK256_NULL, storage: new Map(), storageRoot: KECCAK256_RLP }
        this.accounts.set(key, account)
      }
      account.nonce = nonce
      account.balance = balance
      account.codeHash = codeHash
      if (code !== undefined) {
        account.code = code
        codes.push([codeHash, code])
      }
      for (const [slot, value] of slots) {
        if (value.length > 0) account.storage.set(slot, value)
        else {
          account.storage.delete(slot)
          emptied.push([key, slot])
        }
      }
      if (slots.length > 0) account.storageRoot = undefined
    }
    return { codes, emptied }
  }

  /** Each changed account's final fields and slot writes, read from this state without changing it. */
  updatesOf(changes) {
    const updates = []
    const seen = new Set()
    for (const change of changes) {
      const { balanceChanges, nonceChanges, codeChanges, storageChanges } = change
      if (balanceChanges.length === 0 && nonceChanges.length === 0 && codeChanges.length === 0 && storageChanges.length === 0) continue
      const key = bytesToHex(createAddressFromString(change.address).bytes)
      if (seen.has(key)) throw LEFT_TO_CONSUME_BAL
      seen.add(key)
      const existing = this.accounts.get(key)
      const postBalance = balanceChanges.at(-1)?.postBalance
      const postNonce = nonceChanges.at(-1)?.postNonce
      const newCode = codeChanges.slice(-1)[0]?.newCode ?? undefined
      const code = newCode === undefined ? undefined : hexToBytes(newCode)
      const balance = postBalance !== undefined ? hexToBigInt(postBalance) : (existing?.balance ?? 0n)
      const nonce = postNonce !== undefined ? hexToBigInt(postNonce) : (existing?.nonce ?? 0n)
      const codeHash = code !== undefined ? this.keccak256(code) : (existing?.codeHash ?? KECCAK256_NULL)
      // consumeBAL deletes an account it leaves empty (EIP-161): left to it.
      if (balance === 0n && nonce === 0n && equalsBytes(codeHash, KECCAK256_NULL) && storageChanges.length === 0) throw LEFT_TO_CONSUME_BAL
      new Account(nonce, balance, KECCAK256_RLP, codeHash) // throws where ethereumjs's Account refuses the fields
      const slots = storageChanges.map((storage) => {
        if (storage.slotChanges.length === 0) throw LEFT_TO_CONSUME_BAL
        const slot = setLengthLeft(hexToBytes(storage.slot), 32)
        return [digits(slot), unpadBytes(setLengthLeft(hexToBytes(storage.slotChanges.at(-1).postValue), 32))]
      })
      updates.push({ key, nonce, balance, code, codeHash, slots })
    }
    return updates
  }

  /** Every storage trie not built yet and the account trie, their nodes handed to `put`; the state root. */
  build(put) {
    const accounts = []
    for (const [address, account] of this.accounts) {
      if (account.storageRoot === undefined) {
        const slots = [...account.storage].map(([slot, value]) => [digits(this.keccak256(hexToBytes(`0x${slot}`))), RLP.encode(value)])
        account.storageRoot = buildTrie(slots.sort(byKey), this.keccak256, put)
      }
      account.hashedAddress ??= digits(this.keccak256(hexToBytes(address)))
      const leaf = new Account(account.nonce, account.balance, account.storageRoot, account.codeHash).serialize()
      accounts.push([account.hashedAddress, leaf])
    }
    return buildTrie(accounts.sort(byKey), this.keccak256, put)
  }
}

function byKey(a, b) {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0
}

/**
 * `state` (a MerkleStateManager without open checkpoints) moved to the state `setupState` holds after
 * `changes` (a setup block's BAL, JSON form): the codes and every new trie node written into the state
 * trie's database, then `setStateRoot`. The root; undefined, with nothing changed, where the block is
 * left to consumeBAL (this module's header says when).
 */
export async function applyInOnePass(state, setupState, changes) {
  if (state._trie.hasCheckpoints()) return undefined
  const applied = setupState.apply(changes)
  if (applied === undefined) return undefined
  const database = state._trie.database()
  for (const [hash, code] of applied.codes) await database.put(concatBytes(CODEHASH_PREFIX, hash), code)
  const nodes = []
  const root = setupState.build((hash, encoded) => nodes.push([hash, encoded]))
  for (const [hash, encoded] of nodes) await database.put(hash, encoded)
  await state.setStateRoot(root)
  if (state._caches !== undefined) warmCaches(state._caches, setupState, applied.emptied)
  return root
}

/**
 * The state manager's caches (emptied by `setStateRoot`) given every account, code and slot of the state
 * just written, and the slots the block emptied as none, each marked as already in the trie, as consumeBAL's
 * flush (`getStateRoot`) leaves them. Why: ethereumjs marks an account or slot it reads from the trie as
 * changed, and writes it back into the trie at the block's end, path hashed again; read from a cold cache,
 * the benchmark block after a 19,000-contract setup cost more than consumeBAL saved. The values are the
 * ones the trie's leaves were built from, so every read answers what the trie holds.
 */
function warmCaches(caches, setupState, emptied) {
  for (const [key, account] of setupState.accounts) {
    const at = new Address(hexToBytes(key))
    caches.account?.put(at, new Account(account.nonce, account.balance, account.storageRoot, account.codeHash))
    if (account.code !== undefined) caches.code?.put(at, account.code)
    for (const [slot, value] of account.storage) caches.storage?.put(at, hexToBytes(`0x${slot}`), RLP.encode(value))
  }
  for (const [key, slot] of emptied) caches.storage?.put(new Address(hexToBytes(key)), hexToBytes(`0x${slot}`), RLP.encode(EMPTY_BYTES))
  // Nothing to write: flushing a cache hands back its changed entries and marks none changed.
  caches.account?.flush()
  caches.code?.flush()
  caches.storage?.flush()
}

const address = (index) => `0x${index.toString(16).padStart(40, '0')}`
const slot = (index) => `0x${index.toString(16).padStart(64, '0')}`

/**
 * A small state and two setup BALs over it: accounts with and without code and storage, 300 of them so the
 * account trie has branches and extensions, a slot emptied, one rewritten, one added, an account created
 * with code and storage, one with a balance only, one given a nonce only, one given only a zero slot.
 */
function checkCase() {
  const pre = {}
  for (let index = 1; index <= 300; index++) pre[address(index)] = { nonce: '0x1', balance: `0x${(index * 977).toString(16)}` }
  pre[address(1000)] = { nonce: '0x1', balance: '0x0', code: '0x6001600055', storage: { [slot(1)]: '0x05', [slot(2)]: '0x07', [slot(3)]: '0x09' } }
  const change = (at, fields) => ({ address: at, balanceChanges: [], nonceChanges: [], codeChanges: [], storageChanges: [], storageReads: [], ...fields })
  const write = (at, value) => ({ slot: at, slotChanges: [{ blockAccessIndex: 1, postValue: value }] })
  const first = [
    change(address(7), { balanceChanges: [{ blockAccessIndex: 1, postBalance: '0x10' }, { blockAccessIndex: 2, postBalance: '0x20' }] }),
    change(address(8), { nonceChanges: [{ blockAccessIndex: 1, postNonce: '0x2' }] }),
    change(address(1000), { storageChanges: [write(slot(1), '0x0'), write(slot(2), '0x11'), write(slot(4), '0x1234')] }),
    change(address(2000), {
      nonceChanges: [{ blockAccessIndex: 1, postNonce: '0x1' }],
      codeChanges: [{ blockAccessIndex: 1, newCode: '0x60016002' }],
      storageChanges: [write(slot(9), '0xff'), write(slot(10), '0x0')],
    }),
    change(address(2001), { balanceChanges: [{ blockAccessIndex: 1, postBalance: '0x3e8' }] }),
    change(address(2002), { storageChanges: [write(slot(1), '0x0')] }),
    change(address(2003), { storageReads: [slot(5)] }),
  ]
  const second = [
    change(address(1000), { storageChanges: [write(slot(3), '0x0'), write(slot(4), '0x0')] }),
    change(address(2000), { storageChanges: [write(slot(11), '0x01')] }),
    change(address(3000), { codeChanges: [{ blockAccessIndex: 1, newCode: '0x00' }] }),
  ]
  return { pre, bals: [first, second] }
}

/** What a state reads for every account and slot of the check: account fields, code and slot values. */
async function readsOf(state, addresses, slots) {
  const reads = []
  for (const at of addresses) {
    const account = await state.getAccount(createAddressFromString(at))
    reads.push(account === undefined ? null : bytesToHex(account.serialize()), bytesToHex(await state.getCode(createAddressFromString(at))))
    for (const key of slots) reads.push(bytesToHex(await state.getStorage(createAddressFromString(at), hexToBytes(key))))
  }
  return reads
}

/** Whether the one-pass build gives consumeBAL's root and reads on the check's state, after each of its BALs. */
async function buildAgreesWithConsumeBal(common, keccak256) {
  const { pre, bals } = checkCase()
  const { state: own } = await genesisState(common, pre)
  const { state: built } = await genesisState(common, pre)
  const setupState = SetupState.fromPre(pre, keccak256)
  const addresses = [address(7), address(8), address(9), address(1000), address(2000), address(2001), address(2002), address(2003), address(3000)]
  const slots = [1, 2, 3, 4, 5, 9, 10, 11].map(slot)
  for (const bal of bals) {
    await own.consumeBAL(bal)
    const root = await applyInOnePass(built, setupState, bal)
    if (root === undefined || !equalsBytes(root, await own.getStateRoot())) return false
    const [ownReads, builtReads] = [await readsOf(own, addresses, slots), await readsOf(built, addresses, slots)]
    if (JSON.stringify(ownReads) !== JSON.stringify(builtReads)) return false
  }
  // An account the BAL leaves empty is left to consumeBAL, the state unchanged.
  const emptied = [{ address: address(9), balanceChanges: [{ blockAccessIndex: 1, postBalance: '0x0' }], nonceChanges: [{ blockAccessIndex: 1, postNonce: '0x0' }], codeChanges: [], storageChanges: [], storageReads: [] }]
  return (await applyInOnePass(built, setupState, emptied)) === undefined && setupState.accounts.get(address(9)).nonce === 1n
}

/** Whether `buildTrie` gives ethereumjs's root and nodes for short keys, whose nodes under 32 bytes are inlined. */
async function trieAgreesWithEthereumjs(keccak256) {
  for (const count of [1, 2, 3, 17, 40]) {
    const trie = new MerklePatriciaTrie({ useKeyHashingFunction: keccak256 })
    const entries = []
    for (let index = 0; index < count; index++) {
      const key = Uint8Array.of((index * 37) & 0xff, (index * 11) & 0x0f, index & 0xff)
      const value = Uint8Array.of(index + 1)
      await trie.put(key, value)
      entries.push([digits(key), value])
    }
    const nodes = new Map()
    const root = buildTrie(entries.sort(byKey), keccak256, (hash, encoded) => nodes.set(digits(hash), digits(encoded)))
    if (!equalsBytes(root, trie.root())) return false
    for (const [hash, encoded] of nodes) {
      const held = await trie.database().get(hexToBytes(`0x${hash}`))
      if (held === undefined || digits(held) !== encoded) return false
    }
  }
  return true
}

const ONE_PASS = 'built in one pass (consumeBAL where the BAL deletes an account)'

/**
 * Whether setup states are built in one pass (`useIt`) and what the version record says: the build is
 * used only where it agrees with ethereumjs's trie and consumeBAL on the check's states (not checked
 * again when `checkedBefore`, as in one_pass_rlp.mjs).
 */
export async function useOnePassState(common, keccak256, checkedBefore = false) {
  if (checkedBefore) return { useIt: true, description: ONE_PASS }
  if (!(await trieAgreesWithEthereumjs(keccak256))) return { useIt: false, description: "ethereumjs's consumeBAL: the one-pass trie disagreed with ethereumjs's" }
  if (!(await buildAgreesWithConsumeBal(common, keccak256))) return { useIt: false, description: "ethereumjs's consumeBAL: the one-pass state disagreed with it" }
  return { useIt: true, description: ONE_PASS }
}
