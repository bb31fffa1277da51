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
// With --background, the base is the genesis state of the geth datadir
// DATADIR (a background state balgen-state-build wrote) with BASE_ALLOC's
// accounts put into it: the trie is go-ethereum's over that database, opened
// read-only, so only the paths of the accounts set are resolved and hashed
// again, whatever the size of the state. A request line `depth PATH` (PATH
// a file of addresses, one per line) prints, comma-separated, how many
// nodes a read of each address walks from the root of the base state.
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

func main() {
	args := os.Args[1:]
	var background string
	if len(args) == 3 && args[0] == "--background" {
		background, args = args[1], args[2:]
	}
	if len(args) != 1 {
		fail(errors.New("usage: balgen-state-root [--background DATADIR] BASE_ALLOC (then one replacement allocation path per line on stdin)"))
	}
	state := trie.NewEmpty(nil)
	if background != "" {
		var err error
		if state, err = openBackground(background); err != nil {
			fail(err)
		}
	}
	if err := replaceAccounts(state, args[0], nil); err != nil {
		fail(err)
	}
	out := bufio.NewWriter(os.Stdout)
	answer(out, state.Hash())
	// The base state's nodes as hashed, for the depth of a path: Prove walks them.
	base := state.Copy()
	requests := bufio.NewScanner(os.Stdin)
	for requests.Scan() {
		if path, ok := strings.CutPrefix(requests.Text(), "depth "); ok {
			depths, err := pathDepths(base, path)
			if err != nil {
				fail(err)
			}
			fmt.Fprintln(out, depths)
			if err := out.Flush(); err != nil {
				os.Exit(1)
			}
			continue
		}
		// The base's leaves the request replaces, to put back after: cheaper
		// than copying the whole trie for every request.
		before := make(map[string][]byte)
		remember := func(key []byte) {
			if _, seen := before[string(key)]; !seen {
				before[string(key)] = common.CopyBytes(state.MustGet(key))
			}
		}
		if err := replaceAccounts(state, requests.Text(), remember); err != nil {
			fail(err)
		}
		answer(out, state.Hash())
		for key, leaf := range before {
			if leaf == nil {
				state.MustDelete([]byte(key))
			} else {
				state.MustUpdate([]byte(key), leaf)
			}
		}
	}
	if err := requests.Err(); err != nil {
		fail(fmt.Errorf("reading requests: %v", err))
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
// at a time, as t8n decodes its input allocation.
func replaceAccounts(state *trie.Trie, path string, remember func(key []byte)) error {
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
		leaf, err := rlp.EncodeToBytes(stateAccount(account))
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

// stateAccount is the state trie's leaf for an allocation account: what
// go-ethereum's StateDB commits for it.
func stateAccount(account *types.Account) *types.StateAccount {
	balance := new(uint256.Int)
	if account.Balance != nil {
		balance = uint256.MustFromBig(account.Balance)
	}
	return &types.StateAccount{
		Nonce:    account.Nonce,
		Balance:  balance,
		Root:     storageRoot(account.Storage),
		CodeHash: crypto.Keccak256(account.Code),
	}
}

// storageRoot is the root of an account's storage trie: zero values are not
// stored, others are RLP strings without leading zeros under the slot's hash.
func storageRoot(storage map[common.Hash]common.Hash) common.Hash {
	slots := trie.NewEmpty(nil)
	for slot, value := range storage {
		if value == (common.Hash{}) {
			continue
		}
		encoded, _ := rlp.EncodeToBytes(common.TrimLeftZeroes(value[:]))
		slots.MustUpdate(crypto.Keccak256(slot[:]), encoded)
	}
	return slots.Hash()
}

func answer(out *bufio.Writer, root common.Hash) {
	fmt.Fprintln(out, root.Hex())
	if err := out.Flush(); err != nil {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "balgen-state-root: %v\n", err)
	os.Exit(2)
}
