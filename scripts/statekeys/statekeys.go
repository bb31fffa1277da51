// Package statekeys is the rule that gives a group's contracts their
// workload slots, shared by balgen-state-build (the overlay into geth's
// database and the exported genesis alloc) and balgen-state-root (the
// fill's roots): one rule, so that every path to a group's genesis puts the
// same slots in the same storage tries. docs/state.md states it.
//
// scripts/install-tools.sh copies it into the pinned go-ethereum's source
// as the package github.com/ethereum/go-ethereum/balgen/statekeys, beside
// the commands that import it.
package statekeys

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rlp"
)

// WorkloadSlotKey is the j-th workload slot of the account at address: a
// hash of its own domain, so it is never a key a workload's code reads or
// writes (those are small numbers or other hashes' preimages' images).
func WorkloadSlotKey(seed uint64, address common.Address, j uint64) common.Hash {
	buffer := make([]byte, 0, 64)
	buffer = append(buffer, "balgen/state/workload-slot"...)
	buffer = binary.BigEndian.AppendUint64(buffer, seed)
	buffer = append(buffer, address[:]...)
	buffer = binary.BigEndian.AppendUint64(buffer, j)
	return crypto.Keccak256Hash(buffer)
}

// SlotValue is the value of a generated slot (a background slot or a
// workload slot) whose hashed key is hashed: 1 to 32 bytes, never zero (a
// zero value is no slot).
func SlotValue(hashed common.Hash) []byte {
	value := common.CopyBytes(hashed[:1+int(hashed[31]%32)])
	value[0] |= 1
	return value
}

// Slot is a storage slot as a storage trie holds it: the hash of its key
// and its value's RLP encoding.
type Slot struct {
	Hashed common.Hash
	Stored []byte
}

// WorkloadSlots is the n workload slots of the account at address, in the
// order of their hashed keys: the order a StackTrie takes them in.
func WorkloadSlots(seed uint64, address common.Address, n uint64) []Slot {
	slots := make([]Slot, n)
	for j := range slots {
		key := WorkloadSlotKey(seed, address, uint64(j))
		hashed := crypto.Keccak256Hash(key[:])
		stored, _ := rlp.EncodeToBytes(SlotValue(hashed))
		slots[j] = Slot{Hashed: hashed, Stored: stored}
	}
	slices.SortFunc(slots, func(a, b Slot) int { return bytes.Compare(a.Hashed[:], b.Hashed[:]) })
	return slots
}
