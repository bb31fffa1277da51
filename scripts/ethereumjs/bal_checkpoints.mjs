// Copy-on-write checkpoints for ethereumjs's block access list (@ethereumjs/util 10.1.3, bal/index.js).
//
// Why: `BlockLevelAccessList.checkpoint()` deep-copies the whole block's access list at every call frame
// the EVM enters, so a block's cost grows with frames x accounts touched so far. A contract-set setup
// block (22,000 CREATE2 frames over 22,000 new accounts at 60M greedy) took ethereumjs hours instead of
// seconds. This keeps ethereumjs's own rules (what each method records, how a revert turns writes into
// reads) and changes only how a checkpoint remembers the list: each frame saves an account's entry the
// first time that frame changes it, and a revert restores those entries and then merges exactly as
// ethereumjs's `revert` does. An account no frame changed is the same before and after, and ethereumjs's
// merge leaves such an account as it was, so the result is the list the deep copy would give.
// bal_checkpoints_check.mjs drives both through random sequences of frames and changes and requires
// identical lists; balgen's tests run it and verify fixtures both ways
// (BALGEN_ETHEREUMJS_CLONING_CHECKPOINTS=1 keeps ethereumjs's own checkpoints).
import { BlockLevelAccessList } from '@ethereumjs/util'

/** Methods that change one account's entry, named by their first argument. */
const ONE_ACCOUNT = ['addAddress', 'addStorageWrite', 'addStorageRead', 'addBalanceChange', 'addNonceChange', 'addCodeChange']

function cloneEntry(entry) {
  const storageChanges = {}
  for (const [slot, changes] of Object.entries(entry.storageChanges)) {
    storageChanges[slot] = changes.map(([index, value]) => [index, value])
  }
  return {
    nonceChanges: new Map(entry.nonceChanges),
    balanceChanges: new Map(entry.balanceChanges),
    codeChanges: entry.codeChanges.map(([index, code]) => [index, code]),
    storageChanges,
    storageReads: new Set(entry.storageReads),
  }
}

/** Remember `address`'s entry in the innermost checkpoint, unless that checkpoint already has it. */
function save(list, address) {
  const top = list.checkpoints[list.checkpoints.length - 1]
  if (top === undefined || top.saved.has(address)) return
  const entry = list.accesses[address]
  top.saved.set(address, entry === undefined ? undefined : cloneEntry(entry))
}

/** ethereumjs's revert merge for one account: `before` (its saved entry) with the reads of `now`. */
function merged(before, now) {
  if (before === undefined) {
    const reads = new Set(now.storageReads)
    for (const slot of Object.keys(now.storageChanges)) reads.add(slot)
    return { nonceChanges: new Map(), balanceChanges: new Map(), codeChanges: [], storageChanges: {}, storageReads: reads }
  }
  for (const slot of now.storageReads) before.storageReads.add(slot)
  for (const slot of Object.keys(now.storageChanges)) {
    if (before.storageChanges[slot] === undefined) before.storageReads.add(slot)
  }
  return before
}

/** Give `listClass` (ethereumjs's `BlockLevelAccessList` or a subclass of it) copy-on-write checkpoints. */
export function useCopyOnWriteCheckpoints(listClass = BlockLevelAccessList) {
  const proto = listClass.prototype
  for (const name of ONE_ACCOUNT) {
    const original = proto[name]
    proto[name] = function (address, ...rest) {
      save(this, address)
      return original.call(this, address, ...rest)
    }
  }
  const cleanupSelfdestructed = proto.cleanupSelfdestructed
  proto.cleanupSelfdestructed = function (addresses, ...rest) {
    for (const address of addresses) save(this, address)
    return cleanupSelfdestructed.call(this, addresses, ...rest)
  }
  const cleanupNetZeroBalanceChanges = proto.cleanupNetZeroBalanceChanges
  proto.cleanupNetZeroBalanceChanges = function (...rest) {
    for (const address of this.originalBalances.keys()) save(this, address)
    return cleanupNetZeroBalanceChanges.call(this, ...rest)
  }
  proto.checkpoint = function () {
    this.checkpoints.push({ saved: new Map(), blockAccessIndex: this.blockAccessIndex })
  }
  proto.commit = function () {
    const done = this.checkpoints.pop()
    const parent = this.checkpoints[this.checkpoints.length - 1]
    if (done === undefined || parent === undefined) return
    for (const [address, entry] of done.saved) {
      if (!parent.saved.has(address)) parent.saved.set(address, entry)
    }
  }
  proto.revert = function () {
    const done = this.checkpoints.pop()
    if (done === undefined) return
    this.blockAccessIndex = done.blockAccessIndex
    for (const [address, before] of done.saved) {
      const now = this.accesses[address]
      if (now === undefined) {
        if (before !== undefined) this.accesses[address] = before
        continue
      }
      this.accesses[address] = merged(before, now)
    }
  }
}
