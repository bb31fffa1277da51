// A fixture's `pre` in a fresh state manager, as verify.mjs judges every fixture from it; one place, so the
// state one_pass_state.mjs checks its build on at start is made the same way as the states it builds on.
import { Caches, MerkleStateManager } from '@ethereumjs/statemanager'
import { MerklePatriciaTrie } from '@ethereumjs/mpt'
import {
  MapDB,
  ValueEncoding,
  bigIntToUnpaddedBytes,
  createAccount,
  createAddressFromString,
  hexToBytes,
  setLengthLeft,
} from '@ethereumjs/util'

/**
 * The state trie, its trie nodes kept as bytes. The state manager's own default keeps the account trie's
 * nodes as bytes but gives each storage trie (a copy of it with the default options) nodes encoded as
 * hex strings, decoded again at every read: a fifth of the CPU time of a fixture whose setup writes
 * thousands of slots. The nodes, and so every root, are the same either way.
 */
function stateTrie(common) {
  return new MerklePatriciaTrie({ useKeyHashing: true, common, db: new MapDB(), valueEncoding: ValueEncoding.Bytes })
}

/**
 * The genesis state of `pre` in a fresh state manager, and its root. The state manager keeps ethereumjs's
 * account, code and storage caches (as its own client does): writes reach the trie once per block, not once
 * per transaction, which halves the CPU time of a 30M block; what is computed is the same.
 */
export async function genesisState(common, pre) {
  const state = new MerkleStateManager({ common, caches: new Caches(), trie: stateTrie(common) })
  for (const [address, account] of Object.entries(pre)) {
    const at = createAddressFromString(address)
    await state.putAccount(at, createAccount({ nonce: BigInt(account.nonce), balance: BigInt(account.balance) }))
    if (account.code !== undefined && account.code !== '0x' && account.code !== '') {
      await state.putCode(at, hexToBytes(account.code))
    }
    for (const [slot, value] of Object.entries(account.storage ?? {})) {
      const word = setLengthLeft(bigIntToUnpaddedBytes(BigInt(slot)), 32)
      if (BigInt(value) !== 0n) await state.putStorage(at, word, bigIntToUnpaddedBytes(BigInt(value)))
    }
  }
  await state.checkpoint()
  await state.commit()
  await state.flush()
  return { state, root: await state.getStateRoot() }
}
