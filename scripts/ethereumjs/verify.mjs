// balgen's ethereumjs verifier: runs execution-spec-tests blockchain fixtures through ethereumjs
// (@ethereumjs/vm 10.1.3) with each block's access list (BAL) given and every check on, and prints
// one JSON line per fixture. scripts/install-tools.sh copies it into tools/ethereumjs, next to the
// node_modules its imports resolve from; balgen/verify/ethereumjs.py runs it.
//
//   node verify.mjs [--setup-from-bal] FILE...
//
// Formats: blockchain_test (blocks from their RLP, the BAL from `blockAccessList`), blockchain_test_engine
// and blockchain_test_engine_x (blocks from the engine payloads, the BAL from the payload's RLP; an
// engine_x fixture's `pre` and genesis come from `pre_alloc/<preHash>.json`, found in the fixture's
// folder or above it). For each fixture:
//   1. the genesis state from `pre`: its root must be the genesis header's, and the genesis header
//      (the fixture's, or engine_x's built from the group's `environment`) must hash to the chain's start;
//   2. every block run by `runBlock` with the fixture's BAL and `generate: false`: ethereumjs checks the
//      BAL's structure and its hash against the header, the header against its parent, then executes and
//      compares the BAL it built with the one given, the requests hash, receipts root, bloom, gas used
//      and state root;
//   3. the last block's hash against `lastblockhash`, and the post-state (`postState`, `postStateDiff`
//      or `postStateHash`).
// With --setup-from-bal, every block before a fixture's last (balgen's setup blocks, which deploy what the
// benchmark block reads) is applied from its BAL instead of executed: the BAL's structure and its hash
// against the header, the block against its parent (header, transactions and withdrawals roots), then
// the BAL's final values are written into the state, whose root must be the header's: the state built in
// one pass into ethereumjs's own trie database (one_pass_state.mjs), or by ethereumjs's own `consumeBAL`
// where that module leaves a block to it or BALGEN_ETHEREUMJS_OWN_SETUP_STATE=1. What those blocks' transactions do is then judged by the EVMs that execute every block (geth's
// evm blocktest and revme); the last block is run as above, on the state the BAL built.
// The first line is the version record: which ethereumjs and which Amsterdam gas schedule it charges.
// Bad input (no file, a file that is not JSON) is one line on stderr and exit code 2 (files are read one at
// a time, so a later file's may follow lines already printed); a fixture that fails is a line with
// "ok": false, and the exit code is 1 when any did.
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { performance } from 'node:perf_hooks'

import { Block, createBlock, createBlockFromExecutionPayload, createBlockFromRLP } from '@ethereumjs/block'
import { createBlockchain } from '@ethereumjs/blockchain'
import { Common, Hardfork, Mainnet, createCustomCommon } from '@ethereumjs/common'
import { RLP } from '@ethereumjs/rlp'
import { AccessList2930Tx, Blob4844Tx, EOACode7702Tx, FeeMarket1559Tx, LegacyTx } from '@ethereumjs/tx'
import {
  Address,
  bigIntToUnpaddedBytes,
  bytesToHex,
  concatBytes,
  createAddressFromString,
  createBlockLevelAccessListFromJSON,
  createBlockLevelAccessListFromRLP,
  equalsBytes,
  isAccountOrderOnlyViolation,
  validateBlockAccessListHash,
  validateBlockAccessListJSONStructure,
  validateBlockAccessListStructure,
  hexToBytes,
  setLengthLeft,
} from '@ethereumjs/util'
import { createVM, runBlock } from '@ethereumjs/vm'
import { sha256 } from '@noble/hashes/sha2.js'
import { keccak_256 } from '@noble/hashes/sha3.js'

import { useCopyOnWriteCheckpoints } from './bal_checkpoints.mjs'
import { useSortKeys } from './bal_sort_keys.mjs'
import { compiledCrypto } from './compiled_crypto.mjs'
import { genesisState } from './genesis_state.mjs'
import { useOnePassRlp } from './one_pass_rlp.mjs'
import { SetupState, applyInOnePass, useOnePassState } from './one_pass_state.mjs'
import { useWordHandlers } from './word_handlers.mjs'

// ethereumjs 10.1.3 copies the whole access list at every call frame; bal_checkpoints.mjs says why
// that is replaced and how the replacement keeps its verdicts.
const CLONING_CHECKPOINTS = process.env.BALGEN_ETHEREUMJS_CLONING_CHECKPOINTS === '1'
if (!CLONING_CHECKPOINTS) useCopyOnWriteCheckpoints()

// BALGEN_ETHEREUMJS_START_CHECKS_PASSED=1: the start checks of the four replacements below passed on these
// very files and this node before (balgen keeps that per install, verify/ethereumjs.py), so they are
// installed without running them again (about a CPU-second of every run's start). The version record says so.
const START_CHECKS_PASSED = process.env.BALGEN_ETHEREUMJS_START_CHECKS_PASSED === '1'

// RLP encoded and decoded in one pass (one_pass_rlp.mjs says why and how it is checked);
// BALGEN_ETHEREUMJS_OWN_RLP=1 keeps ethereumjs's.
const RLP_CODEC = process.env.BALGEN_ETHEREUMJS_OWN_RLP === '1' ? "ethereumjs's: BALGEN_ETHEREUMJS_OWN_RLP=1" : useOnePassRlp(START_CHECKS_PASSED)

// A BAL's canonical view with each storage key's sort key computed once (bal_sort_keys.mjs says why and how
// it is checked); BALGEN_ETHEREUMJS_OWN_BAL_SORT=1 keeps ethereumjs's.
const BAL_SORT = process.env.BALGEN_ETHEREUMJS_OWN_BAL_SORT === '1' ? "ethereumjs's: BALGEN_ETHEREUMJS_OWN_BAL_SORT=1" : useSortKeys(START_CHECKS_PASSED)

/**
 * `Common.isActivatedEIP` answered from a Set of the active EIPs instead of a scan of their list: the
 * interpreter asks it several times per opcode (EIPs 6800 and 7864, never active, at every step: two scans
 * of the whole list), a sixth of the CPU time of a block of plain computation. The list is replaced, never
 * changed in place, when the hardfork or the EIPs change, so a Set built for the list in use gives the
 * same answers.
 */
function useSetForActivatedEips() {
  Common.prototype.isActivatedEIP = function isActivatedEIP(eip) {
    if (this._balgenActiveList !== this._activatedEIPsCache) {
      this._balgenActiveList = this._activatedEIPsCache
      this._balgenActiveSet = new Set(this._activatedEIPsCache)
    }
    return this._balgenActiveSet.has(eip)
  }
}
useSetForActivatedEips()

/**
 * `Common.updateParams` answered from the cache it built before where the call would build that same
 * cache again. Each transaction's constructor calls it with the transaction library's parameters on a
 * fresh `copy()` of the block's common: it copies each EIP's parameters through JSON and rebuilds the
 * whole parameter cache, a twelfth of the CPU time of a block of 2,000 transactions. A copy shares its
 * original's `_params` object and starts with its cache object; a cache object is replaced whenever the
 * hardfork or the EIPs change. So a copy holding the very cache object a call with the same parameters
 * started from, with no common's parameters changed since (`updateParams` or `resetParams`, counted
 * here), has the same parameters, hardfork and EIPs that call had, and gets the cache it built.
 */
function useRememberedParamsCaches() {
  const updateParams = Common.prototype.updateParams
  const resetParams = Common.prototype.resetParams
  const built = new WeakMap() // cache object a call started from -> { params, changes, cache it built }
  let changes = 0
  Common.prototype.updateParams = function rememberedUpdateParams(params) {
    const before = this._paramsCache
    const known = built.get(before)
    if (known !== undefined && known.params === params && known.changes === changes) {
      this._paramsCache = known.cache
      return
    }
    updateParams.call(this, params)
    changes++
    built.set(before, { params, changes, cache: this._paramsCache })
  }
  Common.prototype.resetParams = function countedResetParams(params) {
    changes++
    return resetParams.call(this, params)
  }
}
useRememberedParamsCaches()

/**
 * A signed transaction's sender address derived once. ethereumjs keeps a frozen transaction's recovered
 * public key (`cache.senderPubKey`) but derives the address from it again at every `getSenderAddress`,
 * hashing with noble's JavaScript keccak: block validation, `runTx` and EIP-2780's intrinsic gas each ask,
 * a twentieth of the CPU time of a block of 2,000 transactions. A frozen transaction (ethereumjs's default;
 * its signature cannot change) gets its address's bytes kept here on the first ask, and every ask a new
 * `Address` of them, as before; an error (a bad signature) is thrown at every ask, as before.
 */
function useRememberedSenders() {
  const senders = new WeakMap()
  for (const transactionClass of [LegacyTx, AccessList2930Tx, FeeMarket1559Tx, Blob4844Tx, EOACode7702Tx]) {
    const getSenderAddress = transactionClass.prototype.getSenderAddress
    transactionClass.prototype.getSenderAddress = function rememberedSenderAddress() {
      if (!Object.isFrozen(this)) return getSenderAddress.call(this)
      let bytes = senders.get(this)
      if (bytes === undefined) {
        bytes = getSenderAddress.call(this).bytes.slice()
        senders.set(this, bytes)
      }
      return new Address(bytes.slice())
    }
  }
}
useRememberedSenders()

/**
 * A frozen block whose transactions passed `getTransactionsValidationErrors` passes again without the
 * walk: `runBlock` validates the block's data and `putBlock` validates it again, each walk checking every
 * transaction (its signature, intrinsic gas, fee cap) of the same block, whose transactions and common
 * cannot change. A walk that found errors is walked again (no errors are kept).
 */
function useRememberedTransactionChecks() {
  const passed = new WeakSet()
  const getTransactionsValidationErrors = Block.prototype.getTransactionsValidationErrors
  Block.prototype.getTransactionsValidationErrors = function rememberedTransactionsValidationErrors() {
    if (passed.has(this)) return []
    const errors = getTransactionsValidationErrors.call(this)
    if (errors.length === 0 && Object.isFrozen(this)) passed.add(this)
    return errors
  }
}
useRememberedTransactionChecks()

// keccak-256 in WebAssembly and sender recovery in native code where they load (compiled_crypto.mjs says
// why and how they are checked); BALGEN_ETHEREUMJS_JS_CRYPTO=1 keeps ethereumjs's JavaScript ones, to
// compare verdicts.
const CRYPTO = process.env.BALGEN_ETHEREUMJS_JS_CRYPTO === '1'
  ? { customCrypto: {}, description: 'JavaScript (@noble): BALGEN_ETHEREUMJS_JS_CRYPTO=1' }
  : await compiledCrypto()

// KECCAK256, MLOAD and MSTORE with direct conversions between a stack value and its 32 bytes
// (word_handlers.mjs says why and how they are checked); BALGEN_ETHEREUMJS_OWN_HANDLERS=1 keeps ethereumjs's.
const WORD_HANDLERS = process.env.BALGEN_ETHEREUMJS_OWN_HANDLERS === '1'
  ? "ethereumjs's: BALGEN_ETHEREUMJS_OWN_HANDLERS=1"
  : await useWordHandlers(amsterdamCommon(), START_CHECKS_PASSED)

/** keccak-256 as the fixtures' common computes it: hash-wasm's where it loaded (compiled_crypto.mjs), else noble's. */
const keccak256 = CRYPTO.customCrypto.keccak256 ?? keccak_256

// The state after a setup block applied from its BAL built in one pass (one_pass_state.mjs says why and how
// it is checked); BALGEN_ETHEREUMJS_OWN_SETUP_STATE=1 keeps ethereumjs's consumeBAL.
const SETUP_STATE = process.env.BALGEN_ETHEREUMJS_OWN_SETUP_STATE === '1'
  ? { useIt: false, description: "ethereumjs's consumeBAL: BALGEN_ETHEREUMJS_OWN_SETUP_STATE=1" }
  : await useOnePassState(amsterdamCommon(), keccak256, START_CHECKS_PASSED)

const VM_VERSION = JSON.parse(
  readFileSync(new URL('./node_modules/@ethereumjs/vm/package.json', import.meta.url), 'utf8'),
).version

/** Thrown for a fixture ethereumjs disagrees with; `kind` says what kind of disagreement. */
class Disagreement extends Error {
  constructor(kind, reason, firstDifference = null, block = null) {
    super(reason)
    this.kind = kind
    this.firstDifference = firstDifference
    this.block = block
  }
}

/**
 * The chain a fixture's `network` "Amsterdam" means (go-ethereum's tests/init.go, which EEST follows):
 * chain id 1 and every fork up to Amsterdam active from genesis. ethereumjs's Amsterdam hardfork brings
 * its EIP set (EIP-7928 BALs, EIP-8037/8038 gas, ...) and, like BPO2, the blob schedule 14/21/11684671.
 * The DAO fork is left out: it is a one-block state change, not a rule, and no block of a fixture is block
 * 1,920,000.
 */
function amsterdamCommon() {
  const hardforks = []
  for (const fork of Mainnet.hardforks) {
    if (fork.name === Hardfork.Dao || fork.name === Hardfork.Amsterdam) continue
    const byTime = fork.timestamp !== undefined
    hardforks.push(byTime ? { name: fork.name, block: null, timestamp: 0 } : { name: fork.name, block: 0 })
  }
  hardforks.push({ name: Hardfork.Amsterdam, block: null, timestamp: 0 })
  return createCustomCommon(
    { name: 'amsterdam-from-genesis', chainId: 1, hardforks },
    Mainnet,
    { hardfork: Hardfork.Amsterdam, customCrypto: CRYPTO.customCrypto },
  )
}

const NETWORKS = { Amsterdam: amsterdamCommon }

function quantity(hex) {
  return BigInt(hex)
}

function word(hex) {
  return setLengthLeft(bigIntToUnpaddedBytes(BigInt(hex)), 32)
}

/** The genesis header fields from an EEST header object (`genesisBlockHeader`). */
function headerFields(header) {
  return {
    parentHash: header.parentHash,
    uncleHash: header.uncleHash,
    coinbase: header.coinbase,
    stateRoot: header.stateRoot,
    transactionsTrie: header.transactionsTrie,
    receiptTrie: header.receiptTrie,
    logsBloom: header.bloom,
    difficulty: header.difficulty,
    number: header.number,
    gasLimit: header.gasLimit,
    gasUsed: header.gasUsed,
    timestamp: header.timestamp,
    extraData: header.extraData,
    mixHash: header.mixHash,
    nonce: header.nonce,
    baseFeePerGas: header.baseFeePerGas,
    withdrawalsRoot: header.withdrawalsRoot,
    blobGasUsed: header.blobGasUsed,
    excessBlobGas: header.excessBlobGas,
    parentBeaconBlockRoot: header.parentBeaconBlockRoot,
    requestsHash: header.requestsHash,
    blockAccessListHash: header.blockAccessListHash,
    slotNumber: header.slotNumber,
  }
}

const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421'
const EMPTY_LIST_HASH = bytesToHex(keccak_256(RLP.encode([])))

/**
 * An engine_x group's genesis header by EEST's rule (`PreAllocGroup` builds it from `environment`): the
 * environment's fields, the state root of `pre`, extra data 0x00, empty transactions, receipts and
 * withdrawals, the empty requests hash and the empty BAL's hash, slot number 0.
 */
function environmentHeader(environment, stateRoot) {
  return {
    parentHash: '0x' + '00'.repeat(32),
    uncleHash: EMPTY_LIST_HASH,
    coinbase: environment.currentCoinbase,
    stateRoot: bytesToHex(stateRoot),
    transactionsTrie: EMPTY_TRIE_ROOT,
    receiptTrie: EMPTY_TRIE_ROOT,
    difficulty: environment.currentDifficulty,
    number: environment.currentNumber,
    gasLimit: environment.currentGasLimit,
    gasUsed: '0x0',
    timestamp: environment.currentTimestamp,
    extraData: '0x00',
    mixHash: bytesToHex(word(environment.currentRandom)),
    nonce: '0x0000000000000000',
    baseFeePerGas: environment.currentBaseFee,
    withdrawalsRoot: EMPTY_TRIE_ROOT,
    blobGasUsed: environment.currentBlobGasUsed,
    excessBlobGas: environment.currentExcessBlobGas,
    parentBeaconBlockRoot: environment.parentBeaconBlockRoot,
    requestsHash: bytesToHex(sha256(new Uint8Array())),
    blockAccessListHash: EMPTY_LIST_HASH,
    slotNumber: '0x0',
  }
}

/** The `pre_alloc/<hash>.json` group of an engine_x fixture: in the file's folder or the nearest above. */
let lastGroup = { path: null, group: null }

/** The group file, parsed once for a run of fixtures that share it (the last one read is kept; it is only read). */
function parsedGroup(candidate) {
  if (lastGroup.path !== candidate) lastGroup = { path: candidate, group: JSON.parse(readFileSync(candidate, 'utf8')) }
  return lastGroup.group
}

function preAllocGroup(file, preHash) {
  for (let folder = path.dirname(path.resolve(file)); ; folder = path.dirname(folder)) {
    const candidate = path.join(folder, 'pre_alloc', `${preHash}.json`)
    if (existsSync(candidate)) return parsedGroup(candidate)
    if (path.dirname(folder) === folder) {
      throw new Disagreement('input', `pre_alloc/${preHash}.json not found in ${path.dirname(file)} or above`)
    }
  }
}

/** EIP-7685's requests hash of an engine payload's requests (type byte + data each; empty ones skipped). */
function requestsHash(requests) {
  const digests = requests.map((request) => hexToBytes(request)).filter((r) => r.length > 1).map((r) => sha256(r))
  return bytesToHex(sha256(concatBytes(...digests)))
}

/** One block to run: the block, the BAL it carries, and whether the fixture expects it to be refused. */
function blocksOf(fixture, common) {
  if (fixture.blocks !== undefined) {
    return fixture.blocks.map((entry, index) => () => {
      const block = createBlockFromRLP(hexToBytes(entry.rlp), { common })
      const declared = entry.blockHeader?.hash
      if (declared !== undefined && !equalsBytes(block.hash(), hexToBytes(declared))) {
        throw new Disagreement('format', `block ${index + 1}: its RLP hashes to ${bytesToHex(block.hash())}, blockHeader.hash is ${declared}`)
      }
      return { block, bal: entry.blockAccessList, invalid: entry.expectException !== undefined }
    })
  }
  return fixture.engineNewPayloads.map((payload) => async () => {
    const [execution, , beaconRoot, requests] = payload.params
    const bal = hexToBytes(execution.blockAccessList)
    const block = await createBlockFromExecutionPayload(
      {
        ...execution,
        parentBeaconBlockRoot: beaconRoot,
        requestsHash: requests === undefined ? undefined : requestsHash(requests),
        blockAccessListHash: bytesToHex(keccak_256(bal)),
      },
      { common },
    )
    return { block, bal, invalid: payload.validationError !== undefined && payload.validationError !== null }
  })
}

const BAL_FIELDS = ['storageChanges', 'storageReads', 'balanceChanges', 'nonceChanges', 'codeChanges']

/** An RLP item as nested hex strings. */
function hexed(item) {
  return item instanceof Uint8Array ? bytesToHex(item) : item.map(hexed)
}

/**
 * A BAL's accounts by address, each field in its canonical RLP form (hex): what the BAL hash covers,
 * free of the spellings the two parsed forms keep (a slot 0 read as 0x or 0x00).
 */
function canonicalAccounts(list) {
  return new Map(
    list.raw().map((account) => {
      const [address, ...fields] = hexed(RLP.decode(RLP.encode(account)))
      return [address, Object.fromEntries(BAL_FIELDS.map((field, index) => [field, fields[index]]))]
    }),
  )
}

/** The generated and the given BAL side by side: every difference, and whether all are balance changes. */
function balDifferences(given, generated) {
  const mine = canonicalAccounts(generated)
  const theirs = canonicalAccounts(given)
  const differences = []
  let balancesOnly = true
  for (const address of [...new Set([...mine.keys(), ...theirs.keys()])].sort()) {
    const ran = mine.get(address)
    const listed = theirs.get(address)
    if (ran === undefined || listed === undefined) {
      differences.push(`account ${address} ${ran === undefined ? 'listed in the given BAL, not accessed by execution' : 'accessed by execution, missing from the given BAL'}`)
      balancesOnly = false
      continue
    }
    for (const field of BAL_FIELDS) {
      const executed = JSON.stringify(ran[field])
      const stated = JSON.stringify(listed[field])
      if (executed === stated) continue
      differences.push(`${address} ${field}: execution ${executed.slice(0, 300)}, given ${stated.slice(0, 300)}`)
      if (field !== 'balanceChanges') balancesOnly = false
    }
  }
  return { differences, balancesOnly }
}

function kindOfRunError(message) {
  if (/access list hash|blockAccessListHash|access list.*hash/i.test(message)) return 'bal_hash'
  if (/access list/i.test(message)) return 'bal'
  if (/stateRoot|receiptTrie|gasUsed|bloom|requestsHash/.test(message)) return 'execution'
  if (/invalid header|header|parent/i.test(message)) return 'header'
  return 'execution'
}

/** Every account of `expected` (address -> account, or null for none) as the state holds it. */
async function checkAccounts(state, expected) {
  for (const [address, account] of Object.entries(expected)) {
    const at = createAddressFromString(address)
    const held = await state.getAccount(at)
    if (account === null) {
      if (held !== undefined && !held.isEmpty()) throw new Disagreement('post_state', `post-state: ${address} exists, expected none`, `${address}`)
      continue
    }
    const where = (field) => `${address}.${field}`
    const nonce = held?.nonce ?? 0n
    const balance = held?.balance ?? 0n
    if (nonce !== quantity(account.nonce)) throw new Disagreement('post_state', `post-state: ${where('nonce')} is ${nonce}, expected ${quantity(account.nonce)}`, where('nonce'))
    if (balance !== quantity(account.balance)) throw new Disagreement('post_state', `post-state: ${where('balance')} is ${balance}, expected ${quantity(account.balance)}`, where('balance'))
    const code = bytesToHex(await state.getCode(at))
    if (code !== (account.code || '0x').toLowerCase()) throw new Disagreement('post_state', `post-state: ${where('code')} differs (${code.length / 2 - 1} bytes held)`, where('code'))
    const storage = account.storage ?? {}
    let nonZero = 0
    for (const [slot, value] of Object.entries(storage)) {
      if (BigInt(value) !== 0n) nonZero++
      const got = await state.getStorage(at, word(slot))
      const gotValue = got.length === 0 ? 0n : BigInt(bytesToHex(got))
      if (gotValue !== BigInt(value)) {
        throw new Disagreement('post_state', `post-state: ${where(`storage[${slot}]`)} is 0x${gotValue.toString(16)}, expected ${value}`, where(`storage[${slot}]`))
      }
    }
    if (held !== undefined && account.storage !== undefined) {
      const count = Object.keys(await state.dumpStorage(at)).length
      if (count !== nonZero) throw new Disagreement('post_state', `post-state: ${address} holds ${count} non-zero slots, expected ${nonZero}`, where('storage'))
    }
  }
}

/**
 * The hash `validateBlockAccessListHashFromJSON` checks, keccak-256 of the RLP of the accounts in the
 * JSON's order, from `parsed` (`createBlockLevelAccessListFromJSON(json)`): each account's canonical entry
 * of `parsed.raw()` is the one util builds from that account alone (no account's entry depends on another,
 * and `validateBlockAccessListJSONStructure` has refused duplicates). Why not util's own: it parses each
 * account into a list of its own and hashes with noble's JavaScript keccak, a fifth of the CPU of a
 * contract-set fixture whose setup BAL deploys 22,000 contracts; parsed once and hashed by the compiled
 * keccak, the bytes hashed, and so the verdict, are the same.
 */
function jsonOrderBalHash(json, parsed) {
  const entries = new Map(parsed.raw().map((entry) => [entry[0], entry]))
  return keccak256(RLP.encode(json.map((account) => entries.get(account.address)).filter((entry) => entry !== undefined)))
}

/**
 * A setup block applied from its BAL, not executed (--setup-from-bal): the BAL's structure and hash as
 * `runBlock` checks them, the block against its parent as `putBlock` validates it, then the state the BAL's
 * final values give against the header's state root. That state is built in one pass from `setupState`
 * (the fixture's state beside ethereumjs's, one_pass_state.mjs) where it is given and takes the block on,
 * else by ethereumjs's `consumeBAL`; either way the root commits to every account and slot, so a state
 * whose root is the header's is the state the header commits to. Whether `setupState` still follows the
 * state (false once consumeBAL has moved the state without it).
 */
async function applySetupBlock(state, blockchain, block, bal, number, setupState) {
  const where = `block ${number} (setup, applied from its BAL)`
  let changes
  try {
    if (bal instanceof Uint8Array) {
      const parsed = createBlockLevelAccessListFromRLP(bal)
      validateBlockAccessListStructure(parsed)
      validateBlockAccessListHash(parsed, block.header.blockAccessListHash)
      changes = parsed.toJSON()
    } else {
      validateBlockAccessListJSONStructure(bal)
      if (isAccountOrderOnlyViolation(bal)) throw new Error('invalid header: block access list accounts are not sorted')
      const parsed = createBlockLevelAccessListFromJSON(bal)
      validateBlockAccessListHash({ hash: () => jsonOrderBalHash(bal, parsed) }, block.header.blockAccessListHash)
      validateBlockAccessListStructure(parsed)
      changes = bal
    }
  } catch (error) {
    const message = String(error.message ?? error)
    throw new Disagreement(kindOfRunError(message), `${where}: ${message}`, null, number)
  }
  try {
    await blockchain.putBlock(block)
  } catch (error) {
    throw new Disagreement('header', `${where}: ${error.message ?? error}`, null, number)
  }
  let root = setupState === undefined ? undefined : await applyInOnePass(state, setupState, changes)
  const followed = root !== undefined
  if (!followed) {
    await state.consumeBAL(changes)
    root = await state.getStateRoot()
  }
  if (!equalsBytes(root, block.header.stateRoot)) {
    throw new Disagreement('bal', `${where}: its BAL's changes give state root ${bytesToHex(root)}, the header has ${bytesToHex(block.header.stateRoot)}`, 'stateRoot', number)
  }
  return followed
}

async function verifyFixture(file, name, fixture) {
  const network = NETWORKS[fixture.network]
  if (network === undefined) throw new Disagreement('input', `network ${fixture.network}: this verifier knows only ${Object.keys(NETWORKS).join(', ')}`)
  const common = network()
  const group = fixture.preHash !== undefined ? preAllocGroup(file, fixture.preHash) : null
  const pre = group?.pre ?? fixture.pre
  const { state, root } = await genesisState(common, pre)

  const header = group === null ? headerFields(fixture.genesisBlockHeader) : environmentHeader(group.environment, root)
  if (!equalsBytes(root, hexToBytes(header.stateRoot))) {
    throw new Disagreement('genesis', `genesis state root ${bytesToHex(root)} from pre, the genesis header has ${header.stateRoot}`, 'genesis.stateRoot', 0)
  }
  const genesis = createBlock({ header, withdrawals: [] }, { common })
  // The chain must start at the genesis built here: the header's declared hash, and the first block's parent.
  const starts = [
    group === null ? fixture.genesisBlockHeader.hash : undefined,
    fixture.engineNewPayloads?.[0]?.params[0].parentHash ?? fixture.blocks?.[0]?.blockHeader?.parentHash,
  ].filter((start) => start !== undefined)
  for (const start of starts) {
    if (!equalsBytes(genesis.hash(), hexToBytes(start))) {
      throw new Disagreement('genesis', `genesis hash ${bytesToHex(genesis.hash())} from ${group === null ? 'genesisBlockHeader' : "the group's environment and pre"}, the chain starts at ${start}`, 'genesis.hash', 0)
    }
  }
  const blockchain = await createBlockchain({ common, genesisBlock: genesis, validateBlocks: true, validateConsensus: false })
  const vm = await createVM({ common, blockchain, stateManager: state })

  let last = genesis
  let number = 0
  const blocks = blocksOf(fixture, common)
  // The state beside ethereumjs's that setup blocks are built from in one pass: made at the first one, and
  // dropped for the rest of the fixture once a block is executed or left to consumeBAL.
  let setupState = setupFromBal && SETUP_STATE.useIt && blocks.length > 1 ? null : undefined
  for (const next of blocks) {
    number++
    let block, bal, invalid
    try {
      ;({ block, bal, invalid } = await next())
    } catch (error) {
      if (error instanceof Disagreement) throw Object.assign(error, { block: number })
      throw new Disagreement('format', `block ${number}: ${error.message ?? error}`, null, number)
    }
    if (setupFromBal && number < blocks.length && !invalid) {
      if (setupState === null) setupState = SetupState.fromPre(pre, keccak256)
      if (!(await applySetupBlock(state, blockchain, block, bal, number, setupState))) setupState = undefined
      last = block
      continue
    }
    setupState = undefined
    try {
      await runBlock(vm, { block, blockAccessList: bal, generate: false, skipHeaderValidation: false })
    } catch (error) {
      if (invalid) continue
      const message = String(error.message ?? error)
      if (/invalid block access list/.test(message) && vm.evm.blockLevelAccessList !== undefined) {
        const given = bal instanceof Uint8Array ? createBlockLevelAccessListFromRLP(bal) : createBlockLevelAccessListFromJSON(bal)
        const { differences, balancesOnly } = balDifferences(given, vm.evm.blockLevelAccessList)
        const kind = balancesOnly ? 'fees' : 'bal'
        const what = balancesOnly ? 'only in balance changes (a gas-rule disagreement)' : 'beyond balance changes'
        throw new Disagreement(kind, `block ${number}: the BAL ethereumjs built differs from the given one ${what}, ${differences.length} entries: ${message}`, differences[0] ?? null, number)
      }
      throw new Disagreement(kindOfRunError(message), `block ${number}: ${message}`, null, number)
    }
    if (invalid) throw new Disagreement('execution', `block ${number}: the fixture expects it refused, ethereumjs accepts it`, null, number)
    await blockchain.putBlock(block)
    last = block
  }

  if (fixture.lastblockhash !== undefined && !equalsBytes(last.hash(), hexToBytes(fixture.lastblockhash))) {
    throw new Disagreement('chain', `last block hash ${bytesToHex(last.hash())}, lastblockhash is ${fixture.lastblockhash}`, 'lastblockhash', number)
  }
  // After the last block ran here the state is at its root already (runBlock checked it), and its caches
  // hold what the post-state check reads: resetting to the same root would empty them and make every slot
  // of the check a walk down the trie (4.4 of `prefetch-greedy-30M`'s 12.5 CPU s). Same values either way.
  if (!equalsBytes(await state.getStateRoot(), last.header.stateRoot)) await state.setStateRoot(last.header.stateRoot)
  if (fixture.postState !== undefined) await checkAccounts(state, fixture.postState)
  else if (fixture.postStateDiff !== undefined) await checkAccounts(state, fixture.postStateDiff)
  if (fixture.postStateHash !== undefined && !equalsBytes(await state.getStateRoot(), hexToBytes(fixture.postStateHash))) {
    throw new Disagreement('post_state', `post-state root ${bytesToHex(await state.getStateRoot())}, postStateHash is ${fixture.postStateHash}`, 'postStateHash', number)
  }
  return number
}

/** The Amsterdam prices that tell the EIP-8038 revisions apart, as the EVM registers them in its common. */
async function gasSchedule() {
  const { common } = await createVM({ common: amsterdamCommon() })
  return {
    cold_sload: Number(common.param('coldsloadGas')),
    create: Number(common.param('createGas')),
    cold_account_access: Number(common.param('coldaccountaccessGas')),
    eips: [2780, 7708, 7928, 7976, 7981, 8037, 8038].filter((eip) => common.isActivatedEIP(eip)),
  }
}

async function versionRecord() {
  // The prices only: balgen names the schedule they belong to (verify/applicability.spec_of_prices).
  const schedule = await gasSchedule()
  return {
    verifier: 'ethereumjs', version: `@ethereumjs/vm ${VM_VERSION}`, node: process.version,
    bal_checkpoints: CLONING_CHECKPOINTS ? 'ethereumjs' : 'copy-on-write', crypto: CRYPTO.description,
    opcode_handlers: WORD_HANDLERS, rlp: RLP_CODEC, bal_sort: BAL_SORT,
    setup_blocks: setupFromBal ? 'applied from their BAL' : 'executed', setup_state: SETUP_STATE.description,
    start_checks: START_CHECKS_PASSED ? 'passed before on these files and this node' : 'run',
    amsterdam_gas: schedule,
  }
}

function fail(message) {
  process.stderr.write(`verify.mjs: ${message}\n`)
  process.exit(2)
}

/** A fixture file's top-level object; a file that is missing or not JSON ends the run as bad input. */
function readDocument(file) {
  let text
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    fail(`${file}: ${error.code === 'ENOENT' ? 'does not exist' : error.message}`)
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    fail(`${file}: not JSON (${error.message})`)
  }
}

const SETUP_FROM_BAL = '--setup-from-bal'
/** Whether setup blocks are applied from their BAL (--setup-from-bal) rather than executed. */
let setupFromBal = false

async function main(args) {
  setupFromBal = args[0] === SETUP_FROM_BAL
  const files = setupFromBal ? args.slice(1) : args
  if (files.length === 0) fail(`usage: node verify.mjs [${SETUP_FROM_BAL}] FIXTURE_FILE...`)
  const missing = files.find((file) => !existsSync(file))
  if (missing !== undefined) fail(`${missing}: does not exist`)
  process.stdout.write(JSON.stringify(await versionRecord()) + '\n')
  let failed = false
  // One file in memory at a time: a 60M suite is hundreds of MB of JSON.
  for (const file of files) {
    for (const [name, fixture] of Object.entries(readDocument(file))) {
      const started = performance.now()
      const cpu = process.cpuUsage()
      const line = { name, file, ok: true, block: null, reason: null, first_difference: null, kind: null }
      try {
        line.block = await verifyFixture(file, name, fixture)
      } catch (error) {
        failed = true
        if (error instanceof Disagreement) {
          Object.assign(line, { ok: false, block: error.block, reason: error.message, first_difference: error.firstDifference, kind: error.kind })
        } else {
          Object.assign(line, { ok: false, reason: `ethereumjs failed: ${error.stack?.split('\n').slice(0, 2).join(' ') ?? error}`, kind: 'error' })
        }
      }
      line.seconds = Number(((performance.now() - started) / 1000).toFixed(3))
      const used = process.cpuUsage(cpu)
      line.cpu_seconds = Number(((used.user + used.system) / 1e6).toFixed(3))
      process.stdout.write(JSON.stringify(line) + '\n')
    }
  }
  process.exitCode = failed ? 1 : 0
}

await main(process.argv.slice(2))
