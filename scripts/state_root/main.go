// Command balgen-state-root computes the state roots of one base allocation
// with some of its accounts replaced, many times over, with go-ethereum's trie.
//
// balgen applies a built chain's blocks to the shared pre-alloc group genesis
// (tens of thousands of accounts) instead of executing them again; each
// block's state is the group's with the accounts the chain has changed so far
// replaced. t8n would load and hash the whole group for every block. This
// loads it once and rehashes only the paths the replaced accounts lie on.
//
// Usage: balgen-state-root [--background DATADIR] BASE_ALLOC
//
// It prints the state root of the allocation in BASE_ALLOC (t8n's alloc JSON),
// then reads one path per line from standard input, each an allocation whose
// accounts replace the base's (an account given as null does not exist), and
// prints the root of the base with those accounts replaced. Bad input ends it
// with one line on standard error and exit code 2.
//
// A request line `apply PATH` replaces the accounts of PATH likewise but keeps
// them: later requests see the state with them replaced, so a chain's blocks
// are sent one at a time, each with only the accounts it changed, and only
// their paths are hashed again. `reset` puts back the base's accounts every
// `apply` since the last reset replaced, and prints the base's root.
//
// With --background, the base is the genesis state of the geth datadir
// DATADIR (a background state balgen-state-build wrote) with BASE_ALLOC's
// accounts put into it: the trie is go-ethereum's over that database, opened
// read-only, so only the paths of the accounts set are resolved and hashed
// again, whatever the size of the state. A request line `depth PATH` (PATH
// a file of addresses, one per line) prints, comma-separated, how many
// nodes a read of each address walks from the root of the base state.
//
// --workload-slots N:SEED gives every account of BASE_ALLOC that has
// code N slots more, generated as balgen-state-build's workload slots
// (scripts/statekeys: WorkloadSlots) from the recipe's seed:
// the workload's own slots then lie in a storage trie of real depth. The
// added slots are never set by a replacement (only the account's own slots
// are), so each account's storage trie is built once and only the paths of
// the slots a replacement changes are hashed again. A request line
// `storage-depth PATH` (PATH a file of `ADDRESS SLOT` lines) prints,
// comma-separated, how many nodes a read of each slot walks from the root
// of its account's storage trie in the base state.
//
// scripts/install-tools.sh builds it from the pinned go-ethereum's source.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/balgen/statekeys"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethdb/memorydb"
	"github.com/ethereum/go-ethereum/ethdb/pebble"
	"github.com/ethereum/go-ethereum/rlp"
	"github.com/ethereum/go-ethereum/trie"
	"github.com/ethereum/go-ethereum/triedb"
	"github.com/ethereum/go-ethereum/triedb/pathdb"
	"github.com/holiman/uint256"
)

// storages holds the storage trie of every account of the base allocation
// that has code or storage, with its workload slots, built once: a replacement of
// such an account changes a few of its own slots, and only their paths are
// hashed again.
type storages struct {
	workloadSlots, seed uint64
	tries               map[common.Address]*trie.Trie
	own                 map[common.Address]map[common.Hash]common.Hash
}

func main() {
	args := os.Args[1:]
	var background string
	held := &storages{tries: map[common.Address]*trie.Trie{}, own: map[common.Address]map[common.Hash]common.Hash{}}
	for len(args) == 3 || len(args) == 5 {
		switch args[0] {
		case "--background":
			background = args[1]
		case "--workload-slots":
			if _, err := fmt.Sscanf(args[1], "%d:%d", &held.workloadSlots, &held.seed); err != nil {
				fail(fmt.Errorf("--workload-slots %s: expected N:SEED", args[1]))
			}
		default:
			fail(fmt.Errorf("%s: unknown option", args[0]))
		}
		args = args[2:]
	}
	if len(args) != 1 {
		fail(errors.New("usage: balgen-state-root [--background DATADIR] [--workload-slots N:SEED] BASE_ALLOC (then one replacement allocation path per line on stdin)"))
	}
	state := trie.NewEmpty(nil)
	if background != "" {
		var err error
		if state, err = openBackground(background); err != nil {
			fail(err)
		}
	}
	if err := replaceAccounts(state, args[0], held, true, nil); err != nil {
		fail(err)
	}
	out := bufio.NewWriter(os.Stdout)
	answer(out, state.Hash().Hex())
	// The base state's nodes as hashed, for the depth of a path: Prove walks them.
	base := state.Copy()
	requests := bufio.NewScanner(os.Stdin)
	// The requests that ask for depths rather than a root, by their first word.
	depthRequests := map[string]func(path string) (string, error){
		"depth":         func(path string) (string, error) { return pathDepths(base, path) },
		"storage-depth": held.slotDepths,
	}
	// The base's leaves that `apply` requests replaced since the last reset.
	kept := leaves{}
	for requests.Scan() {
		word, path, _ := strings.Cut(requests.Text(), " ")
		if depths := depthRequests[word]; depths != nil {
			answered, err := depths(path)
			if err != nil {
				fail(err)
			}
			answer(out, answered)
			continue
		}
		switch {
		case word == "apply":
			if err := replaceAccounts(state, path, held, false, kept.remember(state)); err != nil {
				fail(err)
			}
			answer(out, state.Hash().Hex())
		case requests.Text() == "reset":
			kept.restore(state)
			kept = leaves{}
			answer(out, state.Hash().Hex())
		default:
			// The leaves the request replaces, to put back after: cheaper
			// than copying the whole trie for every request.
			before := leaves{}
			if err := replaceAccounts(state, requests.Text(), held, false, before.remember(state)); err != nil {
				fail(err)
			}
			answer(out, state.Hash().Hex())
			before.restore(state)
		}
	}
	if err := requests.Err(); err != nil {
		fail(fmt.Errorf("reading requests: %v", err))
	}
}

// leaves holds state trie leaves by key as they were before some requests
// replaced them (nil: the key had no leaf).
type leaves map[string][]byte

// remember is the function that keeps a key's leaf in the state the first
// time the key is replaced, before it is.
func (l leaves) remember(state *trie.Trie) func(key []byte) {
	return func(key []byte) {
		if _, seen := l[string(key)]; !seen {
			l[string(key)] = common.CopyBytes(state.MustGet(key))
		}
	}
}

// restore puts every kept leaf back into the state.
func (l leaves) restore(state *trie.Trie) {
	for key, leaf := range l {
		if leaf == nil {
			state.MustDelete([]byte(key))
		} else {
			state.MustUpdate([]byte(key), leaf)
		}
	}
}

// openBackground is the account trie of the genesis state of the geth
// datadir at datadir, over its database opened read-only.
func openBackground(datadir string) (*trie.Trie, error) {
	chaindata := filepath.Join(datadir, "geth", "chaindata")
	kv, err := pebble.New(chaindata, 64, 64, "", true)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %v", chaindata, err)
	}
	db, err := rawdb.Open(kv, rawdb.OpenOptions{Ancient: filepath.Join(chaindata, "ancient"), ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("opening %s: %v", chaindata, err)
	}
	genesis := rawdb.ReadHeader(db, rawdb.ReadCanonicalHash(db, 0), 0)
	if genesis == nil {
		return nil, fmt.Errorf("%s: no genesis block", chaindata)
	}
	nodes := triedb.NewDatabase(db, &triedb.Config{PathDB: pathdb.ReadOnly})
	state, err := trie.New(trie.StateTrieID(genesis.Root), nodes)
	if err != nil {
		return nil, fmt.Errorf("%s: the genesis state %s: %v", chaindata, genesis.Root.Hex(), err)
	}
	return state, nil
}

// pathDepths is, for each address in the file at path (one a line), the
// number of trie nodes from the root to where its account is (or would be).
func pathDepths(state *trie.Trie, path string) (string, error) {
	file, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer file.Close()
	var depths []string
	lines := bufio.NewScanner(file)
	for lines.Scan() {
		if strings.TrimSpace(lines.Text()) == "" {
			continue
		}
		proof := memorydb.New()
		if err := state.Prove(crypto.Keccak256(common.HexToAddress(lines.Text()).Bytes()), proof); err != nil {
			return "", fmt.Errorf("%s: %v", path, err)
		}
		depths = append(depths, strconv.Itoa(proof.Len()))
	}
	return strings.Join(depths, ","), lines.Err()
}

// replaceAccounts sets each account of the allocation at path in the state
// trie, or removes it where the allocation gives null, first calling
// remember (if given) with each leaf's key. The file is decoded one account
// at a time, as t8n decodes its input allocation. The base allocation's
// (base) accounts that have storage get their storage tries built and held.
func replaceAccounts(state *trie.Trie, path string, held *storages, base bool, remember func(key []byte)) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	decoder := json.NewDecoder(bufio.NewReader(file))
	if token, err := decoder.Token(); err != nil || token != json.Delim('{') {
		return fmt.Errorf("%s: not an allocation (a JSON object of accounts)", path)
	}
	for decoder.More() {
		token, err := decoder.Token()
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		address := common.HexToAddress(token.(string))
		var account *types.Account
		if err := decoder.Decode(&account); err != nil {
			return fmt.Errorf("%s: account %s: %v", path, address.Hex(), err)
		}
		key := crypto.Keccak256(address.Bytes())
		if remember != nil {
			remember(key)
		}
		if account == nil {
			state.MustDelete(key)
			continue
		}
		var root common.Hash
		switch {
		case base && (len(account.Code) > 0 || hasStorage(account.Storage)):
			root = held.hold(address, account.Storage, len(account.Code) > 0)
		case held.tries[address] != nil:
			root = held.rootWith(address, account.Storage)
		default:
			root = storageRoot(account.Storage)
		}
		leaf, err := rlp.EncodeToBytes(stateAccount(account, root))
		if err != nil {
			return fmt.Errorf("%s: account %s: %v", path, address.Hex(), err)
		}
		state.MustUpdate(key, leaf)
	}
	if _, err := decoder.Token(); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// stateAccount is the state trie's leaf for an allocation account whose
// storage root is root: what go-ethereum's StateDB commits for it.
func stateAccount(account *types.Account, root common.Hash) *types.StateAccount {
	balance := new(uint256.Int)
	if account.Balance != nil {
		balance = uint256.MustFromBig(account.Balance)
	}
	return &types.StateAccount{
		Nonce:    account.Nonce,
		Balance:  balance,
		Root:     root,
		CodeHash: crypto.Keccak256(account.Code),
	}
}

// hasStorage is whether an account holds a slot (a non-zero value).
func hasStorage(storage map[common.Hash]common.Hash) bool {
	for _, value := range storage {
		if value != (common.Hash{}) {
			return true
		}
	}
	return false
}

// storageLeaf is a slot's value as its storage trie stores it: an RLP
// string without leading zeros.
func storageLeaf(value common.Hash) []byte {
	encoded, _ := rlp.EncodeToBytes(common.TrimLeftZeroes(value[:]))
	return encoded
}

// hold builds the storage trie of the base account at address, its own
// slots and, if it has code (balgen-state-build's rule), its workload
// slots, keeps it, and gives its root.
func (h *storages) hold(address common.Address, storage map[common.Hash]common.Hash, code bool) common.Hash {
	slots := trie.NewEmpty(nil)
	if code {
		for _, slot := range statekeys.WorkloadSlots(h.seed, address, h.workloadSlots) {
			slots.MustUpdate(slot.Hashed[:], slot.Stored)
		}
	}
	own := make(map[common.Hash]common.Hash, len(storage))
	for slot, value := range storage {
		if value != (common.Hash{}) {
			own[slot] = value // the workload's own, should a key ever coincide
			slots.MustUpdate(crypto.Keccak256(slot[:]), storageLeaf(value))
		}
	}
	h.tries[address], h.own[address] = slots, own
	return slots.Hash()
}

// rootWith is the storage root of the held account at address with its own
// slots replaced by storage (its workload slots stay): the trie is changed
// where they differ, hashed, and put back as it was.
func (h *storages) rootWith(address common.Address, storage map[common.Hash]common.Hash) common.Hash {
	slots, own := h.tries[address], h.own[address]
	set := func(slot, value common.Hash) {
		hashed := crypto.Keccak256(slot[:])
		if value == (common.Hash{}) {
			slots.MustDelete(hashed)
		} else {
			slots.MustUpdate(hashed, storageLeaf(value))
		}
	}
	var changed []common.Hash
	for slot, value := range storage {
		if own[slot] != value {
			changed = append(changed, slot)
			set(slot, value)
		}
	}
	for slot := range own {
		if _, kept := storage[slot]; !kept {
			changed = append(changed, slot)
			set(slot, common.Hash{})
		}
	}
	root := slots.Hash()
	for _, slot := range changed {
		set(slot, own[slot])
	}
	return root
}

// slotDepths is, for each `ADDRESS SLOT` line of the file at path, the
// number of nodes from the root of the account's storage trie in the base
// state to where the slot is (or would be); 0 for an account without
// storage there.
func (h *storages) slotDepths(path string) (string, error) {
	file, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer file.Close()
	var depths []string
	lines := bufio.NewScanner(file)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return "", fmt.Errorf("%s: %q: expected ADDRESS SLOT", path, lines.Text())
		}
		slots := h.tries[common.HexToAddress(fields[0])]
		if slots == nil {
			depths = append(depths, "0")
			continue
		}
		proof := memorydb.New()
		if err := slots.Prove(crypto.Keccak256(common.HexToHash(fields[1]).Bytes()), proof); err != nil {
			return "", fmt.Errorf("%s: %v", path, err)
		}
		depths = append(depths, strconv.Itoa(proof.Len()))
	}
	return strings.Join(depths, ","), lines.Err()
}

// storageRoot is the root of an account's storage trie: zero values are not
// stored, others are RLP strings without leading zeros under the slot's hash.
func storageRoot(storage map[common.Hash]common.Hash) common.Hash {
	slots := trie.NewEmpty(nil)
	for slot, value := range storage {
		if value != (common.Hash{}) {
			slots.MustUpdate(crypto.Keccak256(slot[:]), storageLeaf(value))
		}
	}
	return slots.Hash()
}

// answer writes one answer line and flushes it: the caller waits for it
// before its next request.
func answer(out *bufio.Writer, line string) {
	fmt.Fprintln(out, line)
	if err := out.Flush(); err != nil {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "balgen-state-root: %v\n", err)
	os.Exit(2)
}
