// Checks bal_checkpoints.mjs against ethereumjs's own checkpoints: the same random sequences of call
// frames (checkpoint, commit, revert) and access-list changes (every method the EVM calls, transaction
// boundaries with their clean-ups) applied to both must leave identical lists: the same entries in the
// same order, the same canonical encoding. Prints one JSON line with what it compared; exit code 1 and
// the first differing sequence when they differ.
//
//   node bal_checkpoints_check.mjs [SEQUENCES]
import { BlockLevelAccessList } from '@ethereumjs/util'

import { useCopyOnWriteCheckpoints } from './bal_checkpoints.mjs'

class CopyOnWrite extends BlockLevelAccessList {}
useCopyOnWriteCheckpoints(CopyOnWrite)

/** A seeded generator (mulberry32): the same sequences on every run. */
function random(seed) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const ADDRESSES = Array.from({ length: 6 }, (_, i) => `0x${String(i + 1).repeat(40)}`)

function sequence(seed, length) {
  const next = random(seed)
  const pick = (items) => items[Math.floor(next() * items.length)]
  const small = () => Math.floor(next() * 4)
  const bytes = (n) => Uint8Array.from({ length: n }, () => small())
  const ops = []
  let depth = 0
  let index = 1
  for (let step = 0; step < length; step++) {
    const roll = next()
    const address = pick(ADDRESSES)
    if (roll < 0.12) {
      ops.push(['checkpoint']), depth++
    } else if (roll < 0.2 && depth > 0) {
      ops.push(['commit']), depth--
    } else if (roll < 0.3 && depth > 0) {
      ops.push(['revert']), depth--
    } else if (roll < 0.34 && depth === 0) {
      ops.push(['cleanupSelfdestructed', [address], next() < 0.5 ? undefined : new Map([[address, BigInt(small())]])])
      ops.push(['cleanupNetZeroBalanceChanges'], ['index', ++index])
    } else if (roll < 0.45) {
      ops.push(['addStorageWrite', address, bytes(1), bytes(1), index, next() < 0.7 ? bytes(1) : undefined])
    } else if (roll < 0.6) {
      ops.push(['addStorageRead', address, bytes(1)])
    } else if (roll < 0.72) {
      ops.push(['addBalanceChange', address, BigInt(small()), index, next() < 0.7 ? BigInt(small()) : undefined])
    } else if (roll < 0.8) {
      ops.push(['addNonceChange', address, BigInt(small()), index])
    } else if (roll < 0.88) {
      ops.push(['addCodeChange', address, bytes(2), index, next() < 0.7 ? bytes(2) : undefined])
    } else {
      ops.push(['addAddress', address])
    }
  }
  while (depth-- > 0) ops.push([next() < 0.5 ? 'commit' : 'revert'])
  return ops
}

function applied(listClass, ops) {
  const list = new listClass()
  for (const [name, ...args] of ops) {
    if (name === 'index') list.blockAccessIndex = args[0]
    else list[name](...args)
  }
  return list
}

function view(list) {
  const json = JSON.stringify(list.toJSON(), (_, value) => (typeof value === 'bigint' ? value.toString() : value))
  return `${Object.keys(list.accesses).join(',')}|${list.blockAccessIndex}|${json}|${Buffer.from(list.serialize()).toString('hex')}`
}

const sequences = Number(process.argv[2] ?? 3000)
let operations = 0
let reverts = 0
for (let seed = 1; seed <= sequences; seed++) {
  const ops = sequence(seed, 20 + (seed % 180))
  operations += ops.length
  reverts += ops.filter(([name]) => name === 'revert').length
  const expected = view(applied(BlockLevelAccessList, ops))
  const found = view(applied(CopyOnWrite, ops))
  if (expected !== found) {
    console.log(JSON.stringify({ ok: false, seed, ops: ops.length, expected, found }))
    process.exit(1)
  }
}
console.log(JSON.stringify({ ok: true, sequences, operations, reverts }))
