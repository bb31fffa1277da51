// Command balgen-state-build writes a background state, generated from a
// small recipe, straight into go-ethereum's database: a geth datadir whose
// genesis state is that background state.
//
// A state of tens of millions of accounts cannot go through a genesis file
// (geth would hold it as JSON and hash it account by account). This builder
// generates every account and storage slot from the recipe's seed, in the
// order of their hashed keys, so go-ethereum's StackTrie hashes each trie as
// a stream and hands each finished node to a callback that writes it where
// geth's path-based trie database keeps it; the flat state (geth's snapshot)
// is written beside it, and marked complete, so geth neither regenerates it
// nor walks the trie when it opens the datadir. Nothing but the largest
// contract's sorted slot keys and the sorted account keys is held in memory.
//
// Usage: balgen-state-build JOB.json, balgen-state-build --overlay OVERLAY.json,
// or balgen-state-build --version
//
// JOB.json holds {"generation", "recipe", "genesis", "datadir"}: the
// generation rules the recipe is read with (must be this builder's), the
// recipe (see balgen/model/state_recipe.py), a geth genesis document whose
// alloc is empty (its chain config and header fields), and the geth datadir
// to create. It prints one JSON object on standard output: the state root,
// the genesis hash geth will report, what was written and the depths of the
// account trie's leaves. Progress goes to standard error. Bad input ends it
// with one line on standard error and exit code 2. --version prints what a
// built state depends on: the generation rules and go-ethereum's version.
//
// --export-alloc JOB.json writes the recipe's state (JOB.json's `recipe` and
// `generation`; no datadir is made) to standard output as the members of a
// go-ethereum genesis alloc, account by account in the recipe's order: what
// a client without balgen's builder starts from (`geth init` reads it as
// `alloc`). --export-jsonl JOB.json writes the same accounts as the lines of
// `reth init-state`'s JSON-lines dump (without its root line).
// JOB.json's optional `alloc` (a path to an allocation, for --export-alloc)
// is written first, with its workload slots, in place of the recipe's
// accounts at its addresses.
//
// --overlay puts accounts into a copy of a built state and makes that its
// genesis: OVERLAY.json holds {"datadir", "alloc", "genesis", "recipe"}, the
// copy's datadir, a path to an allocation (t8n's alloc JSON, as a pre-alloc
// group's `pre`), the genesis document and the recipe, whose
// `workload_slots` and `seed` give each account of the allocation that has
// code that many more slots (scripts/statekeys). The accounts replace any
// at their addresses in the built state: each storage trie is streamed into
// the database as the builder writes the recipe's, the account trie's
// changed paths and the flat state are written as geth's path database
// commits them, and the genesis block is written anew over the resulting
// root. It prints {"state-root", "genesis-hash"}.
//
// scripts/install-tools.sh builds it from the pinned go-ethereum's source.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/balgen/statekeys"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethdb"
	"github.com/ethereum/go-ethereum/ethdb/pebble"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/ethereum/go-ethereum/trie"
	"github.com/ethereum/go-ethereum/trie/trienode"
	"github.com/ethereum/go-ethereum/triedb"
	"github.com/ethereum/go-ethereum/triedb/pathdb"
	"github.com/ethereum/go-ethereum/version"
	"github.com/holiman/uint256"
)

// generation is the version of the rules below that turn a recipe into
// accounts and slots; balgen names its cache after it, so a change of any
// rule must raise it (balgen/model/state_recipe.py's GENERATION).
const generation = 1

// batchBytes is how much a write batch gathers before it goes to the
// database: large batches keep pebble's per-write overhead out of the way.
const batchBytes = 16 << 20

type recipe struct {
	Seed         uint64  `json:"seed"`
	Accounts     uint64  `json:"accounts"`
	Contracts    uint64  `json:"contracts"`
	Slots        uint64  `json:"slots"`
	Distribution string  `json:"distribution"`
	ZipfExponent float64 `json:"zipf_exponent"`
	CodeMin      uint64  `json:"code_min"`
	CodeMax      uint64  `json:"code_max"`
	// WorkloadSlots is not part of the built state: it is how many slots
	// each account of a group's pre-state that has code gets beside its
	// own when that pre-state is put into the state (withWorkloadSlots,
	// storageSlots).
	WorkloadSlots uint64 `json:"workload_slots"`
}

type job struct {
	Generation int             `json:"generation"`
	Recipe     recipe          `json:"recipe"`
	Genesis    json.RawMessage `json:"genesis"`
	Datadir    string          `json:"datadir"`
	// Alloc (--export-alloc) is an allocation written first, with its
	// accounts' workload slots, in place of the recipe's accounts at the same
	// addresses: a group's pre-state, as --overlay puts it into the state.
	Alloc string `json:"alloc,omitempty"`
}

// summary is what the builder reports on standard output.
type summary struct {
	StateRoot         common.Hash `json:"state-root"`
	GenesisHash       common.Hash `json:"genesis-hash"`
	Accounts          uint64      `json:"accounts"`
	Contracts         uint64      `json:"contracts"`
	Slots             uint64      `json:"slots"`
	LargestStorage    uint64      `json:"largest-storage"`
	CodeBytes         uint64      `json:"code-bytes"`
	AccountTrieNodes  uint64      `json:"account-trie-nodes"`
	StorageTrieNodes  uint64      `json:"storage-trie-nodes"`
	AccountLeafDepths []uint64    `json:"account-leaf-depths"`
	StorageLeafDepths []uint64    `json:"storage-leaf-depths"`
	Seconds           float64     `json:"seconds"`
}

// identity is what a built state depends on beside its recipe: the rules
// that generate it and the go-ethereum whose database layout it writes.
var identity = fmt.Sprintf("balgen-state-build generation %d, go-ethereum v%d.%d.%d", generation, version.Major, version.Minor, version.Patch)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println(identity)
		return
	}
	if len(os.Args) == 3 && (os.Args[1] == "--export-alloc" || os.Args[1] == "--export-jsonl") {
		if err := exportAccounts(os.Args[2], os.Args[1] == "--export-jsonl"); err != nil {
			fail(err)
		}
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "--overlay" {
		result, err := overlay(os.Args[2])
		if err != nil {
			fail(err)
		}
		out, _ := json.Marshal(result)
		fmt.Println(string(out))
		return
	}
	if len(os.Args) != 2 {
		fail(errors.New("usage: balgen-state-build JOB.json | --overlay OVERLAY.json | --version"))
	}
	blob, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	var task job
	if err := json.Unmarshal(blob, &task); err != nil {
		fail(fmt.Errorf("%s: %v", os.Args[1], err))
	}
	if task.Generation != generation {
		fail(fmt.Errorf("%s: generation %d, this builder generates %d (rebuild it with scripts/install-tools.sh)", os.Args[1], task.Generation, generation))
	}
	if err := check(task.Recipe); err != nil {
		fail(fmt.Errorf("%s: recipe: %v", os.Args[1], err))
	}
	genesis := new(core.Genesis)
	if err := json.Unmarshal(task.Genesis, genesis); err != nil {
		fail(fmt.Errorf("%s: genesis: %v", os.Args[1], err))
	}
	if genesis.Config == nil || len(genesis.Alloc) != 0 {
		fail(fmt.Errorf("%s: genesis: needs a chain config and an empty alloc", os.Args[1]))
	}
	result, err := build(task.Recipe, genesis, task.Datadir)
	if err != nil {
		fail(err)
	}
	out, _ := json.Marshal(result)
	fmt.Println(string(out))
}

func check(r recipe) error {
	switch {
	case r.Contracts > r.Accounts:
		return fmt.Errorf("contracts (%d) more than accounts (%d)", r.Contracts, r.Accounts)
	case r.Slots > 0 && r.Contracts == 0:
		return errors.New("slots without contracts to hold them")
	case r.Accounts >= 1<<32:
		return errors.New("accounts: at most 2^32-1")
	case r.Distribution != "uniform" && r.Distribution != "zipf":
		return fmt.Errorf("distribution %q: uniform or zipf", r.Distribution)
	case r.Distribution == "zipf" && !(r.ZipfExponent > 0):
		return errors.New("zipf_exponent must be positive")
	case r.CodeMin == 0 || r.CodeMin > r.CodeMax:
		return fmt.Errorf("code sizes %d-%d: need 1 <= code_min <= code_max", r.CodeMin, r.CodeMax)
	}
	return nil
}

// derived is the keccak-256 of a domain, the seed and the given numbers:
// every value of the state comes from one such hash, so the state is the
// same wherever the recipe is built.
func derived(domain string, seed uint64, numbers ...uint64) []byte {
	buffer := make([]byte, 0, len(domain)+8*(1+len(numbers)))
	buffer = append(buffer, domain...)
	buffer = binary.BigEndian.AppendUint64(buffer, seed)
	for _, number := range numbers {
		buffer = binary.BigEndian.AppendUint64(buffer, number)
	}
	return crypto.Keccak256(buffer)
}

// accountAddress is account i's address; accounts 0 to contracts-1 are the
// contracts, in the order of their storage sizes (largest first under zipf).
func accountAddress(seed, index uint64) common.Address {
	return common.BytesToAddress(derived("balgen/state/account", seed, index)[12:])
}

// slotKey is slot j of contract c: a hash, like the mapping and array slots
// that hold most of a real network's storage.
func slotKey(seed, contract, slot uint64) common.Hash {
	return common.BytesToHash(derived("balgen/state/slot", seed, contract, slot))
}

// withWorkloadSlots adds the recipe's workload slots to every account of
// alloc that has code (a workload's contracts, whose storage the block
// reads and writes, and the system contracts), so that the slots the block
// touches lie in a storage trie of some depth, as a real contract's do; the
// added slots are never read or written by the workload, so its execution,
// gas and access list are the same. The rule is scripts/statekeys', which
// balgen-state-root uses too.
func withWorkloadSlots(r recipe, alloc types.GenesisAlloc) {
	for address, account := range alloc {
		if r.WorkloadSlots == 0 || len(account.Code) == 0 {
			continue
		}
		storage := make(map[common.Hash]common.Hash, len(account.Storage)+int(r.WorkloadSlots))
		for j := uint64(0); j < r.WorkloadSlots; j++ {
			key := statekeys.WorkloadSlotKey(r.Seed, address, j)
			storage[key] = common.BytesToHash(statekeys.SlotValue(crypto.Keccak256Hash(key[:])))
		}
		for key, value := range account.Storage {
			storage[key] = value // the workload's own, should a key ever coincide
		}
		account.Storage = storage
		alloc[address] = account
	}
}

// code is contract c's code: it starts with STOP, so a call runs nothing.
func code(r recipe, contract uint64) []byte {
	size := r.CodeMin + binary.BigEndian.Uint64(derived("balgen/state/code-size", r.Seed, contract)[:8])%(r.CodeMax-r.CodeMin+1)
	out := make([]byte, 0, size+32)
	for block := uint64(0); uint64(len(out)) < size; block++ {
		out = append(out, derived("balgen/state/code", r.Seed, contract, block)...)
	}
	out = out[:size]
	out[0] = 0x00
	return out
}

// plainAccount is a plain account's nonce and balance.
func plainAccount(seed, index uint64) (uint64, *uint256.Int) {
	hash := derived("balgen/state/balance", seed, index)
	nonce := uint64(binary.BigEndian.Uint16(hash[:2]) % 1024)
	return nonce, new(uint256.Int).SetBytes(hash[2:14])
}

// storageCounts is the number of slots each contract holds: equal shares,
// or Zipf's law over the contracts' ranks (contract c's weight 1/(c+1)^s),
// each share rounded down and the rest given one each to the largest.
func storageCounts(r recipe) []uint64 {
	counts := make([]uint64, r.Contracts)
	if r.Contracts == 0 {
		return counts
	}
	weights := make([]float64, r.Contracts)
	var total float64
	for c := range weights {
		weights[c] = 1
		if r.Distribution == "zipf" {
			weights[c] = 1 / math.Pow(float64(c+1), r.ZipfExponent)
		}
		total += weights[c]
	}
	var given uint64
	for c := range counts {
		counts[c] = uint64(math.Floor(float64(r.Slots) * weights[c] / total))
		given += counts[c]
	}
	for c := uint64(0); given < r.Slots; c = (c + 1) % r.Contracts {
		counts[c]++
		given++
	}
	return counts
}

// keyed is an account's hashed key and its index in the recipe.
type keyed struct {
	hash  common.Hash
	index uint32
}

// writer gathers writes into large batches.
type writer struct {
	db    ethdb.Database
	batch ethdb.Batch
}

func (w *writer) flushIfFull() error {
	if w.batch.ValueSize() < batchBytes {
		return nil
	}
	if err := w.batch.Write(); err != nil {
		return err
	}
	w.batch.Reset()
	return nil
}

// writeStorage streams the slots of the account whose hashed address is
// owner, given in the order of their hashed keys, through a StackTrie into
// the database: each finished node where geth's path database keeps it
// (and to onNode, if given), each slot in the flat state. Only the trie's
// unfinished path is held, however many slots there are. It gives the
// storage root.
func (w *writer) writeStorage(owner common.Hash, slots iter.Seq[statekeys.Slot], onNode func(path, blob []byte)) (common.Hash, error) {
	storage := trie.NewStackTrie(func(path []byte, hash common.Hash, blob []byte) {
		if onNode != nil {
			onNode(path, blob)
		}
		rawdb.WriteStorageTrieNode(w.batch, owner, path, blob)
	})
	for slot := range slots {
		rawdb.WriteStorageSnapshot(w.batch, owner, slot.Hashed, slot.Stored)
		if err := storage.Update(slot.Hashed[:], slot.Stored); err != nil {
			return common.Hash{}, err
		}
		if err := w.flushIfFull(); err != nil {
			return common.Hash{}, err
		}
	}
	return storage.Hash(), nil
}

// depthCounter counts the leaves a StackTrie commits by their depth: the
// nodes a read walks from the root to reach them.
type depthCounter struct {
	nodes  uint64
	depths []uint64
}

func (d *depthCounter) add(path, blob []byte) {
	d.nodes++
	elements, _, err := rlp.SplitList(blob)
	if err != nil {
		return
	}
	if count, _ := rlp.CountValues(elements); count != 2 {
		return // a branch node
	}
	key, _, err := rlp.SplitString(elements)
	if err != nil || len(key) == 0 || key[0]>>4 < 2 {
		return // an extension node
	}
	// A leaf at path p sits under one node per nibble of p at most; the
	// nodes above it are the branches on p and any extension between them,
	// so the path's length plus one bounds the walk, and is exact where no
	// extension shortens it (a trie of random keys has none near the top).
	depth := len(path) + 1
	for len(d.depths) <= depth {
		d.depths = append(d.depths, 0)
	}
	d.depths[depth]++
}

func build(r recipe, genesis *core.Genesis, datadir string) (*summary, error) {
	started := time.Now()
	// With its (empty) chain and state history freezers, as geth lays out a
	// datadir: geth's offline tools (`geth snapshot verify-state`) open it
	// read-only and need their files to be there.
	kv, db, chaindata, err := openChaindata(datadir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	states, err := rawdb.NewStateFreezer(filepath.Join(chaindata, "ancient"), false, false)
	if err != nil {
		return nil, fmt.Errorf("creating the state history freezer: %v", err)
	}
	states.Close()
	w := &writer{db: db, batch: db.NewBatch()}
	result := &summary{Contracts: r.Contracts}

	// Every account's hashed key, sorted: the account trie must be fed in that order.
	accounts := make([]keyed, r.Accounts)
	for i := range accounts {
		address := accountAddress(r.Seed, uint64(i))
		accounts[i] = keyed{hash: crypto.Keccak256Hash(address[:]), index: uint32(i)}
	}
	slices.SortFunc(accounts, func(a, b keyed) int { return bytes.Compare(a.hash[:], b.hash[:]) })
	counts := storageCounts(r)
	fmt.Fprintf(os.Stderr, "balgen-state-build: %d accounts sorted in %.1f s\n", r.Accounts, time.Since(started).Seconds())

	var writeErr error
	accountDepths := &depthCounter{}
	accountTrie := trie.NewStackTrie(func(path []byte, hash common.Hash, blob []byte) {
		accountDepths.add(path, blob)
		rawdb.WriteAccountTrieNode(w.batch, path, blob)
	})
	storageDepths := &depthCounter{}
	var slotHashes []common.Hash
	lastReport := time.Now()
	for done, account := range accounts {
		index := uint64(account.index)
		state := types.StateAccount{Root: types.EmptyRootHash, CodeHash: types.EmptyCodeHash.Bytes(), Balance: new(uint256.Int)}
		if index < r.Contracts {
			state.Nonce = 1
			contractCode := code(r, index)
			codeHash := crypto.Keccak256Hash(contractCode)
			rawdb.WriteCode(w.batch, codeHash, contractCode)
			state.CodeHash = codeHash.Bytes()
			result.CodeBytes += uint64(len(contractCode))
			slotHashes = slotHashes[:0]
			for j := uint64(0); j < counts[index]; j++ {
				key := slotKey(r.Seed, index, j)
				slotHashes = append(slotHashes, crypto.Keccak256Hash(key[:]))
			}
			slices.SortFunc(slotHashes, func(a, b common.Hash) int { return bytes.Compare(a[:], b[:]) })
			if len(slotHashes) > 0 {
				slots := func(yield func(statekeys.Slot) bool) {
					for _, hashed := range slotHashes {
						encoded, _ := rlp.EncodeToBytes(statekeys.SlotValue(hashed))
						if !yield(statekeys.Slot{Hashed: hashed, Stored: encoded}) {
							return
						}
					}
				}
				if state.Root, err = w.writeStorage(account.hash, slots, storageDepths.add); err != nil {
					return nil, err
				}
				result.Slots += uint64(len(slotHashes))
				result.LargestStorage = max(result.LargestStorage, uint64(len(slotHashes)))
			}
		} else {
			state.Nonce, state.Balance = plainAccount(r.Seed, index)
		}
		rawdb.WriteAccountSnapshot(w.batch, account.hash, types.SlimAccountRLP(state))
		full, err := rlp.EncodeToBytes(&state)
		if err != nil {
			return nil, err
		}
		if err := accountTrie.Update(account.hash[:], full); err != nil {
			return nil, err
		}
		if writeErr = w.flushIfFull(); writeErr != nil {
			return nil, writeErr
		}
		result.Accounts++
		if time.Since(lastReport) > 10*time.Second {
			lastReport = time.Now()
			fmt.Fprintf(os.Stderr, "balgen-state-build: %d of %d accounts, %d slots, %.0f s\n", done+1, r.Accounts, result.Slots, time.Since(started).Seconds())
		}
	}
	accounts = nil
	root := accountTrie.Hash()
	if r.Accounts == 0 {
		root = types.EmptyRootHash
	}
	result.StateRoot = root

	// The flat state is complete and belongs to this root: geth must not regenerate it.
	rawdb.WriteSnapshotRoot(w.batch, root)
	marker, _ := rlp.EncodeToBytes(&generatorMarker{Done: true, Accounts: result.Accounts, Slots: result.Slots})
	rawdb.WriteSnapshotGenerator(w.batch, marker)
	rawdb.WritePersistentStateID(w.batch, 0)

	if err := w.batch.Write(); err != nil {
		return nil, err
	}
	// The genesis block over that state, written as core.Genesis.Commit writes it.
	block, err := writeGenesis(db, genesis, root)
	if err != nil {
		return nil, err
	}
	if err := kv.SyncKeyValue(); err != nil {
		return nil, err
	}
	result.GenesisHash = block.Hash()
	result.AccountTrieNodes, result.AccountLeafDepths = accountDepths.nodes, accountDepths.depths
	result.StorageTrieNodes, result.StorageLeafDepths = storageDepths.nodes, storageDepths.depths
	result.Seconds = time.Since(started).Seconds()
	return result, nil
}

// exportAccounts streams the recipe's accounts, in the recipe's order, as
// the members of a genesis alloc JSON object (`"0xaddress":{...}`, each on a
// line of its own, separated by commas; the caller writes the braces) or,
// with jsonl, as the lines of the JSON-lines dump `reth init-state` reads
// after its root line (one account a line, its address a member). With the
// job's `alloc` (genesis alloc members only), its accounts come first, in
// address order and with their workload slots (withWorkloadSlots), and the
// recipe's accounts at their addresses are left out, as --overlay replaces
// them.
func exportAccounts(path string, jsonl bool) error {
	blob, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var task job
	if err := json.Unmarshal(blob, &task); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if task.Generation != generation {
		return fmt.Errorf("%s: generation %d, this builder generates %d", path, task.Generation, generation)
	}
	r := task.Recipe
	if err := check(r); err != nil {
		return fmt.Errorf("%s: recipe: %v", path, err)
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	written := 0
	skip := make(map[common.Address]bool)
	if task.Alloc != "" {
		if jsonl {
			return fmt.Errorf("%s: alloc: only a genesis alloc export takes one", path)
		}
		allocBlob, err := os.ReadFile(task.Alloc)
		if err != nil {
			return err
		}
		var alloc types.GenesisAlloc
		if err := alloc.UnmarshalJSON(allocBlob); err != nil {
			return fmt.Errorf("%s: %v", task.Alloc, err)
		}
		withWorkloadSlots(r, alloc)
		addresses := make([]common.Address, 0, len(alloc))
		for address := range alloc {
			addresses = append(addresses, address)
			skip[address] = true
		}
		slices.SortFunc(addresses, func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) })
		for _, address := range addresses {
			member, err := json.Marshal(alloc[address])
			if err != nil {
				return fmt.Errorf("%s: account %s: %v", task.Alloc, address.Hex(), err)
			}
			if written > 0 {
				out.WriteString(",")
			}
			fmt.Fprintf(out, "\n\"%s\":%s", strings.ToLower(address.Hex()), member)
			written++
		}
	}
	counts := storageCounts(r)
	for index := uint64(0); index < r.Accounts; index++ {
		address := accountAddress(r.Seed, index)
		if skip[address] {
			continue
		}
		switch {
		case jsonl:
			fmt.Fprintf(out, "{\"address\":\"%s\",", strings.ToLower(address.Hex()))
		case written > 0:
			fmt.Fprintf(out, ",\n\"%s\":{", strings.ToLower(address.Hex()))
		default:
			fmt.Fprintf(out, "\n\"%s\":{", strings.ToLower(address.Hex()))
		}
		written++
		if index >= r.Contracts {
			nonce, balance := plainAccount(r.Seed, index)
			fmt.Fprintf(out, "\"balance\":\"%s\",\"nonce\":\"%#x\"}", balance.Hex(), nonce)
		} else {
			fmt.Fprintf(out, "\"balance\":\"0x0\",\"nonce\":\"0x1\",\"code\":\"%s\",\"storage\":{", hexutil.Encode(code(r, index)))
			for j := uint64(0); j < counts[index]; j++ {
				if j > 0 {
					out.WriteString(",")
				}
				key := slotKey(r.Seed, index, j)
				value := common.BytesToHash(statekeys.SlotValue(crypto.Keccak256Hash(key[:])))
				fmt.Fprintf(out, "\"%s\":\"%s\"", key.Hex(), value.Hex())
			}
			out.WriteString("}}")
		}
		if jsonl {
			out.WriteString("\n")
		}
	}
	return out.Flush()
}

type overlayJob struct {
	Datadir string          `json:"datadir"`
	Alloc   string          `json:"alloc"`
	Genesis json.RawMessage `json:"genesis"`
	Recipe  recipe          `json:"recipe"`
}

type overlaid struct {
	StateRoot   common.Hash `json:"state-root"`
	GenesisHash common.Hash `json:"genesis-hash"`
}

// overlay puts the accounts of an allocation, in place of any at their
// addresses, into the genesis state of a datadir and writes the genesis
// block of the resulting state. It writes what go-ethereum's StateDB and
// path database would commit for them (their storage tries with the
// workload slots, their code, the account trie's changed paths, the flat
// state), but as the builder writes: each account's storage trie streamed
// through a StackTrie in the order of its hashed keys, so memory holds one
// account's slots at a time where the StateDB held every slot of every
// account until its commit (512 workload slots for 13,214 contracts took 24
// GB). The account trie is the built one with the accounts set, committed
// in memory (a group's accounts, their paths) and written in place.
func overlay(path string) (*overlaid, error) {
	blob, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var task overlayJob
	if err := json.Unmarshal(blob, &task); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	genesis := new(core.Genesis)
	if err := json.Unmarshal(task.Genesis, genesis); err != nil || genesis.Config == nil {
		return nil, fmt.Errorf("%s: genesis: needs a chain config (%v)", path, err)
	}
	allocBlob, err := os.ReadFile(task.Alloc)
	if err != nil {
		return nil, err
	}
	var alloc types.GenesisAlloc
	if err := alloc.UnmarshalJSON(allocBlob); err != nil {
		return nil, fmt.Errorf("%s: %v", task.Alloc, err)
	}
	kv, db, chaindata, err := openChaindata(task.Datadir)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	base := rawdb.ReadHeader(db, rawdb.ReadCanonicalHash(db, 0), 0)
	if base == nil {
		return nil, fmt.Errorf("%s: no genesis block", chaindata)
	}
	// Read-only: the path database only resolves the built account trie's
	// nodes; this function writes the changes itself.
	nodes := triedb.NewDatabase(db, &triedb.Config{PathDB: pathdb.ReadOnly})
	defer nodes.Close()
	accounts, err := trie.New(trie.StateTrieID(base.Root), nodes)
	if err != nil {
		return nil, fmt.Errorf("%s: the genesis state %s: %v", chaindata, base.Root.Hex(), err)
	}
	w := &writer{db: db, batch: db.NewBatch()}
	addresses := slices.SortedFunc(maps.Keys(alloc), func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) })
	for _, address := range addresses {
		account := alloc[address]
		hashed := crypto.Keccak256Hash(address[:])
		if err := checkReplaceable(accounts, hashed); err != nil {
			return nil, fmt.Errorf("%s: account %s: %v", task.Alloc, address.Hex(), err)
		}
		state := types.StateAccount{Nonce: account.Nonce, Balance: new(uint256.Int), CodeHash: types.EmptyCodeHash.Bytes()}
		if account.Balance != nil {
			state.Balance = uint256.MustFromBig(account.Balance)
		}
		workloadSlots := uint64(0)
		if len(account.Code) > 0 {
			codeHash := crypto.Keccak256Hash(account.Code)
			rawdb.WriteCode(w.batch, codeHash, account.Code)
			state.CodeHash = codeHash.Bytes()
			workloadSlots = task.Recipe.WorkloadSlots
		}
		slots := storageSlots(account.Storage, statekeys.WorkloadSlots(task.Recipe.Seed, address, workloadSlots))
		if state.Root, err = w.writeStorage(hashed, slices.Values(slots), nil); err != nil {
			return nil, err
		}
		rawdb.WriteAccountSnapshot(w.batch, hashed, types.SlimAccountRLP(state))
		full, err := rlp.EncodeToBytes(&state)
		if err != nil {
			return nil, err
		}
		if err := accounts.Update(hashed[:], full); err != nil {
			return nil, err
		}
	}
	root, changed := accounts.Commit(false)
	if changed != nil {
		changed.ForEachWithOrder(func(path string, node *trienode.Node) {
			if node.IsDeleted() {
				rawdb.DeleteAccountTrieNode(w.batch, []byte(path))
			} else {
				rawdb.WriteAccountTrieNode(w.batch, []byte(path), node.Blob)
			}
		})
	}
	// The flat state, now the new root's, stays complete (the builder's marker).
	rawdb.WriteSnapshotRoot(w.batch, root)
	if err := w.batch.Write(); err != nil {
		return nil, err
	}
	block, err := writeGenesis(db, genesis, root)
	if err != nil {
		return nil, err
	}
	if err := kv.SyncKeyValue(); err != nil {
		return nil, err
	}
	return &overlaid{StateRoot: root, GenesisHash: block.Hash()}, nil
}

// checkReplaceable refuses to replace an account of the built state that
// has storage: its storage trie would have to be deleted node by node. The
// recipe's contracts lie at addresses derived from its seed, which no
// group's account has.
func checkReplaceable(accounts *trie.Trie, hashed common.Hash) error {
	leaf, err := accounts.Get(hashed[:])
	if err != nil || leaf == nil {
		return err
	}
	var existing types.StateAccount
	if err := rlp.DecodeBytes(leaf, &existing); err != nil {
		return err
	}
	if existing.Root != types.EmptyRootHash {
		return errors.New("the background state holds a contract with storage at that address")
	}
	return nil
}

// storageSlots is an account's storage as its trie holds it, in the order
// of the hashed keys: its own slots (zero values are no slot) and its
// workload slots (in that order), its own winning should a key coincide, as
// balgen-state-root builds it.
func storageSlots(own map[common.Hash]common.Hash, workload []statekeys.Slot) []statekeys.Slot {
	slots := make([]statekeys.Slot, 0, len(own)+len(workload))
	mine := make(map[common.Hash]bool, len(own))
	for key, value := range own {
		if value == (common.Hash{}) {
			continue
		}
		hashed := crypto.Keccak256Hash(key[:])
		stored, _ := rlp.EncodeToBytes(common.TrimLeftZeroes(value[:]))
		slots = append(slots, statekeys.Slot{Hashed: hashed, Stored: stored})
		mine[hashed] = true
	}
	for _, slot := range workload {
		if !mine[slot.Hashed] {
			slots = append(slots, slot)
		}
	}
	slices.SortFunc(slots, func(a, b statekeys.Slot) int { return bytes.Compare(a.Hashed[:], b.Hashed[:]) })
	return slots
}

// openChaindata opens, to write, the database of the geth datadir at
// datadir with its freezers: the key-value store (to sync it), the database
// and the chaindata folder's path (for messages).
func openChaindata(datadir string) (*pebble.Database, ethdb.Database, string, error) {
	chaindata := filepath.Join(datadir, "geth", "chaindata")
	kv, err := pebble.New(chaindata, 512, 1024, "", false)
	if err != nil {
		return nil, nil, "", fmt.Errorf("opening %s: %v", chaindata, err)
	}
	db, err := rawdb.Open(kv, rawdb.OpenOptions{Ancient: filepath.Join(chaindata, "ancient")})
	if err != nil {
		kv.Close()
		return nil, nil, "", fmt.Errorf("opening %s: %v", chaindata, err)
	}
	return kv, db, chaindata, nil
}

// writeGenesis writes the genesis block of `genesis` over the state `root`
// as core.Genesis.Commit does: the block, its canonical hash, the head
// pointers and the chain config.
func writeGenesis(db ethdb.KeyValueStore, genesis *core.Genesis, root common.Hash) (*types.Block, error) {
	empty := genesis.ToBlock() // an empty alloc: only the state root differs
	header := empty.Header()
	header.Root = root
	block := empty.WithSeal(header)
	batch := db.NewBatch()
	rawdb.WriteBlock(batch, block)
	rawdb.WriteReceipts(batch, block.Hash(), 0, nil)
	rawdb.WriteCanonicalHash(batch, block.Hash(), 0)
	rawdb.WriteHeadBlockHash(batch, block.Hash())
	rawdb.WriteHeadFastBlockHash(batch, block.Hash())
	rawdb.WriteHeadHeaderHash(batch, block.Hash())
	rawdb.WriteChainConfig(batch, block.Hash(), genesis.Config)
	return block, batch.Write()
}

// generatorMarker is pathdb's record of its flat state's generation
// (triedb/pathdb's journalGenerator, same fields in the same order): Done
// tells geth the flat state is whole.
type generatorMarker struct {
	Wiping   bool
	Done     bool
	Marker   []byte
	Accounts uint64
	Slots    uint64
	Storage  uint64
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "balgen-state-build: %v\n", err)
	os.Exit(2)
}
